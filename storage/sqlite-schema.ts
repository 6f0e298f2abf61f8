// storage/sqlite-schema.ts: the sqlite realm file's schema as numbered migrations, and the code that brings
// a database up to date on open. storage/sqlite-store.ts is the only caller.
import type { Database } from 'better-sqlite3';
import { ServiceError } from '../contracts/errors.ts';

/** One schema step. Versions start at 1, are contiguous, and a released step is never edited: add a new one. */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Every value column holds JSON text, so the file reads with the plain `sqlite3` CLI (and `json_extract`).
 * Session listing columns (created_at_ms, archived) copy the record's fields so that the indexes can order
 * and filter without decoding; the record JSON stays the one source for readers.
 */
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sessions, rows, ledger, records',
    sql: `
      CREATE TABLE sessions (
        session_id    TEXT    NOT NULL PRIMARY KEY,
        created_at_ms INTEGER NOT NULL,
        archived      INTEGER NOT NULL,
        record        TEXT    NOT NULL
      );
      CREATE INDEX sessions_by_created ON sessions (created_at_ms, session_id);
      CREATE INDEX active_sessions_by_created ON sessions (created_at_ms, session_id) WHERE archived = 0;
      CREATE TABLE rows (
        session_id TEXT    NOT NULL,
        idx        INTEGER NOT NULL,
        message    TEXT    NOT NULL,
        PRIMARY KEY (session_id, idx)
      ) WITHOUT ROWID;
      CREATE TABLE ledger (
        session_id TEXT    NOT NULL,
        seq        INTEGER NOT NULL,
        kind       TEXT    NOT NULL,
        entry      TEXT    NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) WITHOUT ROWID;
      CREATE TABLE records (
        ns    TEXT NOT NULL,
        key   TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (ns, key)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 2,
    name: 'session label index',
    // One row per label of each non-archived session, keyed by the label as the JSON text [key, value];
    // sessions written before this version are indexed from their record.
    sql: `
      CREATE TABLE session_labels (
        label         TEXT    NOT NULL,
        created_at_ms INTEGER NOT NULL,
        session_id    TEXT    NOT NULL,
        PRIMARY KEY (label, created_at_ms, session_id)
      ) WITHOUT ROWID;
      CREATE INDEX session_labels_by_session ON session_labels (session_id);
      INSERT OR IGNORE INTO session_labels (label, created_at_ms, session_id)
        SELECT json_array(j.key, j.value), s.created_at_ms, s.session_id
        FROM sessions s, json_each(json_extract(s.record, '$.labels')) j
        WHERE s.archived = 0;
    `,
  },
];

/** The newest schema version this build knows. */
export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/**
 * Applies the migrations `db` lacks, each recorded in `schema_migrations`, all in one write transaction:
 * several processes opening a fresh realm at once serialise on it, and the later ones find nothing to do.
 * @throws ServiceError SESSION_STORE_ERROR when the file was written by a newer schema than this build knows.
 */
export function migrate(db: Database, now: () => number = Date.now): number {
  const run = db.transaction((): number => {
    db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version       INTEGER NOT NULL PRIMARY KEY,
      name          TEXT    NOT NULL,
      applied_at_ms INTEGER NOT NULL
    )`);
    const current = (db.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() as number | null) ?? 0;
    if (current > SCHEMA_VERSION) {
      throw new ServiceError(
        'SESSION_STORE_ERROR',
        `sqlite realm schema version ${current} is newer than this build supports (${SCHEMA_VERSION})`,
        {
          schema_version: current,
          supported: SCHEMA_VERSION,
        },
      );
    }
    const record = db.prepare('INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)');
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      db.exec(m.sql);
      record.run(m.version, m.name, now());
    }
    return SCHEMA_VERSION;
  });
  // IMMEDIATE takes the write lock up front, so two first opens never both read "version 0".
  return run.immediate();
}
