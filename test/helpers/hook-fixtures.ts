// test/helpers/hook-fixtures.ts: real hooks for the hook tests: small node scripts run as child
// processes (payload on stdin, answer on stdout), and a loopback HTTP hook server whose answers can be
// held until the test releases them.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { deferred, type Deferred } from './gates.ts';

const SCRIPTS: Record<string, string> = {
  // Answers the JSON in HOOK_ANSWER (default {}), after appending the payload to HOOK_LOG if set.
  'answer.mjs': `
import { appendFileSync } from 'node:fs';
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => { input += c; });
process.stdin.on('end', () => {
  if (process.env.HOOK_LOG) appendFileSync(process.env.HOOK_LOG, input + '\\n');
  process.stdout.write(process.env.HOOK_ANSWER ?? '{}');
});`,
  // Never answers (killed at its timeout).
  'hang.mjs': `process.stdin.resume(); setInterval(() => {}, 1000);`,
  // Fails with exit code 3.
  'fail.mjs': `process.stderr.write('boom'); process.exit(3);`,
};

/** Writes the hook scripts into `dir`; returns a command runtime for one of them. */
export async function writeHookScripts(
  dir: string,
): Promise<(script: keyof typeof SCRIPTS | string, env?: Record<string, string>) => Record<string, unknown>> {
  for (const [name, text] of Object.entries(SCRIPTS)) await writeFile(join(dir, name), text);
  return (script, env = {}) => ({ type: 'command', command: process.execPath, args: [join(dir, script)], env });
}

export interface HookServer {
  url: string;
  /** Payloads received, in order. */
  payloads: Array<Record<string, unknown>>;
  /** The answer for the next requests (JSON text). */
  answer: string;
  /** When set, requests wait for this gate before answering. */
  hold: Deferred | null;
  /** Resolves at the n-th request. */
  received(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function startHookServer(): Promise<HookServer> {
  const waiters: Array<{ n: number; d: Deferred }> = [];
  const state: HookServer = {
    url: '',
    payloads: [],
    answer: '{}',
    hold: null,
    received: (n) => {
      if (state.payloads.length >= n) return Promise.resolve();
      const d = deferred();
      waiters.push({ n, d });
      return d.promise;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((req, res: ServerResponse) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      state.payloads.push({ ...(JSON.parse(body) as Record<string, unknown>), _headers: req.headers });
      for (const w of waiters.filter((x) => state.payloads.length >= x.n)) w.d.resolve();
      const answer = state.answer;
      const send = () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
      if (state.hold) state.hold.promise.then(send).catch(() => res.destroy());
      else send();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return state;
}

export const DENY = JSON.stringify({
  decision: { decision: 'deny', hook_id: 'x', reason_code: 'policy_violation', message: 'not today', payload: { rule: 7 } },
});
export const ALLOW = JSON.stringify({ decision: { decision: 'allow' } });
