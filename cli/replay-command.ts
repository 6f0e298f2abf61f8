// cli/replay-command.ts: `warren replay|fork|rerun|export|import` against a running Warren (default URL:
// $WARREN_URL or http://127.0.0.1:8080). docs/replay.md describes the routes they call.
// Exit codes: 0 success (replay: identical), 1 error, 2 usage, 3 replay diverged or failed.
import { readFile, writeFile } from 'node:fs/promises';

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

function parse(argv: readonly string[]): { pos: string[]; flags: Map<string, string | true> } | string {
  const pos: string[] = [];
  const flags = new Map<string, string | true>();
  const valued = new Set(['--url', '--turns', '--system-prompt', '--at-turn', '--at-seq', '--model', '--provider', '-o']);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (valued.has(a)) {
      const v = argv[++i];
      if (v === undefined) return `${a} needs a value`;
      flags.set(a, v);
    } else if (a.startsWith('-')) flags.set(a, true);
    else pos.push(a);
  }
  return { pos, flags };
}

function int(v: string | true | undefined, name: string): number | undefined {
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
  const p = parse(rest);
  if (typeof p === 'string') return usage(p);
  const url = String(p.flags.get('--url') ?? (env.WARREN_URL || 'http://127.0.0.1:8080')).replace(/\/$/, '');
  const target = p.pos[0];
  if (!target || p.pos.length > 1) return usage(`${command} takes exactly one ${command === 'import' ? 'file' : 'session id'}`);
  const sid = encodeURIComponent(target);
  let res: { status: number; text: string };
  try {
    if (command === 'replay') {
      const body: Record<string, unknown> = {};
      const turns = int(p.flags.get('--turns'), '--turns');
      if (turns !== undefined) body.turns = turns;
      const sp = p.flags.get('--system-prompt');
      if (typeof sp === 'string') body.system_prompt = sp;
      res = await request(
        url,
        'POST',
        `/sessions/${sid}/replay`,
        JSON.stringify(body),
        p.flags.has('--async') ? { prefer: 'respond-async' } : {},
      );
      if (res.status === 200) {
        const report = JSON.parse(res.text) as { status: string };
        return { code: report.status === 'identical' ? 0 : 3, stdout: JSON.stringify(report, null, 2) + '\n', stderr: '' };
      }
    } else if (command === 'fork') {
      const body: Record<string, unknown> = {};
      const at = int(p.flags.get('--at-turn'), '--at-turn');
      const seq = int(p.flags.get('--at-seq'), '--at-seq');
      if (at !== undefined) body.at_turn = at;
      if (seq !== undefined) body.at_seq = seq;
      res = await request(url, 'POST', `/sessions/${sid}/fork`, JSON.stringify(body));
    } else if (command === 'rerun') {
      const model = p.flags.get('--model');
      if (typeof model !== 'string') return usage('rerun needs --model');
      const body: Record<string, unknown> = { model };
      const provider = p.flags.get('--provider');
      if (typeof provider === 'string') body.provider = provider;
      const turns = int(p.flags.get('--turns'), '--turns');
      if (turns !== undefined) body.turns = turns;
      res = await request(url, 'POST', `/sessions/${sid}/rerun`, JSON.stringify(body));
    } else if (command === 'export') {
      res = await request(url, 'GET', `/sessions/${sid}/export`);
      const out = p.flags.get('-o');
      if (res.status === 200 && typeof out === 'string') {
        await writeFile(out, res.text);
        return { code: 0, stdout: '', stderr: `wrote ${out}\n` };
      }
      if (res.status === 200) return { code: 0, stdout: res.text, stderr: '' };
    } else if (command === 'import') {
      const text = await readFile(target, 'utf8');
      res = await request(url, 'POST', `/sessions/import${p.flags.has('--new-id') ? '?new_id=true' : ''}`, text, {
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
