// storage/sqlite-store.ts: the sqlite Store backend: one SQLite file `<dir>/warren.sqlite` through better-sqlite3,
// in WAL mode, safe for several processes on one realm (SQLite's file locks serialise writers). app.ts opens it
// via openStore. Reads run here on their own connection (WAL readers never wait for writers); writes go to the
// writer thread (storage/sqlite-writer-client.ts) so that fsync never blocks this event loop. Commits issued
// while a transaction is in flight queue up and share the next one, as lmdb's batched writes do.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Database, Statement } from 'better-sqlite3';
import { betterSqlite3 } from './better-sqlite3.ts';
import { ServiceError, isServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { matchesLabels } from './label-filter.ts';
import { checkOps, pageBounds } from './prepare-ops.ts';
import { readLedgerEntries, readSessionRecord } from './record-migrations.ts';
import { BUSY_TIMEOUT_MS, lastSeqOf, rowCountOf, type Write } from './sqlite-writes.ts';
import { SqliteWriterHandle } from './sqlite-writer-client.ts';
import { GroupCommitQueue } from './group-commit.ts';

/** The realm's database file inside the store directory (plus SQLite's `-wal` and `-shm` beside it). */
export const SQLITE_FILE = 'warren.sqlite';

type Stmt = Statement<unknown[], unknown>;

/** The queries, prepared once on the reading connection. */
function readStatements(db: Database) {
  const p = (sql: string): Stmt => db.prepare<unknown[], unknown>(sql);
  return {
    getSession: p('SELECT record FROM sessions WHERE session_id = ?').pluck(),
    // Both listings walk an index in (created_at_ms, session_id) order; the active one is partial (archived = 0).
    listAll: p('SELECT record FROM sessions ORDER BY created_at_ms, session_id LIMIT ? OFFSET ?').pluck(),
    listActive: p('SELECT record FROM sessions WHERE archived = 0 ORDER BY created_at_ms, session_id LIMIT ? OFFSET ?').pluck(),
    // Candidates for a label filter, from the label index in creation order (each is checked on its record).
    listLabelled: p(`SELECT s.record FROM session_labels l JOIN sessions s ON s.session_id = l.session_id
      WHERE l.label = ? ORDER BY l.created_at_ms, l.session_id`).pluck(),
    countSessions: p('SELECT COUNT(*) FROM sessions').pluck(),
    readRows: p('SELECT message FROM rows WHERE session_id = ? AND idx >= ? ORDER BY idx LIMIT ?').pluck(),
    lastRow: p('SELECT MAX(idx) FROM rows WHERE session_id = ?').pluck(),
    readLedger: p('SELECT entry FROM ledger WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?').pluck(),
    lastSeq: p('SELECT MAX(seq) FROM ledger WHERE session_id = ?').pluck(),
    getRecord: p('SELECT value FROM records WHERE ns = ? AND key = ?').pluck(),
    listRecords: p('SELECT key, value FROM records WHERE ns = ? ORDER BY key'),
  };
}

type Reads = ReturnType<typeof readStatements>;

/** SQLite's LIMIT for a pageBounds limit: a negative LIMIT means none. */
const sqlLimit = (limit: number): number => (Number.isFinite(limit) ? limit : -1);

class SqliteStore implements Store {
  readonly backend = 'sqlite' as const;
  readonly persistent = true;
  readonly #reader: Database;
  readonly #q: Reads;
  readonly #writer: SqliteWriterHandle;
  /** Queued commits, one transaction at a time (storage/group-commit.ts). */
  readonly #commits: GroupCommitQueue<Write[]>;
  #closed = false;

  constructor(reader: Database, writer: SqliteWriterHandle) {
    this.#reader = reader;
    this.#q = readStatements(reader);
    this.#writer = writer;
    this.#commits = new GroupCommitQueue((commits) => writer.run(commits));
  }

  #open(): Reads {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    return this.#q;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const json = this.#open().getSession.get(sessionId) as string | undefined;
    return json === undefined ? undefined : readSessionRecord(JSON.parse(json));
  }

  async listSessions(opts: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const q = this.#open();
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    if (opts.labels?.length) {
      const filters = opts.labels;
      // Archived sessions are not in the label index: asking for them with labels walks every session.
      const candidates = opts.includeArchived
        ? (q.listAll.all(-1, 0) as string[])
        : (q.listLabelled.all(JSON.stringify([filters[0][0], filters[0][1]])) as string[]);
      const out: SessionRecord[] = [];
      let skipped = 0;
      for (const json of candidates) {
        const record = readSessionRecord(JSON.parse(json));
        if (!matchesLabels(record, filters)) continue;
        if (skipped < offset) skipped++;
        else out.push(record);
        if (out.length >= limit) break;
      }
      return out;
    }
    const stmt = opts.includeArchived ? q.listAll : q.listActive;
    return (stmt.all(sqlLimit(limit), offset) as string[]).map((json) => readSessionRecord(JSON.parse(json)));
  }

  async countSessions(): Promise<number> {
    return this.#open().countSessions.get() as number;
  }

  async readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    const q = this.#open();
    const page = pageBounds(offset, limit);
    const rows =
      page.limit > 0 ? (q.readRows.all(sessionId, page.offset, sqlLimit(page.limit)) as string[]).map((m) => JSON.parse(m) as Message) : [];
    // Rows are contiguous from 0, so a page that ends before its limit ends at the last row (as in lmdb).
    if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length };
    return { rows, total: rowCountOf(q.lastRow, sessionId) };
  }

  async readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    const q = this.#open();
    const { limit: max } = pageBounds(0, limit);
    if (max === 0 || afterSeq === Infinity) return [];
    const after = Number.isFinite(afterSeq) ? Math.floor(afterSeq) : 0;
    return readLedgerEntries(
      sessionId,
      (q.readLedger.all(sessionId, after, sqlLimit(max)) as string[]).map((e) => JSON.parse(e) as LedgerEntry),
    );
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    return lastSeqOf(this.#open().lastSeq, sessionId);
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
   * Serialises the ops now and queues them. Everything queued in one event-loop turn, and everything queued
   * while the writer runs a transaction, goes into the writer's next transaction. Resolves after that
   * transaction's COMMIT returned, i.e. once the data is durable.
   */
  commit(ops: StoreOp[]): Promise<void> {
    try {
      this.#open();
      const writes = encode(checkOps(ops));
      if (writes.length === 0) return Promise.resolve();
      return this.#commits.push(writes);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** The writing connection's durability settings plus the reader's busy timeout. */
  async settings(): Promise<Record<string, unknown>> {
    return { ...(await this.#writer.settings()), reader_busy_timeout: this.#reader.pragma('busy_timeout', { simple: true }) };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    // Commits already accepted land before the file closes.
    await this.#commits.drain();
    this.#closed = true;
    await this.#writer.close();
    this.#reader.close();
  }
}

/** @internal The pragmas `store`'s connections run with, for tests; undefined for other backends. */
export async function sqliteSettings(store: Store): Promise<Record<string, unknown> | undefined> {
  return store instanceof SqliteStore ? store.settings() : undefined;
}

/** Serialises checked ops to JSON text, so later changes by the caller cannot reach the store. */
function encode(ops: StoreOp[]): Write[] {
  return ops.map((op): Write => {
    switch (op.op) {
      case 'putSession': {
        const s = op.session;
        const labels = s.archived ? [] : Object.entries(s.labels).map(([k, v]) => JSON.stringify([k, v]));
        return { op: 'putSession', id: s.session_id, createdAtMs: s.created_at_ms, archived: s.archived, labels, json: JSON.stringify(s) };
      }
      case 'putRows':
        return { op: 'putRows', sessionId: op.sessionId, fromIndex: op.fromIndex, rows: op.rows.map((row) => JSON.stringify(row)) };
      case 'truncateRows':
        return { op: 'truncateRows', sessionId: op.sessionId, length: op.length };
      case 'appendLedger':
        return {
          op: 'appendLedger',
          sessionId: op.sessionId,
          entries: op.entries.map((e) => ({ seq: e.seq, kind: e.kind, json: JSON.stringify(e) })),
        };
      case 'dropLedger':
        return { op: 'dropLedger', sessionId: op.sessionId, ranges: op.ranges };
      case 'putRecord':
        return { op: 'putRecord', ns: op.ns, key: op.key, json: JSON.stringify(op.value) };
      case 'deleteRecord':
        return { op: 'deleteRecord', ns: op.ns, key: op.key };
      case 'checkRecord':
        return { op: 'checkRecord', ns: op.ns, key: op.key, rev: op.rev };
    }
  });
}

/**
 * Opens (creating when absent) the SQLite store under `dir`; the writer thread brings the schema up to date
 * first. Several processes may open the same dir.
 */
export async function openSqliteStore(dir: string): Promise<Store> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, SQLITE_FILE);
  let writer: SqliteWriterHandle | undefined;
  try {
    writer = await SqliteWriterHandle.open(file);
    const reader = new (betterSqlite3())(file, { timeout: BUSY_TIMEOUT_MS });
    return new SqliteStore(reader, writer);
  } catch (err) {
    await writer?.close();
    if (isServiceError(err)) throw err;
    throw new ServiceError('SESSION_STORE_ERROR', `cannot open sqlite store in ${dir}`, undefined, { cause: err });
  }
}
