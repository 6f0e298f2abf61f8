// storage/lmdb-store.ts: the default, durable Store backend: one LMDB env at `<dir>/warren.lmdb`.
// Safe for several processes on one realm (LMDB serialises writers across processes); app.ts opens it via openStore.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { asBinary, open, type Database, type Key, type RootDatabase } from 'lmdb';
import { ServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { labelKey, matchesLabels, type LabelFilters } from './label-filter.ts';
import { checkConditions, checkOps, pageBounds, planBatch } from './prepare-ops.ts';
import { readLedgerEntries, readSessionRecord } from './record-migrations.ts';
import { storeFailure } from './store-failure.ts';

type CreatedKey = [number, string];
type SeqKey = [string, number];
type LabelIndexKey = [string, number, string];

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
  /**
   * session_id → the ledger's last seq, written with every append. A cheap stand-in for a reverse cursor scan,
   * checked against the ledger before use (see #lastSeq); absent for ledgers written before it existed.
   */
  ledgerLast: Database<number, string>;
  /** [labelKey, created_at_ms, session_id] → 1, one per label of each non-archived session. */
  labels: Database<1, LabelIndexKey>;
  /** session_id → [created_at_ms, its indexed labels as sorted [key, value] pairs], to drop them on change. */
  labelsOf: Database<[number, Array<[string, string]>], string>;
}

type FastBytes = Uint8Array & { isGlobal?: boolean };

/** `a` (bytes as a latin1 string) equals the first `size` bytes of `b`. */
function sameBytes(a: string, b: Uint8Array, size: number): boolean {
  if (a.length !== size) return false;
  for (let i = 0; i < size; i++) if (a.charCodeAt(i) !== b[i]) return false;
  return true;
}

/** The first `size` bytes of `b` as a one-byte string (what a condition cache entry keeps). */
function latin1Of(b: Uint8Array, size: number): string {
  return Buffer.from(b.buffer, b.byteOffset, size).toString('latin1');
}

/** A record value's `rev` (what checkConditions compares), or undefined. */
function revOf(value: unknown): unknown {
  return typeof value === 'object' && value !== null ? (value as { rev?: unknown }).rev : undefined;
}

/** What #conditionRead remembers of a record: its stored bytes, and the `rev` checkConditions compares. */
interface ConditionEntry {
  bytes: string;
  rev: unknown;
}

/** Records per namespace whose decoded value #conditionRead keeps (cleared when full). */
const CONDITION_CACHE_MAX = 20_000;

// Room for the seven databases above plus later additions without reopening old realms.
const MAX_DBS = 32;

/** A value already serialised with its database's own encoder (so stored bytes are exactly what put() writes). */
type Encoded = Uint8Array;

/**
 * A commit op with every value serialised at commit() time: the transaction runs later, in lmdb's batched
 * write, and the caller may change its objects meanwhile. Also the shape planBatch reads.
 */
type Write =
  | { op: 'putSession'; id: string; createdAtMs: number; archived: boolean; labels: Array<[string, string]>; value: Encoded }
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: Encoded[] }
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: Array<{ seq: number; value: Encoded }> }
  | { op: 'dropLedger'; sessionId: string; ranges: Array<[number, number]> }
  | { op: 'putRecord'; key: [string, string]; value: Encoded; rev: unknown }
  | { op: 'deleteRecord'; key: [string, string] }
  | { op: 'checkRecord'; ns: string; key: string; rev: number | null };

interface ValueEncoder {
  encode(value: unknown): Encoded;
}

/**
 * The msgpack encoder lmdb made for `db` (lmdb's typings omit it). A plain encode() returns a slice of the
 * encoder's buffer that later encodes never overwrite (each starts past the last one's end; lmdb's own
 * reuse mode rewinds only to its own start, and this store hands lmdb nothing but asBinary values anyway).
 */
function encoderOf(db: Database<unknown, Key>): ValueEncoder {
  const { encoder } = db as unknown as { encoder?: Partial<ValueEncoder> };
  if (typeof encoder?.encode !== 'function') throw new Error('lmdb database has no value encoder');
  return encoder as ValueEncoder;
}

/** Writes bytes from encoderOf(db) as they are (lmdb skips its own encoding for asBinary values). */
function putEncoded<K extends Key>(db: Database<unknown, K>, key: K, value: Encoded): void {
  db.putSync(key, asBinary(value));
}

/** Highest numeric second key element under `first`, or -1 when there is none. */
function lastIndex(db: Database<unknown, SeqKey>, first: string): number {
  for (const key of db.getKeys({ start: [first, Infinity], end: [first, -1], reverse: true, limit: 1 })) return key[1];
  return -1;
}

/**
 * The session's row count, confirmed with point lookups when it equals `guess`: rows are contiguous from 0,
 * so row guess-1 present and row guess absent mean exactly `guess` rows. Otherwise a reverse cursor scan.
 */
function rowCount(rows: Database<unknown, SeqKey>, sessionId: string, guess: number): number {
  if ((guess === 0 || rows.doesExist([sessionId, guess - 1])) && !rows.doesExist([sessionId, guess])) return guess;
  return lastIndex(rows, sessionId) + 1;
}

class LmdbStore implements Store {
  readonly backend = 'lmdb' as const;
  readonly persistent = true;
  readonly #env: RootDatabase;
  readonly #db: Dbs;
  readonly #enc: { sessions: ValueEncoder; rows: ValueEncoder; ledger: ValueEncoder; records: ValueEncoder };
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
      ledgerLast: env.openDB({ name: 'ledger-last-seq' }),
      labels: env.openDB({ name: 'active-sessions-by-label' }),
      labelsOf: env.openDB({ name: 'session-labels' }),
    };
    this.#enc = {
      sessions: encoderOf(this.#db.sessions),
      rows: encoderOf(this.#db.rows),
      ledger: encoderOf(this.#db.ledger),
      records: encoderOf(this.#db.records),
    };
  }

  #open(): Dbs {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
    return this.#db;
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    const raw: unknown = this.#open().sessions.get(sessionId);
    return raw === undefined ? undefined : readSessionRecord(raw);
  }

  async listSessions(opts: ListSessionsOptions = {}): Promise<SessionRecord[]> {
    const db = this.#open();
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    if (opts.labels?.length) return this.#listLabelled(db, opts.labels, offset, limit, opts.includeArchived ?? false);
    const index = opts.includeArchived ? db.created : db.active;
    const out: SessionRecord[] = [];
    // Reads the index range only (lmdb skips `offset` keys on the cursor); one get per returned session.
    for (const key of index.getKeys({ offset, limit: Number.isFinite(limit) ? limit : undefined })) {
      const raw: unknown = db.sessions.get(key[1]);
      if (raw !== undefined) out.push(readSessionRecord(raw));
    }
    return out;
  }

  /**
   * Walks the label index of the first filter in creation order; each hit is checked against every
   * filter on its record. Archived sessions are not in the label index: asking for them with labels
   * scans the creation index instead.
   */
  #listLabelled(db: Dbs, filters: LabelFilters, offset: number, limit: number, includeArchived: boolean): SessionRecord[] {
    const out: SessionRecord[] = [];
    let skipped = 0;
    const take = (raw: unknown): boolean => {
      if (raw === undefined) return true;
      const record = readSessionRecord(raw);
      if (!matchesLabels(record, filters)) return true;
      if (skipped < offset) skipped++;
      else out.push(record);
      return out.length < limit;
    };
    if (includeArchived) {
      for (const key of db.created.getKeys()) if (!take(db.sessions.get(key[1]))) break;
      return out;
    }
    const first = labelKey(filters[0][0], filters[0][1]);
    for (const key of db.labels.getKeys({ start: [first, -Infinity], end: [first, Infinity] })) {
      if (!take(db.sessions.get(key[2]))) break;
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
    const rows: Message[] = [];
    if (page.limit > 0) {
      const range = db.rows.getRange({
        start: [sessionId, page.offset],
        end: [sessionId, Infinity],
        limit: Number.isFinite(page.limit) ? page.limit : undefined,
      });
      for (const { value } of range) rows.push(value);
    }
    // Rows are contiguous from 0, so a page that ends before its limit ends at the last row; the scan for
    // the total is needed only for a full page or one that starts past the end.
    if (rows.length < page.limit && (rows.length > 0 || page.offset === 0)) return { rows, total: page.offset + rows.length };
    return { rows, total: lastIndex(db.rows, sessionId) + 1 };
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
    return readLedgerEntries(sessionId, out);
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    return this.#lastSeq(this.#open(), sessionId);
  }

  /**
   * The ledger's last seq from `ledgerLast`, trusted only when the ledger has no entry at the next seq: every
   * commit of this store keeps it exact (it is written in the same transaction as the entries, and the last
   * entry is never removed, so it is never ahead), and the check catches appends by a build that did not keep it
   * (they append at last + 1). Otherwise, or when absent, a reverse cursor scan.
   */
  #lastSeq(db: Dbs, sessionId: string): number {
    const known = db.ledgerLast.get(sessionId);
    if (typeof known === 'number' && !db.ledger.doesExist([sessionId, known + 1])) return known;
    return Math.max(0, lastIndex(db.ledger, sessionId));
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
    const writes = this.#encode(checkOps(ops));
    if (writes.length === 0) return;
    // A child transaction inside lmdb's batched async write: commits issued in the same event turn share one
    // LMDB transaction (and one fsync), while a callback that throws aborts only its own writes. The promise
    // resolves after the commit is flushed (default overlappingSync; see reference/dependencies.md).
    try {
      await db.sessions.childTransaction(() => this.#apply(db, writes));
    } catch (err) {
      if (err instanceof ServiceError) throw err;
      throw storeFailure('lmdb commit', await commitCause(err));
    }
  }

  /** Serialises every value now (checkOps leaves plain values as the caller's objects). */
  #encode(ops: StoreOp[]): Write[] {
    const enc = this.#enc;
    return ops.map((op): Write => {
      switch (op.op) {
        case 'putSession': {
          const s = op.session;
          const labels = Object.entries(s.labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
          return {
            op: 'putSession',
            id: s.session_id,
            createdAtMs: s.created_at_ms,
            archived: s.archived,
            labels,
            value: enc.sessions.encode(s),
          };
        }
        case 'putRows':
          return { op: 'putRows', sessionId: op.sessionId, fromIndex: op.fromIndex, rows: op.rows.map((row) => enc.rows.encode(row)) };
        case 'truncateRows':
          return op;
        case 'appendLedger':
          return {
            op: 'appendLedger',
            sessionId: op.sessionId,
            entries: op.entries.map((e) => ({ seq: e.seq, value: enc.ledger.encode(e) })),
          };
        case 'dropLedger':
          return op;
        case 'putRecord':
          return {
            op: 'putRecord',
            key: [op.ns, op.key],
            value: enc.records.encode(op.value),
            rev: revOf(op.value),
          };
        case 'deleteRecord':
          return { op: 'deleteRecord', key: [op.ns, op.key] };
        case 'checkRecord':
          return op;
      }
    });
  }

  /** Runs inside the write transaction, so reads see every committed write, from any process. */
  #apply(db: Dbs, writes: Write[]): void {
    // Conditions first, inside the write transaction: LMDB serialises writers across processes, so a
    // condition that holds here still holds when this transaction's writes land.
    checkConditions(writes as StoreOp[], (ns, key) => this.#conditionRead(db, ns, key));
    const plan = planBatch(writes, {
      rowCount: (id, guess) => rowCount(db.rows, id, guess),
      lastSeq: (id) => this.#lastSeq(db, id),
    });
    // dropLedger goes last: it may remove entries this same batch appends (a turn's text deltas).
    const ordered = writes.some((w) => w.op === 'dropLedger')
      ? [...writes.filter((w) => w.op !== 'dropLedger'), ...writes.filter((w) => w.op === 'dropLedger')]
      : writes;
    for (const w of ordered) {
      switch (w.op) {
        case 'putSession': {
          const key: CreatedKey = [w.createdAtMs, w.id];
          // Each stored session has exactly one key in `created` and, unless archived, the same key in `active`,
          // both from its stored created_at_ms. So when the new record's key is there (in `active` for a live
          // session; in `created` and not `active` for an archived one) the index is already right, whichever
          // process wrote it. Only a new session, or a changed created_at_ms or archived flag, reads the old record.
          const indexed = w.archived ? db.created.doesExist(key) && !db.active.doesExist(key) : db.active.doesExist(key);
          if (!indexed) this.#reindex(db, w.id, key, w.archived);
          this.#indexLabels(db, w.id, w.createdAtMs, w.archived ? [] : w.labels);
          putEncoded(db.sessions, w.id, w.value);
          break;
        }
        case 'putRows':
          for (let i = 0; i < w.rows.length; i++) putEncoded(db.rows, [w.sessionId, w.fromIndex + i], w.rows[i]);
          break;
        case 'truncateRows': {
          const doomed = [...db.rows.getKeys({ start: [w.sessionId, w.length], end: [w.sessionId, Infinity] })];
          for (const key of doomed) db.rows.removeSync(key);
          break;
        }
        case 'appendLedger':
          for (const entry of w.entries) putEncoded(db.ledger, [w.sessionId, entry.seq], entry.value);
          break;
        case 'dropLedger':
          for (const [from, to] of w.ranges) {
            const doomed = [...db.ledger.getKeys({ start: [w.sessionId, from], end: [w.sessionId, to + 1] })];
            for (const key of doomed) db.ledger.removeSync(key);
          }
          break;
        case 'putRecord':
          putEncoded(db.records, w.key, w.value);
          this.#conditionWritten(w.key, w.value, w.rev);
          break;
        case 'deleteRecord':
          db.records.removeSync(w.key);
          break;
        case 'checkRecord':
          break;
      }
    }
    for (const [id, seq] of plan.lastSeqs) db.ledgerLast.putSync(id, seq);
  }

  /**
   * The record a checkRecord op tests (a cluster lease, read by every fenced commit): its stored bytes are
   * read every time, inside the write transaction, and decoded again only when they differ from the bytes
   * last decoded for that key, so a lease that did not change costs a byte comparison, not a msgpack decode.
   * checkConditions reads only the value's `rev`, so that is all a cache entry keeps, beside the bytes as a
   * one-byte string: every session has a lease, and an entry stays small (about 120 bytes of heap, not the
   * decoded record's strings and a byte copy's ArrayBuffer).
   */
  #conditionRead(db: Dbs, ns: string, key: string): unknown {
    // lmdb's fast read returns its shared read buffer (isGlobal) holding the value in its first lastSize bytes.
    const records = db.records as unknown as { getBinaryFast(k: [string, string]): FastBytes | undefined; lastSize: number };
    const raw = records.getBinaryFast([ns, key]);
    let byKey = this.#conditionCache.get(ns);
    if (raw === undefined) {
      byKey?.delete(key);
      return undefined;
    }
    const size = raw.isGlobal ? records.lastSize : raw.length;
    const hit = byKey?.get(key);
    if (hit && sameBytes(hit.bytes, raw, size)) return hit;
    // Taken before the decoding read, which reuses the shared buffer.
    const bytes = latin1Of(raw, size);
    const entry: ConditionEntry = { bytes, rev: revOf(db.records.get([ns, key])) };
    if (!byKey) this.#conditionCache.set(ns, (byKey = new Map()));
    else if (byKey.size >= CONDITION_CACHE_MAX) byKey.clear();
    byKey.set(key, entry);
    return entry;
  }

  readonly #conditionCache = new Map<string, Map<string, ConditionEntry>>();

  /**
   * A record this process writes that #conditionRead remembers (a lease this node renews or claims): its
   * entry takes the written bytes, so the next condition on it compares bytes instead of decoding them
   * again. Only a hint: #conditionRead still compares it with the stored bytes (a transaction that never
   * committed leaves them different, and the record is decoded as before).
   */
  #conditionWritten([ns, key]: [string, string], value: Encoded, rev: unknown): void {
    const byKey = this.#conditionCache.get(ns);
    if (!byKey?.has(key)) return;
    byKey.set(key, { bytes: latin1Of(value, value.byteLength), rev });
  }

  /** Moves a session's creation-order index keys from its stored record's to `key`. */
  #reindex(db: Dbs, id: string, key: CreatedKey, archived: boolean): void {
    const old = db.sessions.get(id);
    if (old) {
      db.created.removeSync([old.created_at_ms, id]);
      db.active.removeSync([old.created_at_ms, id]);
    }
    db.created.putSync(key, 1);
    if (!archived) db.active.putSync(key, 1);
  }

  /** Keeps the label index of one session equal to `labels` (empty when archived). */
  #indexLabels(db: Dbs, id: string, createdAtMs: number, labels: Array<[string, string]>): void {
    const old = db.labelsOf.get(id);
    if (old === undefined && labels.length === 0) return;
    if (old !== undefined && old[0] === createdAtMs && JSON.stringify(old[1]) === JSON.stringify(labels)) return;
    if (old !== undefined) for (const [k, v] of old[1]) db.labels.removeSync([labelKey(k, v), old[0], id]);
    for (const [k, v] of labels) db.labels.putSync([labelKey(k, v), createdAtMs, id], 1);
    if (labels.length) db.labelsOf.putSync(id, [createdAtMs, labels]);
    else db.labelsOf.removeSync(id);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#env.close();
  }
}

/**
 * The real cause of a failed batched commit. lmdb-js rejects each write of the batch with a generic
 * error whose `commitError` promise rejects with the errno error (and is otherwise never observed, so it
 * is observed here). Settles at once: lmdb rejects it in the same callback that failed the writes.
 */
async function commitCause(err: unknown): Promise<unknown> {
  const pending = (err as { commitError?: Promise<unknown> } | null)?.commitError;
  if (!pending || typeof pending.then !== 'function') return err;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<unknown>((resolve) => {
    timer = setTimeout(() => resolve(err), 1_000);
  });
  try {
    return await Promise.race([
      pending.then(
        () => err,
        (cause: unknown) => cause,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
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
