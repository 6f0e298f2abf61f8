// cli/sessions-command.ts: `warren sessions list|show <id>|history <id>` against a running server
// (GET /sessions, GET /sessions/{id}, GET /sessions/{id}/history). Human-readable tables by default,
// the server's JSON with --json. Exit codes: 0 success, 1 server or network error, 2 usage.
import { parseLine } from '../config/cli-args.ts';
import { requestJson, serverTarget, ServerError, table, type CliResult } from './server-client.ts';

const SESSIONS_HELP = `Usage:
  warren sessions list [--label key=value]... [--limit N] [--offset N]   sessions of the realm, newest activity first
  warren sessions show <session>                                          one session's detail
  warren sessions history <session> [--limit N] [--offset N]              its committed transcript, oldest first
Common: --url URL (default $WARREN_URL or http://127.0.0.1:8080), --json (the server's JSON as is).
$WARREN_API_KEY, when set, is sent as a bearer token.
`;

const usage = (msg: string): CliResult => ({ code: 2, stdout: '', stderr: `warren sessions: ${msg}\n${SESSIONS_HELP}` });

const isoSeconds = (secs: unknown): string =>
  typeof secs === 'number' ? new Date(secs * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z') : '';
const str = (v: unknown): string => (v === undefined || v === null ? '' : String(v));
const labelsText = (labels: unknown): string =>
  labels && typeof labels === 'object'
    ? Object.entries(labels as Record<string, string>)
        .map(([k, v]) => `${k}=${v}`)
        .join(',')
    : '';

function listText(body: Record<string, unknown>): string {
  const sessions = (Array.isArray(body.sessions) ? body.sessions : []) as Array<Record<string, unknown>>;
  if (sessions.length === 0) return 'no sessions\n';
  return table(
    ['SESSION', 'ACTIVE', 'MESSAGES', 'TOKENS', 'UPDATED', 'LABELS'],
    sessions.map((s) => [
      str(s.session_id),
      s.is_active === true ? 'yes' : 'no',
      str(s.message_count),
      str(s.total_tokens),
      isoSeconds(s.updated_at),
      labelsText(s.labels),
    ]),
  );
}

function showText(body: Record<string, unknown>): string {
  const rows: Array<[string, string]> = [
    ['session', str(body.session_id)],
    ['ref', str(body.session_ref)],
    ['created', str(body.created_at)],
    ['updated', str(body.updated_at)],
    ['messages', str(body.message_count)],
    ['tokens', str(body.total_tokens)],
  ];
  const labels = labelsText(body.labels);
  if (labels) rows.push(['labels', labels]);
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n') + '\n';
}

/** One history message as readable text: the role, then its text (tool calls and results summarised). */
function messageText(m: Record<string, unknown>): string {
  const role = str(m.role);
  if (typeof m.content === 'string') return `${role}: ${m.content}`;
  const blocks = (Array.isArray(m.blocks) ? m.blocks : []) as Array<Record<string, unknown>>;
  if (blocks.length > 0) {
    const parts = blocks.map((b) => {
      const data = (b.data ?? {}) as Record<string, unknown>;
      if (b.block_type === 'text' && typeof data.text === 'string') return data.text;
      if (typeof data.name === 'string') return `[${str(b.block_type)} ${data.name}]`;
      return `[${str(b.block_type)}]`;
    });
    return `${role === 'block_assistant' ? 'assistant' : role}: ${parts.join(' ')}`;
  }
  const rest = { ...m };
  delete rest.role;
  return `${role}: ${JSON.stringify(rest)}`;
}

function historyText(body: Record<string, unknown>): string {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as Array<Record<string, unknown>>;
  const offset = typeof body.offset === 'number' ? body.offset : 0;
  const lines = messages.map((m, i) => `[${offset + i}] ${messageText(m)}`);
  const total = str(body.message_count);
  const more = body.has_more === true ? ` (more: --offset ${offset + messages.length})` : '';
  return `${lines.join('\n')}${lines.length ? '\n' : ''}-- ${messages.length} of ${total} messages${more}\n`;
}

export async function runSessionsCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  let parsed;
  try {
    parsed = parseLine(argv, {
      url: { type: 'string' },
      json: { type: 'boolean', default: false },
      label: { type: 'string', multiple: true },
      limit: { type: 'string' },
      offset: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    });
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  const { values, positionals } = parsed;
  if (values.help) return { code: 0, stdout: SESSIONS_HELP, stderr: '' };
  const [sub, id, ...extra] = positionals;
  if (extra.length > 0) return usage(`unexpected argument '${extra[0]}'`);
  for (const name of ['limit', 'offset'] as const) {
    const v = values[name];
    if (v !== undefined && !/^\d{1,9}$/.test(v)) return usage(`--${name} must be a non-negative integer (got '${v}')`);
  }
  const target = serverTarget(values.url, env);
  const query = new URLSearchParams();
  if (values.limit !== undefined) query.set('limit', values.limit);
  if (values.offset !== undefined) query.set('offset', values.offset);
  let path: string;
  let render: (body: Record<string, unknown>) => string;
  switch (sub) {
    case 'list':
      if (id !== undefined) return usage(`unexpected argument '${id}'`);
      for (const label of values.label ?? []) {
        if (!label.includes('=')) return usage(`--label must be key=value (got '${label}')`);
        query.append('label', label);
      }
      path = '/sessions';
      render = listText;
      break;
    case 'show':
    case 'history':
      if (id === undefined) return usage(`${sub} needs a session id`);
      path = `/sessions/${encodeURIComponent(id)}${sub === 'history' ? '/history' : ''}`;
      render = sub === 'show' ? showText : historyText;
      break;
    case undefined:
      return usage('missing subcommand: list, show or history');
    default:
      return usage(`unknown subcommand '${sub}'`);
  }
  const qs = query.toString();
  try {
    const { body } = await requestJson(target, 'GET', qs ? `${path}?${qs}` : path);
    return { code: 0, stdout: values.json ? `${JSON.stringify(body, null, 2)}\n` : render(body), stderr: '' };
  } catch (err) {
    if (err instanceof ServerError) return { code: 1, stdout: '', stderr: `warren sessions: ${err.message}\n` };
    throw err;
  }
}
