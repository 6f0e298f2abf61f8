// cli/replay-command.ts: `warren replay|fork|rerun|export|import` against a running Warren (default URL:
// $WARREN_URL or http://127.0.0.1:8080). docs/replay.md describes the routes they call.
// Exit codes: 0 success (replay: identical), 1 error, 2 usage, 3 replay diverged or failed.
import { readFile, writeFile } from 'node:fs/promises';
import { CliArgsError, parseLine, wantsHelp } from '../config/cli-args.ts';

const REPLAY_HELP = `Usage:
  warren replay <session> [--turns N] [--system-prompt TEXT] [--async]   replay from the recording (exit 3 when it diverges)
  warren fork <session> [--at-turn N | --at-seq S]                        a new session with the history up to that point
  warren rerun <session> --model M [--provider P] [--turns N]             the user inputs against another model, per-turn diff
  warren export <session> [-o FILE]                                       one versioned JSON Lines file (stdout by default)
  warren import <FILE> [--new-id]                                         an exported file into this realm
Common: --url URL (default $WARREN_URL or http://127.0.0.1:8080)
`;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const usage = (msg: string): CliResult => ({ code: 2, stdout: '', stderr: `warren: ${msg}\n${REPLAY_HELP}` });

const REPLAY_OPTIONS = {
  url: { type: 'string' },
  turns: { type: 'string' },
  'system-prompt': { type: 'string' },
  'at-turn': { type: 'string' },
  'at-seq': { type: 'string' },
  model: { type: 'string' },
  provider: { type: 'string' },
  o: { type: 'string', short: 'o' },
  async: { type: 'boolean' },
  'new-id': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function int(v: string | undefined, name: string): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer`);
  return n;
}

async function request(
  url: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
  });
  return { status: res.status, text: await res.text() };
}

/** Runs one replay command; `argv` starts with the command name. */
export async function runReplayCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  const [command, ...rest] = argv;
  if (wantsHelp(rest)) return { code: 0, stdout: REPLAY_HELP, stderr: '' };
  let values, pos;
  try {
    ({ values, positionals: pos } = parseLine(rest, REPLAY_OPTIONS));
  } catch (err) {
    if (err instanceof CliArgsError) return usage(err.message);
    throw err;
  }
  const url = (values.url ?? (env.WARREN_URL || 'http://127.0.0.1:8080')).replace(/\/$/, '');
  const target = pos[0];
  if (!target || pos.length > 1) return usage(`${command} takes exactly one ${command === 'import' ? 'file' : 'session id'}`);
  const sid = encodeURIComponent(target);
  let res: { status: number; text: string };
  try {
    if (command === 'replay') {
      const body: Record<string, unknown> = {};
      const turns = int(values.turns, '--turns');
      if (turns !== undefined) body.turns = turns;
      const sp = values['system-prompt'];
      if (typeof sp === 'string') body.system_prompt = sp;
      res = await request(url, 'POST', `/sessions/${sid}/replay`, JSON.stringify(body), values.async ? { prefer: 'respond-async' } : {});
      if (res.status === 200) {
        const report = JSON.parse(res.text) as { status: string };
        return { code: report.status === 'identical' ? 0 : 3, stdout: JSON.stringify(report, null, 2) + '\n', stderr: '' };
      }
    } else if (command === 'fork') {
      const body: Record<string, unknown> = {};
      const at = int(values['at-turn'], '--at-turn');
      const seq = int(values['at-seq'], '--at-seq');
      if (at !== undefined) body.at_turn = at;
      if (seq !== undefined) body.at_seq = seq;
      res = await request(url, 'POST', `/sessions/${sid}/fork`, JSON.stringify(body));
    } else if (command === 'rerun') {
      const model = values.model;
      if (typeof model !== 'string') return usage('rerun needs --model');
      const body: Record<string, unknown> = { model };
      const provider = values.provider;
      if (typeof provider === 'string') body.provider = provider;
      const turns = int(values.turns, '--turns');
      if (turns !== undefined) body.turns = turns;
      res = await request(url, 'POST', `/sessions/${sid}/rerun`, JSON.stringify(body));
    } else if (command === 'export') {
      res = await request(url, 'GET', `/sessions/${sid}/export`);
      const out = values.o;
      if (res.status === 200 && typeof out === 'string') {
        await writeFile(out, res.text);
        return { code: 0, stdout: '', stderr: `wrote ${out}\n` };
      }
      if (res.status === 200) return { code: 0, stdout: res.text, stderr: '' };
    } else if (command === 'import') {
      const text = await readFile(target, 'utf8');
      res = await request(url, 'POST', `/sessions/import${values['new-id'] ? '?new_id=true' : ''}`, text, {
        'content-type': 'application/x-ndjson',
      });
    } else return usage(`unknown command ${command}`);
  } catch (err) {
    return { code: 1, stdout: '', stderr: `warren ${command}: ${err instanceof Error ? err.message : String(err)}\n` };
  }
  if (res.status === 200 || res.status === 202) return { code: 0, stdout: prettyJson(res.text), stderr: '' };
  return { code: 1, stdout: '', stderr: `warren ${command}: HTTP ${res.status}: ${res.text}\n` };
}

function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2) + '\n';
  } catch {
    return text;
  }
}
