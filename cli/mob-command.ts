// cli/mob-command.ts: `warren mob <method> [params-json] [--url URL] [--principal NAME]`: one JSON-RPC
// call to a running Warren's POST /rpc (docs/comms-and-mobs.md "Mobs" lists the methods). Prints the result as JSON.
// Exit codes: 0 success, 1 error, 45 scope denied (-32025), 46 host unavailable (no answer, or 503),
// 47 stale cursor (-32023: an event cursor the ledger no longer retains, or beyond its head), 48 stale
// fence (-32024: `expected_revision` / `expected_generation` no longer matches).
import { CliArgsError, parseLine } from '../config/cli-args.ts';
import { ERROR_TABLE } from '../contracts/errors.ts';

const MOB_HELP = `Usage: warren mob <method> [params-json] [--url URL] [--principal NAME]

Calls one mob JSON-RPC method on a running Warren (default URL: $WARREN_URL or http://127.0.0.1:8080).
Examples:
  warren mob mob/list
  warren mob mob/create '{"mob_id":"team","definition":{"members":[{"agent_identity":"a"}]}}'
  warren mob toolkit/mob_events/query '{"filter":{"mob_id":"team"}}'

Fenced mutations take "expected_revision" (the mob's revision, from mob/get) and, for a member,
"expected_generation"; event queries take "after_cursor".
Exit codes: 0 success, 1 error, 45 scope denied, 46 host unavailable, 47 stale cursor, 48 stale fence.
`;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

const EXIT = { ok: 0, error: 1, scopeDenied: 45, hostUnavailable: 46, staleCursor: 47, staleFence: 48 } as const;

/** JSON-RPC error code → exit code (contracts/errors.ts: ScopeDenied, STALE_CURSOR, STALE_FENCE). */
const RPC_EXIT: Record<number, number> = {
  [ERROR_TABLE.ScopeDenied.rpc]: EXIT.scopeDenied,
  [ERROR_TABLE.STALE_CURSOR.rpc]: EXIT.staleCursor,
  [ERROR_TABLE.STALE_FENCE.rpc]: EXIT.staleFence,
};

function parse(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
): { method: string; params: unknown; url: string; principal?: string } | string {
  let values, rest;
  try {
    ({ values, positionals: rest } = parseLine(argv, { url: { type: 'string' }, principal: { type: 'string' } }));
  } catch (err) {
    if (err instanceof CliArgsError) return err.message;
    throw err;
  }
  const url = values.url ?? (env.WARREN_URL || 'http://127.0.0.1:8080');
  const principal = values.principal;
  if (rest.length < 1 || rest.length > 2) return 'expected <method> [params-json]';
  let params: unknown = {};
  if (rest[1] !== undefined) {
    try {
      params = JSON.parse(rest[1]);
    } catch {
      return 'params must be JSON';
    }
  }
  return { method: rest[0], params, url: url.replace(/\/+$/, ''), ...(principal ? { principal } : {}) };
}

export async function runMobCli(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<CliResult> {
  if (argv[0] === '--help' || argv[0] === '-h' || argv.length === 0)
    return { code: argv.length === 0 ? EXIT.error : EXIT.ok, stdout: argv.length ? MOB_HELP : '', stderr: argv.length ? '' : MOB_HELP };
  const args = parse(argv, env);
  if (typeof args === 'string') return { code: EXIT.error, stdout: '', stderr: `warren mob: ${args}\n` };
  let res: Response;
  try {
    res = await fetch(`${args.url}/rpc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(args.principal ? { 'x-warren-principal': args.principal } : {}) },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: args.method, params: args.params }),
    });
  } catch (err) {
    return {
      code: EXIT.hostUnavailable,
      stdout: '',
      stderr: `warren mob: host unavailable at ${args.url}: ${err instanceof Error ? err.message : String(err)}\n`,
    };
  }
  if (res.status === 503) return { code: EXIT.hostUnavailable, stdout: '', stderr: `warren mob: host unavailable (503)\n` };
  const body = (await res.json().catch(() => null)) as {
    result?: unknown;
    error?: { code: number; message: string; data?: unknown };
  } | null;
  if (!body) return { code: EXIT.error, stdout: '', stderr: `warren mob: unexpected reply (HTTP ${res.status})\n` };
  if (body.error) {
    const code = RPC_EXIT[body.error.code] ?? EXIT.error;
    return {
      code,
      stdout: '',
      stderr: `warren mob: ${body.error.message} (${body.error.code})${body.error.data ? ` ${JSON.stringify(body.error.data)}` : ''}\n`,
    };
  }
  return { code: EXIT.ok, stdout: `${JSON.stringify(body.result, null, 2)}\n`, stderr: '' };
}
