// storage/memory-store.ts: the throwaway Store backend (`--realm-backend memory`); nothing survives the process.
// Values are copied on write (prepareOps) and on read (structuredClone) so callers never alias stored state.
import { ServiceError } from '../contracts/errors.ts';
import type { Message } from '../contracts/transcript.ts';
import type { LedgerEntry, ListSessionsOptions, SessionRecord, Store, StoreOp } from './store.ts';
import { checkConditions, pageBounds, planBatch, prepareOps } from './prepare-ops.ts';
import { SessionIndex } from './session-index.ts';

class MemoryStore implements Store {
  readonly backend = 'memory' as const;
  readonly persistent = false;
  readonly #sessions = new SessionIndex();
  readonly #rows = new Map<string, Message[]>();
  readonly #ledger = new Map<string, LedgerEntry[]>();
  readonly #records = new Map<string, Map<string, unknown>>();
  #closed = false;

  #open(): void {
    if (this.#closed) throw new ServiceError('SESSION_STORE_ERROR', 'store is closed');
  }

  async getSession(sessionId: string): Promise<SessionRecord | undefined> {
    this.#open();
    const record = this.#sessions.get(sessionId);
    return record && structuredClone(record);
  }

  async listSessions(opts?: ListSessionsOptions): Promise<SessionRecord[]> {
    this.#open();
    return structuredClone(this.#sessions.list(opts));
  }

  async countSessions(): Promise<number> {
    this.#open();
    return this.#sessions.count();
  }

  async readRows(sessionId: string, offset?: number, limit?: number): Promise<{ rows: Message[]; total: number }> {
    this.#open();
    const all = this.#rows.get(sessionId) ?? [];
    const page = pageBounds(offset, limit);
    return { rows: structuredClone(all.slice(page.offset, page.offset + page.limit)), total: all.length };
  }

  async readLedger(sessionId: string, afterSeq: number, limit?: number): Promise<LedgerEntry[]> {
    this.#open();
    const entries = this.#ledger.get(sessionId) ?? [];
    const { limit: max } = pageBounds(0, limit);
    let lo = 0;
    let hi = entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (entries[mid].seq <= afterSeq) lo = mid + 1;
      else hi = mid;
    }
    return structuredClone(entries.slice(lo, lo + max));
  }

  async lastLedgerSeq(sessionId: string): Promise<number> {
    this.#open();
    return this.#ledger.get(sessionId)?.at(-1)?.seq ?? 0;
  }

  async getRecord<T = unknown>(ns: string, key: string): Promise<T | undefined> {
    this.#open();
    const value = this.#records.get(ns)?.get(key);
    return value === undefined ? undefined : (structuredClone(value) as T);
  }

  async listRecords<T = unknown>(ns: string): Promise<Array<{ key: string; value: T }>> {
    this.#open();
    const bucket = this.#records.get(ns);
    if (!bucket) return [];
    const keys = [...bucket.keys()].sort();
    return keys.map((key) => ({ key, value: structuredClone(bucket.get(key)) as T }));
  }

  async commit(ops: StoreOp[]): Promise<void> {
    this.#open();
    const prepared = prepareOps(ops);
    // Check the whole batch first; applying below cannot fail, so the batch lands whole or not at all.
    planBatch(prepared, {
      rowCount: (id) => this.#rows.get(id)?.length ?? 0,
      lastSeq: (id) => this.#ledger.get(id)?.at(-1)?.seq ?? 0,
    });
    checkConditions(prepared, (ns, key) => this.#records.get(ns)?.get(key));
    // dropLedger goes last: it may remove entries this same batch appends.
    for (const op of prepared) if (op.op !== 'dropLedger') this.#apply(op);
    for (const op of prepared) if (op.op === 'dropLedger') this.#apply(op);
  }

  #apply(op: StoreOp): void {
    switch (op.op) {
      case 'putSession':
        this.#sessions.put(op.session);
        return;
      case 'putRows': {
        const rows = this.#rows.get(op.sessionId) ?? [];
        op.rows.forEach((row, i) => (rows[op.fromIndex + i] = row));
        this.#rows.set(op.sessionId, rows);
        return;
      }
      case 'truncateRows': {
        const rows = this.#rows.get(op.sessionId);
        if (rows && rows.length > op.length) rows.length = op.length;
        return;
      }
      case 'appendLedger': {
        const entries = this.#ledger.get(op.sessionId) ?? [];
        entries.push(...op.entries);
        this.#ledger.set(op.sessionId, entries);
        return;
      }
      case 'dropLedger': {
        const entries = this.#ledger.get(op.sessionId);
        if (entries)
          this.#ledger.set(
            op.sessionId,
            entries.filter((e) => !op.ranges.some(([from, to]) => e.seq >= from && e.seq <= to)),
          );
        return;
      }
      case 'putRecord': {
        const bucket = this.#records.get(op.ns) ?? new Map<string, unknown>();
        bucket.set(op.key, op.value);
        this.#records.set(op.ns, bucket);
        return;
      }
      case 'deleteRecord':
        this.#records.get(op.ns)?.delete(op.key);
        return;
      case 'checkRecord':
        return;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
  }
}

/** Creates an empty in-process store; `persistent` is false and nothing is written to disk. */
export function createMemoryStore(): Store {
  return new MemoryStore();
}
