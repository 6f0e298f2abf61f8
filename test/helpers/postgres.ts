// test/helpers/postgres.ts: one real PostgreSQL server per test process (test/helpers/embedded-postgres.ts),
// started on first use and stopped when the process's tests end. When it cannot start here (no binaries for
// this platform, no way to run as a non-root user...), `testPostgres()` answers the reason, and the postgres
// tests skip with it instead of failing. WARREN_TEST_POSTGRES=off skips them on purpose.
import { after } from 'node:test';
import { startEmbeddedPostgres, type TestPostgres } from './embedded-postgres.ts';

export type { TestPostgres };
export type TestPostgresResult = { ok: true; server: TestPostgres } | { ok: false; reason: string };

let started: Promise<TestPostgresResult> | undefined;

async function start(): Promise<TestPostgresResult> {
  const result = await startEmbeddedPostgres();
  if (!result.ok) return result;
  after(() => result.server.stop());
  return result;
}

/** The process's test PostgreSQL (started on first call), or why there is none. */
export function testPostgres(): Promise<TestPostgresResult> {
  started ??= start();
  return started;
}
