// cli/doctor-checks.ts: the checks of `warren doctor` about this machine: the Node version against
// package.json's engines, the native modules (lmdb, better-sqlite3, uWebSockets.js), the state root
// (exists or can be made, writable, its mode) and its free space, and the listening port. Each returns one
// CheckResult; cli/doctor-realm.ts has the realm's checks, cli/doctor-command.ts runs them all.
import { mkdir, readFile, rmdir, stat, statfs, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { packageFile } from '../contracts/package-root.ts';

type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of the report. */
export interface CheckResult {
  name: string;
  status: CheckStatus;
  detail: string;
}

const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;
const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

/** Compares dotted versions: negative when a < b. */
function compareVersions(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Node's version against package.json `engines.node` (a `>=x.y.z` range). */
export async function checkNode(version: string = process.versions.node): Promise<CheckResult> {
  const name = 'node';
  let range: unknown;
  try {
    range = (JSON.parse(await readFile(packageFile('package.json'), 'utf8')) as { engines?: { node?: unknown } }).engines?.node;
  } catch (err) {
    return { name, status: 'warn', detail: `v${version}; package.json unreadable: ${messageOf(err)}` };
  }
  const min = typeof range === 'string' ? /^>=\s*v?(\d+)\.(\d+)\.(\d+)$/.exec(range.trim()) : null;
  if (!min) return { name, status: 'warn', detail: `v${version}; engines.node ${JSON.stringify(range)} is not a '>=x.y.z' range` };
  const have = version.split('.').map(Number);
  const need = min.slice(1).map(Number);
  if (compareVersions(have, need) < 0) {
    return { name, status: 'fail', detail: `v${version} is older than package.json engines.node ${String(range)}` };
  }
  return { name, status: 'ok', detail: `v${version} (engines.node ${String(range)})` };
}

/**
 * The native modules, each loaded for real. `needed` names the ones the realm's backend cannot do without
 * (a failure there is FAIL; elsewhere a warning). `uwsProbe` is http/create-server.ts's check (main.ts passes it).
 */
export async function checkNativeModules(
  needed: ReadonlySet<'lmdb' | 'better-sqlite3'>,
  uwsProbe: () => string | undefined,
): Promise<CheckResult[]> {
  const out: CheckResult[] = [];
  const failed = (mod: 'lmdb' | 'better-sqlite3', err: unknown, use: string): CheckResult => ({
    name: mod,
    status: needed.has(mod) ? 'fail' : 'warn',
    detail: `does not load (${use}): ${messageOf(err)}`,
  });
  try {
    const lmdb = await import('lmdb');
    if (typeof lmdb.open !== 'function') throw new Error('lmdb has no open()');
    out.push({ name: 'lmdb', status: 'ok', detail: 'loads (the lmdb backend, the default)' });
  } catch (err) {
    out.push(failed('lmdb', err, 'the lmdb backend, the default'));
  }
  try {
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(':memory:');
    const row = db.prepare('select sqlite_version() as v').get() as { v: string };
    db.close();
    out.push({ name: 'better-sqlite3', status: 'ok', detail: `loads, SQLite ${row.v} (the sqlite backend)` });
  } catch (err) {
    out.push(failed('better-sqlite3', err, 'the sqlite backend'));
  }
  const uws = uwsProbe();
  out.push(
    uws === undefined
      ? { name: 'uWebSockets.js', status: 'ok', detail: 'loads (--http-transport uws)' }
      : { name: 'uWebSockets.js', status: 'warn', detail: `${uws}; only --http-transport uws needs it (the default is node:http)` },
  );
  return out;
}

/** A path that is not there: absent, or below a file. */
const MISSING = new Set(['ENOENT', 'ENOTDIR']);

/** The deepest existing ancestor of `target` (or `target`), with the first missing directory below it. */
async function nearestExisting(target: string): Promise<{ existing: string; child?: string }> {
  let child: string | undefined;
  let dir = path.resolve(target);
  for (;;) {
    try {
      await stat(dir);
      return { existing: dir, child };
    } catch (err) {
      const parent = path.dirname(dir);
      if (!MISSING.has(codeOf(err) ?? '') || parent === dir) return { existing: dir, child };
      child = dir;
      dir = parent;
    }
  }
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/** Writes and removes a probe file in `dir` (a real write: root passes every access() check). */
async function probeWrite(dir: string): Promise<void> {
  const probe = path.join(dir, `.warren-doctor-${process.pid}`);
  await writeFile(probe, 'probe\n');
  await unlink(probe);
}

/** The state root: an existing writable directory, or one the first start can create. */
export async function checkStateRoot(root: string): Promise<CheckResult> {
  const name = 'state root';
  const fail = (detail: string): CheckResult => ({ name, status: 'fail', detail: `${root}: ${detail}` });
  let info;
  try {
    info = await stat(root);
  } catch (err) {
    if (!MISSING.has(codeOf(err) ?? '')) return fail(messageOf(err));
  }
  if (info) {
    if (!info.isDirectory()) return fail('not a directory');
    try {
      await probeWrite(root);
    } catch (err) {
      return fail(`not writable (${codeOf(err) ?? messageOf(err)})`);
    }
    const owner = `mode ${octal(info.mode)}, owner uid ${info.uid}`;
    if (info.mode & 0o002) return { name, status: 'warn', detail: `${root} (${owner}): every user may write in it` };
    return { name, status: 'ok', detail: `${root} (${owner}, writable)` };
  }
  const { existing, child } = await nearestExisting(root);
  const base = await stat(existing).catch(() => undefined);
  if (!base?.isDirectory()) return fail(`${existing} is not a directory`);
  if (child) {
    // Make and remove the first missing directory: the error a start would meet, if any.
    try {
      await mkdir(child);
      await rmdir(child);
    } catch (err) {
      return fail(`cannot be created in ${existing} (${codeOf(err) ?? messageOf(err)})`);
    }
  }
  return { name, status: 'ok', detail: `${root} does not exist yet; the first start creates it (in ${existing}, writable)` };
}

const MIB = 1024 * 1024;
/** Below this the realm store cannot be trusted to commit (FAIL); below WARN_BYTES a warning. */
const FAIL_BYTES = 100 * MIB;
const WARN_BYTES = 1024 * MIB;

const size = (bytes: number): string =>
  bytes >= 1024 * MIB ? `${(bytes / (1024 * MIB)).toFixed(1)} GiB` : `${Math.floor(bytes / MIB)} MiB`;

/** Free space on the file system holding the state root (or its nearest existing ancestor). */
export async function checkFreeSpace(root: string): Promise<CheckResult> {
  const name = 'disk space';
  const { existing } = await nearestExisting(root);
  try {
    const fs = await statfs(existing);
    const free = fs.bavail * fs.bsize;
    const detail = `${size(free)} free of ${size(fs.blocks * fs.bsize)} at ${existing}`;
    if (free < FAIL_BYTES) return { name, status: 'fail', detail: `${detail} (under ${size(FAIL_BYTES)})` };
    if (free < WARN_BYTES) return { name, status: 'warn', detail: `${detail} (under ${size(WARN_BYTES)})` };
    return { name, status: 'ok', detail };
  } catch (err) {
    return { name, status: 'warn', detail: `cannot read free space at ${existing}: ${messageOf(err)}` };
  }
}

function tryListen(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', (err) => resolve(codeOf(err) ?? messageOf(err)));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}

/** Whether the listening address is free; a port held by a server that answers /health is a warning. */
export async function checkPort(host: string, port: number): Promise<CheckResult> {
  const name = 'port';
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (port === 0) return { name, status: 'ok', detail: `${where}: port 0 picks a free port at start` };
  const problem = await tryListen(host, port);
  if (problem === undefined) return { name, status: 'ok', detail: `${where} is free` };
  if (problem === 'EADDRINUSE') {
    const health = await fetch(`http://${where}/health`, { signal: AbortSignal.timeout(2_000) })
      .then(async (res) => (res.ok ? (await res.text()).trim() : ''))
      .catch(() => '');
    if (health === 'ok') {
      return { name, status: 'warn', detail: `${where} is in use by a running server that answers /health (a Warren already running?)` };
    }
    return { name, status: 'fail', detail: `${where} is in use by another program (pass --port or set [rest] port)` };
  }
  const why: Record<string, string> = {
    EACCES: 'permission denied (a port below 1024 needs privileges)',
    EADDRNOTAVAIL: 'the address is not one of this machine',
    ENOTFOUND: 'the host name does not resolve',
  };
  return { name, status: 'fail', detail: `cannot listen on ${where}: ${why[problem] ?? problem}` };
}
