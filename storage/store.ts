// storage/store.ts: the Store interface every backend implements (lmdb default, sqlite, postgres, jsonl, memory).
// Actors are the only callers; writes go through one chained writer per actor (actors/persistence.ts).
import type { LedgerEntry, SessionRecord } from '../contracts/records.ts';
import type { Message } from '../contracts/transcript.ts';

/** The stored shapes are schemas in contracts/records.ts (validated on read, storage/record-migrations.ts). */
export type { LedgerEntry, SessionRecord };

export type BackendName = 'lmdb' | 'sqlite' | 'postgres' | 'jsonl' | 'memory';
export const SUPPORTED_BACKENDS: readonly BackendName[] = ['lmdb', 'sqlite', 'postgres', 'jsonl', 'memory'];

/** One write inside an atomic batch. */
export type StoreOp =
  | { op: 'putSession'; session: SessionRecord }
  /** Writes rows at indexes fromIndex.. (overwriting any already there). */
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: Message[] }
  /** Deletes every row at index >= length. */
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: LedgerEntry[] }
  /**
   * Deletes the ledger entries with from <= seq <= to, for each [from, to] range (retention pruning, and a
   * committed turn's text deltas). Applied after the batch's appendLedger. Callers never remove a session's
   * last entry: the next seq is derived from it.
   */
  | { op: 'dropLedger'; sessionId: string; ranges: Array<[number, number]> }
  | { op: 'putRecord'; ns: string; key: string; value: unknown }
  | { op: 'deleteRecord'; ns: string; key: string }
  /**
   * A condition, not a write: the whole batch fails with CONFLICT (and writes nothing) unless the record
   * stored at (ns, key) when the batch applies is absent (`rev: null`) or an object whose `rev` member
   * equals `rev`. The compare-and-set primitive for claims and leases shared by several processes.
   */
  | { op: 'checkRecord'; ns: string; key: string; rev: number | null };

export interface ListSessionsOptions {
  includeArchived?: boolean;
  /**
   * Only sessions carrying every one of these labels (key, value). Served by the backend's label index
   * (non-archived sessions), so a filtered listing does not load every session; offset and limit apply
   * to the filtered sequence.
   */
  labels?: ReadonlyArray<readonly [string, string]>;
  offset?: number;
  limit?: number;
}

export interface Store {
  readonly backend: BackendName;
  /** False for memory: nothing survives the process. */
  readonly persistent: boolean;
  getSession(sessionId: string): Promise<SessionRecord | undefined>;
  /** Sessions ordered by creation time (then id); archived excluded unless asked. */
  listSessions(opts?: ListSessionsOptions): Promise<SessionRecord[]>;
  countSessions(): Promise<number>;
  /** Rows [offset, offset+limit) in order, and the total row count. */
  readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }>;
  /** Ledger entries with seq > afterSeq, ascending, at most `limit`. */
  readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]>;
  /** Highest seq in the ledger, 0 when empty. */
  lastLedgerSeq(sessionId: string): Promise<number>;
  getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined>;
  listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>>;
  /** Applies every op atomically and durably (resolves after the data is on disk for persistent backends). */
  commit(ops: StoreOp[]): Promise<void>;
  close(): Promise<void>;
}
