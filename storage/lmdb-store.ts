// storage/lmdb-store.ts: the default, durable Store backend: one LMDB env at `<dir>/warren.lmdb`.
// Safe for several processes on one realm (LMDB serialises writers across processes); app.ts opens it via openStore.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { ServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { pageBounds, planBatch, prepareOps } from './prepare-ops.ts';

type CreatedKey = [number, string];
type SeqKey = [string, number];

/** Named databases; keys use lmdb's ordered-binary encoding, so array keys sort element by element. */
interface Dbs {
  /** session_id → SessionRecord */
  sessions: Database<SessionRecord, string>;
  /** [created_at_ms, session_id] → 1, every session: ordered listing without sorting. */
  created: Database<1, CreatedKey>;
  /** [created_at_ms, session_id] → 1, non-archived sessions only, so the default listing pages directly. */
  active: Database<1, CreatedKey>;
  /** [session_id, index] → Message; indexes are contiguous from 0, so the last key gives the count. */
  rows: Database<Message, SeqKey>;
  /** [session_id, seq] → LedgerEntry */
  ledger: Database<LedgerEntry, SeqKey>;
  /** [ns, key] → JSON value. The one-element form is only a range bound. */
  records: Database<unknown, [string, string] | [string]>;
}

// Room for the six databases above plus later additions without reopening old realms.
const MAX_DBS = 32;

/** Highest numeric second key element under `first`, or -1 when there is none. */
function lastIndex(db: Database<unknown, SeqKey>, first: string): number {
  for (const key of db.getKeys({ start: [first, Infinity], end: [first, -1], reverse: true, limit: 1 })) return key[1];
  return -1;
}

class LmdbStore implements Store {
  readonly backend = 'lmdb' as const;
  readonly persistent = true;
  readonly #env: RootDatabase;
  readonly #db: Dbs;
  #closed = false;

  constructor(env: RootDatabase) {
    this.#env = env;
    this.#db = {
      sessions: env.openDB({ name: 'sessions' }),
      created: env.openDB({ name: 'sessions-by-created' }),
      active: env.openDB({ name: 'active-sessions-by-created' }),
      rows: env.openDB({ name: 'rows' }),
      ledger: env.openDB({ name: 'ledger' }),
      records: env.openDB({ name: 'records' }),
    };
  }

  #open(): Dbs {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    return this.#db;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    return this.#open().sessions.get(sessionId);
  }

  async listSessions(opts: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const db = this.#open();
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    const index = opts.includeArchived ? db.created : db.active;
    const out: SessionRecord[] = [];
    // Reads the index range only (lmdb skips `offset` keys on the cursor); one get per returned session.
    for (const key of index.getKeys({ offset, limit: Number.isFinite(limit) ? limit : undefined })) {
      const record = db.sessions.get(key[1]);
      if (record) out.push(record);
    }
    return out;
  }

  async countSessions(): Promise<number> {
    // mdb_stat's entry count: O(1), no scan.
    return (this.#open().sessions.getStats() as { entryCount: number }).entryCount;
  }

  async readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    const db = this.#open();
    const page = pageBounds(offset, limit);
    const total = lastIndex(db.rows, sessionId) + 1;
    const end = Math.min(total, page.offset + page.limit);
    const rows: Message[] = [];
    if (page.offset < end) {
      for (const { value } of db.rows.getRange({ start: [sessionId, page.offset], end: [sessionId, end] })) rows.push(value);
    }
    return { rows, total };
  }

  async readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    const db = this.#open();
    const { limit: max } = pageBounds(0, limit);
    if (max === 0) return [];
    const out: LedgerEntry[] = [];
    const start = Number.isFinite(afterSeq) ? Math.floor(afterSeq) + 1 : 0;
    const range = db.ledger.getRange({
      start: [sessionId, start],
      end: [sessionId, Infinity],
      limit: Number.isFinite(max) ? max : undefined,
    });
    for (const { value } of range) out.push(value);
    return out;
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    return Math.max(0, lastIndex(this.#open().ledger, sessionId));
  }

  async getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined> {
    return this.#open().records.get([ns, key]) as T | undefined;
  }

  async listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>> {
    const db = this.#open();
    const out: Array<{ key: string; value: T }> = [];
    // [ns, key] encodes as ns 0x00 key; [ns + 0x1F] sorts after all of them and before any longer ns
    // (prepareOps refuses control characters in ns and keys).
    for (const { key, value } of db.records.getRange({ start: [ns, ''], end: [`${ns}\u001f`] })) {
      out.push({ key: key[1] as string, value: value as T });
    }
    return out;
  }

  async commit(ops: StoreOp[]): Promise<void> {
    const db = this.#open();
    const prepared = prepareOps(ops);
    if (prepared.length === 0) return;
    // A child transaction inside lmdb's batched async write: commits issued in the same event turn share one
    // LMDB transaction (and one fsync), while a callback that throws aborts only its own writes. The promise
    // resolves after the commit is flushed (default overlappingSync; see reference/dependencies.md).
    await db.sessions.childTransaction(() => this.#apply(db, prepared));
  }

  /** Runs inside the write transaction, so reads see every committed write, from any process. */
  #apply(db: Dbs, ops: StoreOp[]): void {
    planBatch(ops, {
      rowCount: (id) => lastIndex(db.rows, id) + 1,
      lastSeq: (id) => Math.max(0, lastIndex(db.ledger, id)),
    });
    for (const op of ops) {
      switch (op.op) {
        case 'putSession': {
          const s = op.session;
          const old = db.sessions.get(s.session_id);
          if (old) {
            db.created.removeSync([old.created_at_ms, old.session_id]);
            db.active.removeSync([old.created_at_ms, old.session_id]);
          }
          db.sessions.putSync(s.session_id, s);
          db.created.putSync([s.created_at_ms, s.session_id], 1);
          if (!s.archived) db.active.putSync([s.created_at_ms, s.session_id], 1);
          break;
        }
        case 'putRows':
          op.rows.forEach((row, i) => db.rows.putSync([op.sessionId, op.fromIndex + i], row));
          break;
        case 'truncateRows': {
          const doomed = [...db.rows.getKeys({ start: [op.sessionId, op.length], end: [op.sessionId, Infinity] })];
          for (const key of doomed) db.rows.removeSync(key);
          break;
        }
        case 'appendLedger':
          for (const entry of op.entries) db.ledger.putSync([op.sessionId, entry.seq], entry);
          break;
        case 'putRecord':
          db.records.putSync([op.ns, op.key], op.value);
          break;
        case 'deleteRecord':
          db.records.removeSync([op.ns, op.key]);
          break;
      }
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#env.close();
  }
}

/** Opens (creating when absent) the LMDB store under `dir`. Several processes may open the same dir. */
export async function openLmdbStore(dir: string): Promise<Store> {
  await mkdir(dir, { recursive: true });
  try {
    return new LmdbStore(open({ path: join(dir, 'warren.lmdb'), maxDbs: MAX_DBS }));
  } catch (err) {
    throw new ServiceError('SESSION_STORE_ERROR', `cannot open lmdb store in ${dir}`, undefined, { cause: err });
  }
}
