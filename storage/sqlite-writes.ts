// storage/sqlite-writes.ts: the write side of the sqlite backend: the writing connection's settings and the
// group transaction. It runs in the writer thread (storage/sqlite-writer.ts), so fsync never blocks the
// server's event loop; storage/sqlite-store.ts serialises the ops and posts them there.
import type { Database, Statement } from 'better-sqlite3';
import { betterSqlite3 } from './better-sqlite3.ts';
import { isServiceError, type ErrorCode } from '../contracts/errors.ts';
import { checkConditions, planBatch } from './prepare-ops.ts';
import type { StoreOp } from './store.ts';
import { migrate } from './sqlite-schema.ts';

/**
 * How long a connection waits for another process's write transaction (SQLite's busy_timeout) before
 * failing with SESSION_STORE_ERROR. Write transactions last about one fsync, so this is only reached when
 * another process hangs. The writer thread waits in SQLite's busy handler; the server's loop never does.
 */
export const BUSY_TIMEOUT_MS = 5_000;

/** A commit op with every value already serialised to JSON text (at commit() time, in the server's thread). */
export type Write =
  /** `labels`: the label index keys (JSON text [key, value]) of a non-archived session, else empty. */
  | { op: 'putSession'; id: string; createdAtMs: number; archived: boolean; labels: string[]; json: string }
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: string[] }
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: Array<{ seq: number; kind: string; json: string }> }
  | { op: 'dropLedger'; sessionId: string; ranges: Array<[number, number]> }
  | { op: 'putRecord'; ns: string; key: string; json: string }
  | { op: 'deleteRecord'; ns: string; key: string }
  | { op: 'checkRecord'; ns: string; key: string; rev: number | null };

/** A failed commit's error as it crosses the thread boundary (rebuilt as a ServiceError on the other side). */
export interface WireError {
  code: ErrorCode;
  message: string;
  details?: unknown;
}

type Stmt = Statement<unknown[], unknown>;

function writeStatements(db: Database) {
  const p = (sql: string): Stmt => db.prepare<unknown[], unknown>(sql);
  return {
    begin: p('BEGIN IMMEDIATE'),
    commit: p('COMMIT'),
    rollback: p('ROLLBACK'),
    savepoint: p('SAVEPOINT one_commit'),
    release: p('RELEASE one_commit'),
    rollbackTo: p('ROLLBACK TO one_commit'),
    lastRow: p('SELECT MAX(idx) FROM rows WHERE session_id = ?').pluck(),
    lastSeq: p('SELECT MAX(seq) FROM ledger WHERE session_id = ?').pluck(),
    putSession: p(`INSERT INTO sessions (session_id, created_at_ms, archived, record) VALUES (?, ?, ?, ?)
      ON CONFLICT (session_id) DO UPDATE SET created_at_ms = excluded.created_at_ms, archived = excluded.archived, record = excluded.record`),
    dropLabels: p('DELETE FROM session_labels WHERE session_id = ?'),
    putLabel: p('INSERT OR IGNORE INTO session_labels (label, created_at_ms, session_id) VALUES (?, ?, ?)'),
    putRow: p(
      'INSERT INTO rows (session_id, idx, message) VALUES (?, ?, ?) ON CONFLICT (session_id, idx) DO UPDATE SET message = excluded.message',
    ),
    truncateRows: p('DELETE FROM rows WHERE session_id = ? AND idx >= ?'),
    appendLedger: p('INSERT INTO ledger (session_id, seq, kind, entry) VALUES (?, ?, ?, ?)'),
    dropLedger: p('DELETE FROM ledger WHERE session_id = ? AND seq BETWEEN ? AND ?'),
    putRecord: p('INSERT INTO records (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value'),
    deleteRecord: p('DELETE FROM records WHERE ns = ? AND key = ?'),
    getRecord: p('SELECT value FROM records WHERE ns = ? AND key = ?').pluck(),
  };
}

type Writes = ReturnType<typeof writeStatements>;

/** Rows stored for a session (they are contiguous from 0). */
export function rowCountOf(lastRow: Stmt, sessionId: string): number {
  const last = lastRow.get(sessionId) as number | null;
  return last === null ? 0 : last + 1;
}

/** A session ledger's last seq, 0 when empty. */
export function lastSeqOf(lastSeq: Stmt, sessionId: string): number {
  return (lastSeq.get(sessionId) as number | null) ?? 0;
}

/** SQLite result codes of a medium that refused the write, as the errno-style cause (store-failure.ts). */
const MEDIUM_CAUSE: Record<string, { cause: string; why: string }> = {
  SQLITE_FULL: { cause: 'ENOSPC', why: 'no space left on device' },
  SQLITE_IOERR: { cause: 'EIO', why: 'input/output error' },
  SQLITE_READONLY: { cause: 'EROFS', why: 'read-only file system' },
};

function toWire(err: unknown): WireError {
  if (isServiceError(err)) return { code: err.code, message: err.message, details: err.details };
  const reason = err instanceof Error ? err.message : String(err);
  if (!(err instanceof betterSqlite3().SqliteError)) return { code: 'SESSION_STORE_ERROR', message: `sqlite commit failed: ${reason}` };
  // Extended codes (SQLITE_IOERR_WRITE...) map by their primary code.
  const medium = MEDIUM_CAUSE[err.code] ?? MEDIUM_CAUSE[err.code.split('_').slice(0, 2).join('_')];
  if (!medium) return { code: 'SESSION_STORE_ERROR', message: `sqlite commit failed: ${reason}`, details: { sqlite_code: err.code } };
  return {
    code: 'SESSION_STORE_ERROR',
    message: `sqlite commit failed: ${medium.why} (${medium.cause}; ${err.code})`,
    details: { sqlite_code: err.code, cause_code: medium.cause },
  };
}

/** The writing connection: creates the file's schema and runs group transactions. */
export class SqliteWriter {
  readonly #db: Database;
  readonly #w: Writes;

  /** Opens `file` in WAL mode with synchronous=FULL and brings its schema up to date. */
  constructor(file: string) {
    const db = new (betterSqlite3())(file, { timeout: BUSY_TIMEOUT_MS });
    try {
      db.pragma('journal_mode = WAL');
      // FULL, not NORMAL: in WAL mode NORMAL syncs the WAL only at checkpoints, so a power loss can drop the
      // last transactions even though their COMMIT returned. An acknowledged turn must survive power loss,
      // so every COMMIT syncs the WAL before it returns (and so before the HTTP reply goes out).
      db.pragma('synchronous = FULL');
      migrate(db);
      this.#w = writeStatements(db);
    } catch (err) {
      db.close();
      throw err;
    }
    this.#db = db;
  }

  /** The connection's durability settings. */
  settings(): { journal_mode: unknown; synchronous: unknown; busy_timeout: unknown } {
    const get = (name: string): unknown => this.#db.pragma(name, { simple: true });
    return { journal_mode: get('journal_mode'), synchronous: get('synchronous'), busy_timeout: get('busy_timeout') };
  }

  /**
   * Runs `commits` in one write transaction (BEGIN IMMEDIATE ... COMMIT, one fsync), each inside its own
   * savepoint: a commit that fails its checks (CONFLICT) rolls back alone and the others still land, like
   * lmdb's child transactions. planBatch runs inside the transaction, so it sees every write committed by
   * any process. Returns each commit's error, or null for the ones that are now durable.
   */
  run(commits: Write[][]): Array<WireError | null> {
    const w = this.#w;
    const errors: Array<WireError | null> = commits.map(() => null);
    try {
      w.begin.run();
      if (commits.length === 1) this.#apply(commits[0]);
      else {
        commits.forEach((writes, i) => {
          w.savepoint.run();
          try {
            this.#apply(writes);
            w.release.run();
          } catch (err) {
            w.rollbackTo.run();
            w.release.run();
            errors[i] = toWire(err);
          }
        });
      }
      w.commit.run();
      return errors;
    } catch (err) {
      if (this.#db.inTransaction) w.rollback.run();
      const whole = toWire(err);
      return errors.map((e) => e ?? whole);
    }
  }

  #apply(writes: Write[]): void {
    const w = this.#w;
    // Inside BEGIN IMMEDIATE: no other process writes until this transaction ends, so a condition that holds
    // here still holds when its writes land.
    checkConditions(writes as StoreOp[], (ns, key) => {
      const text = w.getRecord.get(ns, key) as string | undefined;
      return text === undefined ? undefined : JSON.parse(text);
    });
    planBatch(writes, {
      rowCount: (id) => rowCountOf(w.lastRow, id),
      lastSeq: (id) => lastSeqOf(w.lastSeq, id),
    });
    // dropLedger goes last: it may remove entries this same batch appends.
    const ordered = [...writes.filter((op) => op.op !== 'dropLedger'), ...writes.filter((op) => op.op === 'dropLedger')];
    for (const op of ordered) {
      switch (op.op) {
        case 'putSession':
          w.putSession.run(op.id, op.createdAtMs, op.archived ? 1 : 0, op.json);
          w.dropLabels.run(op.id);
          for (const label of op.labels) w.putLabel.run(label, op.createdAtMs, op.id);
          break;
        case 'putRows':
          for (let i = 0; i < op.rows.length; i++) w.putRow.run(op.sessionId, op.fromIndex + i, op.rows[i]);
          break;
        case 'truncateRows':
          w.truncateRows.run(op.sessionId, op.length);
          break;
        case 'appendLedger':
          for (const e of op.entries) w.appendLedger.run(op.sessionId, e.seq, e.kind, e.json);
          break;
        case 'dropLedger':
          for (const [from, to] of op.ranges) w.dropLedger.run(op.sessionId, from, to);
          break;
        case 'putRecord':
          w.putRecord.run(op.ns, op.key, op.json);
          break;
        case 'deleteRecord':
          w.deleteRecord.run(op.ns, op.key);
          break;
        case 'checkRecord':
          break;
      }
    }
  }

  close(): void {
    this.#db.close();
  }
}
