// cli/doctor-command.ts: `warren doctor`, a check of this machine and a realm's setup before (or while) a
// server runs: Node, the native modules, the state root and its free space, the realm's files, the
// providers a turn could use, PostgreSQL when used, and the port. One line per check (ok / warn / FAIL and
// why), or --json; exit 1 when any check fails, 2 on a usage error. It creates no realm and changes no file.
import { realmIdProblem } from '../config/flags.ts';
import { realmsRoot } from '../config/realm.ts';
import { checkFreeSpace, checkNativeModules, checkNode, checkPort, checkStateRoot, type CheckResult } from './doctor-checks.ts';
import { checkPostgres, checkProviders, checkRealm } from './doctor-realm.ts';
import type { CliResult } from './server-client.ts';
import { CliArgsError, parseLine } from '../config/cli-args.ts';

/** The realm `npm start` serves (package.json scripts.start passes `--default-realm local`). */
const NPM_START_REALM = 'local';

const DOCTOR_HELP = `Usage: warren doctor [--realm <id>] [--state-root <path>] [--host <addr>] [--port <n>] [--json]

Checks this machine and a realm's setup, one line each (ok, warn or FAIL with the reason):
  node            the Node version against package.json engines
  lmdb, better-sqlite3, uWebSockets.js   the native modules load
  state root      exists (or can be created), is a writable directory; its mode
  disk space      free space where the realms live
  realm           the realm's manifest and config.toml (a realm not created yet is fine)
  providers       which providers have a key, base URL or auth binding; what a turn naming no model runs
  postgres        reachable, when the realm is postgres or WARREN_DATABASE_URL is set
  port            the listening address is free

Options:
  --realm <id>          The realm to check (default: ${NPM_START_REALM}, the realm 'npm start' serves).
  --state-root <path>   Directory holding realms (default: as for 'warren serve').
  --host <addr>         Listen address to check (default: the realm's [rest] host, else 127.0.0.1).
  --port <n>            Port to check (default: the realm's [rest] port, else 8080).
  --json                {ok, realm, state_root, checks: [{name, status, detail}]} on stdout.

Exit status: 0 when nothing failed (warnings allowed), 1 when a check failed, 2 on a usage error.
`;

const usage = (msg: string): CliResult => ({ code: 2, stdout: '', stderr: `warren doctor: ${msg}\n${DOCTOR_HELP}` });

const LABEL: Record<CheckResult['status'], string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** The report as text: a header, one line per check, a summary. */
function reportText(realm: string, root: string, checks: readonly CheckResult[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  const lines = checks.map((c) => `${LABEL[c.status]}  ${c.name.padEnd(width)}  ${c.detail}`);
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const summary =
    failed > 0
      ? `${failed} failed, ${warned} warning${warned === 1 ? '' : 's'}`
      : warned > 0
        ? `no failures, ${warned} warning${warned === 1 ? '' : 's'}`
        : 'all checks passed';
  return `warren doctor: realm ${realm} under ${root}\n${lines.join('\n')}\n${summary}\n`;
}

const DOCTOR_OPTIONS = {
  realm: { type: 'string' },
  'state-root': { type: 'string' },
  host: { type: 'string' },
  port: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

export interface DoctorDeps {
  /** Why the uWebSockets.js binding cannot load here, or undefined (http/create-server.ts; main.ts passes it). */
  uwsProbe: () => string | undefined;
}

/** Runs `warren doctor <args>`. */
export async function runDoctorCli(args: string[], env: NodeJS.ProcessEnv, deps: DoctorDeps): Promise<CliResult> {
  let values;
  try {
    ({ values } = parseLine(args, DOCTOR_OPTIONS, { positionals: false }));
  } catch (err) {
    if (!(err instanceof CliArgsError)) throw err;
    return usage(err.message);
  }
  if (values.help) return { code: 0, stdout: DOCTOR_HELP, stderr: '' };
  const realm = values.realm ?? NPM_START_REALM;
  const problem = realmIdProblem(realm);
  if (problem) return usage(`--realm '${realm}' is invalid: ${problem}`);
  let port: number | undefined;
  if (values.port !== undefined) {
    if (!/^\d{1,5}$/.test(values.port) || Number(values.port) > 65535)
      return usage(`--port must be an integer from 0 to 65535 (got '${values.port}')`);
    port = Number(values.port);
  }
  const root = realmsRoot({ stateRoot: values['state-root'], env });

  const realmCheck = await checkRealm(root, realm);
  const { facts } = realmCheck;
  const backend = facts.backend ?? 'lmdb';
  const needed = new Set<'lmdb' | 'better-sqlite3'>(backend === 'lmdb' ? ['lmdb'] : backend === 'sqlite' ? ['better-sqlite3'] : []);
  const checks: CheckResult[] = [
    await checkNode(),
    ...(await checkNativeModules(needed, deps.uwsProbe)),
    await checkStateRoot(root),
    await checkFreeSpace(root),
    realmCheck.result,
    checkProviders(env, facts.config, realm),
    await checkPostgres(env, facts),
    await checkPort(values.host ?? facts.config.rest.host, port ?? facts.config.rest.port),
  ];
  const ok = checks.every((c) => c.status !== 'fail');
  const stdout = values.json ? `${JSON.stringify({ ok, realm, state_root: root, checks }, null, 2)}\n` : reportText(realm, root, checks);
  return { code: ok ? 0 : 1, stdout, stderr: '' };
}
