// storage/session-index.ts: in-memory session records kept in creation order (created_at_ms, then id).
// Used by the memory and jsonl backends; lmdb keeps the same order in an on-disk index instead.
import type { ListSessionsOptions, SessionRecord } from './store.ts';
import { pageBounds } from './prepare-ops.ts';

function before(a: SessionRecord, atMs: number, id: string): boolean {
  return a.created_at_ms < atMs || (a.created_at_ms === atMs && a.session_id < id);
}

/** Session records by id plus a sorted array for ordered, paged listing. Values are stored as given. */
export class SessionIndex {
  readonly #byId = new Map<string, SessionRecord>();
  readonly #ordered: SessionRecord[] = [];

  /** First position whose record is not before (atMs, id). */
  #position(atMs: number, id: string): number {
    let lo = 0;
    let hi = this.#ordered.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (before(this.#ordered[mid], atMs, id)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  get(sessionId: string): SessionRecord | undefined {
    return this.#byId.get(sessionId);
  }

  /** Inserts or replaces a record, moving it when its created_at_ms changed. */
  put(record: SessionRecord): void {
    const old = this.#byId.get(record.session_id);
    if (old) this.#ordered.splice(this.#position(old.created_at_ms, old.session_id), 1);
    this.#ordered.splice(this.#position(record.created_at_ms, record.session_id), 0, record);
    this.#byId.set(record.session_id, record);
  }

  /** Records in creation order; archived ones only when asked. */
  list(opts: ListSessionsOptions = {}): SessionRecord[] {
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    if (opts.includeArchived) return this.#ordered.slice(offset, offset + limit);
    const out: SessionRecord[] = [];
    let skipped = 0;
    for (const record of this.#ordered) {
      if (record.archived) continue;
      if (skipped < offset) {
        skipped++;
        continue;
      }
      out.push(record);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Every stored session, archived included. */
  count(): number {
    return this.#byId.size;
  }
}
