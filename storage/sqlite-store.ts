// storage/sqlite-store.ts: the sqlite Store backend: one SQLite file `<dir>/warren.sqlite` through better-sqlite3,
// in WAL mode, safe for several processes on one realm (SQLite's file locks serialise writers). app.ts opens it
// via openStore. better-sqlite3 is synchronous, so commits issued in one event-loop turn share one transaction
// (and one fsync) instead of each paying its own.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { Database, Statement } from 'better-sqlite3';
import { ServiceError, isServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { checkOps, pageBounds, planBatch } from './prepare-ops.ts';
import { migrate } from './sqlite-schema.ts';

/** The realm's database file inside the store directory (plus SQLite's `-wal` and `-shm` beside it). */
export const SQLITE_FILE = 'warren.sqlite';

/**
 * How long a writer waits for another process's write transaction before failing with SESSION_STORE_ERROR
 * (and the reading connection's busy_timeout). Write transactions last about one fsync, so this is only
 * reached when another process hangs.
 */
const BUSY_TIMEOUT_MS = 5_000;

/** Longest pause between two tries for the write lock while another process holds it. */
const MAX_LOCK_POLL_MS = 8;

/** A commit op with every value serialised to JSON text at commit() time (the transaction runs later). */
type Write =
  | { op: 'putSession'; id: string; createdAtMs: number; archived: boolean; json: string }
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: string[] }
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: Array<{ seq: number; kind: string; json: string }> }
  | { op: 'putRecord'; ns: string; key: string; json: string }
  | { op: 'deleteRecord'; ns: string; key: string };

/** A commit() waiting for the next group transaction. */
interface Pending {
  writes: Write[];
  resolve(): void;
  reject(err: unknown): void;
}

type Stmt = Statement<unknown[], unknown>;
const prep = (db: Database, sql: string): Stmt => db.prepare<unknown[], unknown>(sql);

/** The queries, prepared once on the reading connection (and on the writing one, for checks inside a transaction). */
function readStatements(db: Database) {
  const p = (sql: string): Stmt => prep(db, sql);
  return {
    getSession: p('SELECT record FROM sessions WHERE session_id = ?').pluck(),
    listAll: p('SELECT record FROM sessions ORDER BY created_at_ms, session_id LIMIT ? OFFSET ?').pluck(),
    listActive: p('SELECT record FROM sessions WHERE archived = 0 ORDER BY created_at_ms, session_id LIMIT ? OFFSET ?').pluck(),
    countSessions: p('SELECT COUNT(*) FROM sessions').pluck(),
    readRows: p('SELECT message FROM rows WHERE session_id = ? AND idx >= ? ORDER BY idx LIMIT ?').pluck(),
    lastRow: p('SELECT MAX(idx) FROM rows WHERE session_id = ?').pluck(),
    readLedger: p('SELECT entry FROM ledger WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').pluck(),
    lastSeq: p('SELECT MAX(seq) FROM ledger WHERE session_id = ?').pluck(),
    getRecord: p('SELECT value FROM records WHERE ns = ? AND key = ?').pluck(),
    listRecords: p('SELECT key, value FROM records WHERE ns = ? ORDER BY key'),
  };
}

/** The writing connection's statements. */
function writeStatements(db: Database) {
  const p = (sql: string): Stmt => prep(db, sql);
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
    putRow: p('INSERT INTO rows (session_id, idx, message) VALUES (?, ?, ?) ON CONFLICT (session_id, idx) DO UPDATE SET message = excluded.message'),
    truncateRows: p('DELETE FROM rows WHERE session_id = ? AND idx >= ?'),
    appendLedger: p('INSERT INTO ledger (session_id, seq, kind, entry) VALUES (?, ?, ?, ?)'),
    putRecord: p('INSERT INTO records (ns, key, value) VALUES (?, ?, ?) ON CONFLICT (ns, key) DO UPDATE SET value = excluded.value'),
    deleteRecord: p('DELETE FROM records WHERE ns = ? AND key = ?'),
  };
}

type Reads = ReturnType<typeof readStatements>;
type Writes = ReturnType<typeof writeStatements>;

/** SQLite's LIMIT for a pageBounds limit: a negative LIMIT means none. */
const sqlLimit = (limit: number): number => (Number.isFinite(limit) ? limit : -1);

const isBusy = (err: unknown): boolean => err instanceof BetterSqlite3.SqliteError && (err.code === 'SQLITE_BUSY' || err.code === 'SQLITE_LOCKED');

const rowCount = (q: { lastRow: Stmt }, sessionId: string): number => {
  const last = q.lastRow.get(sessionId) as number | null;
  return last === null ? 0 : last + 1;
};

const lastSeq = (q: { lastSeq: Stmt }, sessionId: string): number => (q.lastSeq.get(sessionId) as number | null) ?? 0;

function storeError(message: string, err: unknown): ServiceError {
  return isServiceError(err) ? err : new ServiceError('SESSION_STORE_ERROR', message, undefined, { cause: err });
}

class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly persistent = true;
  /** Serves every read outside a write transaction; its busy_timeout covers SQLite's rare busy reads in WAL mode. */
  readonly #reader: Database;
  /** Runs the write transactions. busy_timeout 0: a held write lock is polled for asynchronously (see #flush). */
  readonly #writer: Database;
  readonly #q: Reads;
  readonly #w: Writes;
  #queue: Pending[] = [];
  /** A flush is due (setImmediate) or waiting for another process's write lock (setTimeout). */
  #timer: NodeJS.Immediate | NodeJS.Timeout | undefined;
  /** When the current wait for the write lock began, or 0. */
  #waitingSince = 0;
  #pollMs = 1;
  #closed = false;

  constructor(reader: Database, writer: Database) {
    this.#reader = reader;
    this.#writer = writer;
    this.#q = readStatements(reader);
    this.#w = writeStatements(writer);
  }

  #open(): Reads {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    return this.#q;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const json = this.#open().getSession.get(sessionId) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as SessionRecord);
  }

  async listSessions(opts: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const q = this.#open();
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    // Both statements walk an index in (created_at_ms, session_id) order; the active one is partial (archived = 0).
    const stmt = opts.includeArchived ? q.listAll : q.listActive;
    return (stmt.all(sqlLimit(limit), offset) as string[]).map((json) => JSON.parse(json) as SessionRecord);
  }

  async countSessions(): Promise<number> {
    return this.#open().countSessions.get() as number;
  }

  async readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    const q = this.#open();
    const page = pageBounds(offset, limit);
    const rows = page.limit > 0 ? (q.readRows.all(sessionId, page.offset, sqlLimit(page.limit)) as string[]).map((m) => JSON.parse(m) as Message) : [];
    // Rows are contiguous from 0, so a page that ends before its limit ends at the last row (as in lmdb).
    if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length };
    return { rows, total: rowCount(q, sessionId) };
  }

  async readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    const q = this.#open();
    const { limit: max } = pageBounds(0, limit);
    if (max === 0 || afterSeq === Infinity) return [];
    const after = Number.isFinite(afterSeq) ? Math.floor(afterSeq) : 0;
    return (q.readLedger.all(sessionId, after, sqlLimit(max)) as string[]).map((e) => JSON.parse(e) as LedgerEntry);
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    return lastSeq(this.#open(), sessionId);
  }

  async getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined> {
    const json = this.#open().getRecord.get(ns, key) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as T);
  }

  async listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>> {
    const found = this.#open().listRecords.all(ns) as Array<{ key: string; value: string }>;
    return found.map((r) => ({ key: r.key, value: JSON.parse(r.value) as T }));
  }

  /**
   * Serialises the ops now and queues them for the next group transaction, which runs once the current
   * event-loop turn is over (setImmediate): every commit issued meanwhile shares one BEGIN IMMEDIATE ...
   * COMMIT and one fsync. Resolves after that COMMIT returned, i.e. once the data is durable.
   */
  commit(ops: StoreOp[]): Promise<void> {
    try {
      this.#open();
      const writes = encode(checkOps(ops));
      if (writes.length === 0) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        this.#queue.push({ writes, resolve, reject });
        this.#timer ??= setImmediate(() => this.#flush(false));
      });
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * Runs every queued commit in one write transaction, each inside its own savepoint: a commit that fails
   * its checks (CONFLICT) rolls back alone and the others still land, like lmdb's child transactions.
   * planBatch runs inside the transaction, so it sees every write committed by any process.
   * When another process holds the write lock, the event loop is not blocked in SQLite's busy handler:
   * the batch stays queued (later commits join it) and BEGIN is retried on a short timer, up to
   * BUSY_TIMEOUT_MS. `blocking` (close) waits in SQLite instead.
   */
  #flush(blocking: boolean): void {
    this.#timer = undefined;
    if (this.#queue.length === 0) return;
    const w = this.#w;
    try {
      w.begin.run();
    } catch (err) {
      if (!blocking && isBusy(err) && this.#waitForLock()) return;
      const batch = this.#queue;
      this.#queue = [];
      this.#waitingSince = 0;
      const e = storeError('cannot start a sqlite write transaction', err);
      for (const p of batch) p.reject(e);
      return;
    }
    this.#waitingSince = 0;
    const batch = this.#queue;
    this.#queue = [];
    const failed = new Map<Pending, unknown>();
    try {
      if (batch.length === 1) this.#apply(w, batch[0].writes);
      else {
        for (const p of batch) {
          w.savepoint.run();
          try {
            this.#apply(w, p.writes);
            w.release.run();
          } catch (err) {
            w.rollbackTo.run();
            w.release.run();
            failed.set(p, err);
          }
        }
      }
      w.commit.run();
    } catch (err) {
      if (this.#writer.inTransaction) w.rollback.run();
      const e = storeError('sqlite commit failed', err);
      for (const p of batch) p.reject(failed.get(p) ?? e);
      return;
    }
    for (const p of batch) {
      if (failed.has(p)) p.reject(failed.get(p));
      else p.resolve();
    }
  }

  /** Schedules the next try for the write lock; false once BUSY_TIMEOUT_MS has passed. */
  #waitForLock(): boolean {
    const now = performance.now();
    if (this.#waitingSince === 0) {
      this.#waitingSince = now;
      this.#pollMs = 1;
    } else if (now - this.#waitingSince > BUSY_TIMEOUT_MS) return false;
    else this.#pollMs = Math.min(MAX_LOCK_POLL_MS, this.#pollMs * 2);
    this.#timer = setTimeout(() => this.#flush(false), this.#pollMs);
    return true;
  }

  #apply(q: Writes, writes: Write[]): void {
    planBatch(writes, {
      rowCount: (id) => rowCount(q, id),
      lastSeq: (id) => lastSeq(q, id),
    });
    for (const w of writes) {
      switch (w.op) {
        case 'putSession':
          q.putSession.run(w.id, w.createdAtMs, w.archived ? 1 : 0, w.json);
          break;
        case 'putRows':
          for (let i = 0; i < w.rows.length; i++) q.putRow.run(w.sessionId, w.fromIndex + i, w.rows[i]);
          break;
        case 'truncateRows':
          q.truncateRows.run(w.sessionId, w.length);
          break;
        case 'appendLedger':
          for (const e of w.entries) q.appendLedger.run(w.sessionId, e.seq, e.kind, e.json);
          break;
        case 'putRecord':
          q.putRecord.run(w.ns, w.key, w.json);
          break;
        case 'deleteRecord':
          q.deleteRecord.run(w.ns, w.key);
          break;
      }
    }
  }

  /** The connection's durability settings (journal_mode, synchronous, busy_timeout). */
  settings(): { journal_mode: unknown; synchronous: unknown; busy_timeout: unknown } {
    const db = this.#writer;
    const get = (name: string): unknown => db.pragma(name, { simple: true });
    return { journal_mode: get('journal_mode'), synchronous: get('synchronous'), busy_timeout: this.#reader.pragma('busy_timeout', { simple: true }) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Commits already accepted land before the file closes (waiting in SQLite for the lock if need be).
    if (this.#timer !== undefined) {
      clearImmediate(this.#timer as NodeJS.Immediate);
      clearTimeout(this.#timer as NodeJS.Timeout);
    }
    this.#writer.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    this.#flush(true);
    this.#closed = true;
    this.#writer.close();
    this.#reader.close();
  }
}

/** @internal The pragmas `store`'s connection runs with, for tests; undefined for other backends. */
export function sqliteSettings(store: Store): ReturnType<SqliteStore['settings']> | undefined {
  return store instanceof SqliteStore ? store.settings() : undefined;
}

/** Serialises checked ops to JSON text, so later changes by the caller cannot reach the store. */
function encode(ops: StoreOp[]): Write[] {
  return ops.map((op): Write => {
    switch (op.op) {
      case 'putSession': {
        const s = op.session;
        return { op: 'putSession', id: s.session_id, createdAtMs: s.created_at_ms, archived: s.archived, json: JSON.stringify(s) };
      }
      case 'putRows':
        return { op: 'putRows', sessionId: op.sessionId, fromIndex: op.fromIndex, rows: op.rows.map((row) => JSON.stringify(row)) };
      case 'truncateRows':
        return op;
      case 'appendLedger':
        return { op: 'appendLedger', sessionId: op.sessionId, entries: op.entries.map((e) => ({ seq: e.seq, kind: e.kind, json: JSON.stringify(e) })) };
      case 'putRecord':
        return { op: 'putRecord', ns: op.ns, key: op.key, json: JSON.stringify(op.value) };
      case 'deleteRecord':
        return op;
    }
  });
}

/**
 * Opens (creating when absent) the SQLite store under `dir` and brings its schema up to date. Several
 * processes may open the same dir.
 */
export async function openSqliteStore(dir: string): Promise<Store> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, SQLITE_FILE);
  const opened: Database[] = [];
  try {
    const writer = new BetterSqlite3(file, { timeout: BUSY_TIMEOUT_MS });
    opened.push(writer);
    writer.pragma('journal_mode = WAL');
    // FULL, not NORMAL: in WAL mode NORMAL syncs the WAL only at checkpoints, so a power loss can drop the
    // last transactions even though their COMMIT returned. An acknowledged turn must survive power loss, so
    // every COMMIT syncs the WAL before it returns (and before the HTTP reply goes out).
    writer.pragma('synchronous = FULL');
    migrate(writer);
    writer.pragma('busy_timeout = 0');
    const reader = new BetterSqlite3(file, { timeout: BUSY_TIMEOUT_MS });
    opened.push(reader);
    return new SqliteStore(reader, writer);
  } catch (err) {
    for (const db of opened) db.close();
    if (isServiceError(err)) throw err;
    throw new ServiceError('SESSION_STORE_ERROR', `cannot open sqlite store in ${dir}`, undefined, { cause: err });
  }
}
