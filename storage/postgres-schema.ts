// storage/postgres-schema.ts: the postgres realm database's schema as numbered migrations, and the code that
// brings a database up to date when a node opens it. storage/postgres-store.ts is the only caller.
// The tables mirror the sqlite backend's (storage/sqlite-schema.ts): JSON text values, listing columns copied
// out of the session record, a label index of non-archived sessions.
import type { Pool } from 'pg';
import { ServiceError } from '../contracts/errors.ts';

/** One schema step. Versions start at 1, are contiguous, and a released step is never edited: add a new one. */
interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

const PG_MIGRATIONS: readonly PgMigration[] = [
  {
    version: 1,
    name: 'sessions, rows, ledger, records, session labels',
    sql: `
      CREATE TABLE warren_sessions (
        session_id    TEXT    NOT NULL PRIMARY KEY,
        created_at_ms BIGINT  NOT NULL,
        archived      BOOLEAN NOT NULL,
        record        TEXT    NOT NULL
      );
      CREATE INDEX warren_sessions_by_created ON warren_sessions (created_at_ms, session_id);
      CREATE INDEX warren_active_sessions_by_created ON warren_sessions (created_at_ms, session_id) WHERE NOT archived;
      CREATE TABLE warren_rows (
        session_id TEXT    NOT NULL,
        idx        INTEGER NOT NULL,
        message    TEXT    NOT NULL,
        PRIMARY KEY (session_id, idx)
      );
      CREATE TABLE warren_ledger (
        session_id TEXT   NOT NULL,
        seq        BIGINT NOT NULL,
        kind       TEXT   NOT NULL,
        entry      TEXT   NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE warren_records (
        ns    TEXT NOT NULL,
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (ns, key)
      );
      CREATE TABLE warren_session_labels (
        label         TEXT   NOT NULL,
        created_at_ms BIGINT NOT NULL,
        session_id    TEXT   NOT NULL,
        PRIMARY KEY (label, created_at_ms, session_id)
      );
      CREATE INDEX warren_session_labels_by_session ON warren_session_labels (session_id);
    `,
  },
  {
    version: 2,
    name: 'cluster nodes',
    // One row per Warren node sharing the database: where peers forward requests, and its last heartbeat.
    sql: `
      CREATE TABLE warren_nodes (
        node_id      TEXT   NOT NULL PRIMARY KEY,
        url          TEXT   NOT NULL,
        started_ms   BIGINT NOT NULL,
        heartbeat_ms BIGINT NOT NULL,
        info         TEXT   NOT NULL
      );
    `,
  },
];

/** The newest schema version this build knows. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.at(-1)!.version;

/** The advisory lock every node takes while it migrates (an arbitrary constant: "warren" in ASCII). */
const MIGRATION_LOCK = 0x77617272656e;

/**
 * Applies the migrations the database lacks, each in its own transaction and recorded in
 * `warren_schema_migrations`, under a session-level pg_advisory_lock: nodes starting at the same time
 * serialise on it, and the later ones find nothing to do.
 * @throws ServiceError SESSION_STORE_ERROR when the database was written by a newer schema than this build knows.
 */
export async function migratePostgres(pool: Pool, now: () => number = Date.now): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS warren_schema_migrations (
        version       INTEGER NOT NULL PRIMARY KEY,
        name          TEXT    NOT NULL,
        applied_at_ms BIGINT  NOT NULL
      )`);
      const { rows } = await client.query<{ v: number | null }>('SELECT MAX(version) AS v FROM warren_schema_migrations');
      const current = rows[0]?.v ?? 0;
      if (current > PG_SCHEMA_VERSION) {
        throw new ServiceError(
          'SESSION_STORE_ERROR',
          `postgres realm schema version ${current} is newer than this build supports (${PG_SCHEMA_VERSION})`,
          {
            schema_version: current,
            supported: PG_SCHEMA_VERSION,
          },
        );
      }
      for (const m of PG_MIGRATIONS) {
        if (m.version <= current) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO warren_schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            now(),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw err;
        }
      }
      return PG_SCHEMA_VERSION;
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
