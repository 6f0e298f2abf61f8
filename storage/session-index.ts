// storage/session-index.ts: in-memory session records kept in creation order (created_at_ms, then id).
// Used by the memory and jsonl backends; lmdb keeps the same order in an on-disk index instead.
import { labelKey, matchesLabels, type LabelFilters } from './label-filter.ts';
import type { ListSessionsOptions, SessionRecord } from './store.ts';
import { pageBounds } from './prepare-ops.ts';

function before(a: SessionRecord, atMs: number, id: string): boolean {
  return a.created_at_ms < atMs || (a.created_at_ms === atMs && a.session_id < id);
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  if (a === b) return true;
  let n = 0;
  for (const k in a) {
    if (!Object.hasOwn(b, k) || a[k] !== b[k]) return false;
    n++;
  }
  for (const _ in b) n--;
  return n === 0;
}

/** Session records by id plus a sorted array for ordered, paged listing. Values are stored as given. */
export class SessionIndex {
  readonly #byId = new Map<string, SessionRecord>();
  readonly #ordered: SessionRecord[] = [];
  /** labelKey → ids of the sessions carrying that label (archived included; filtered at read). */
  readonly #byLabel = new Map<string, Set<string>>();

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
    if (old === undefined || !sameLabels(old.labels, record.labels)) {
      if (old !== undefined) for (const [k, v] of Object.entries(old.labels)) this.#byLabel.get(labelKey(k, v))?.delete(old.session_id);
      for (const [k, v] of Object.entries(record.labels)) {
        const key = labelKey(k, v);
        let ids = this.#byLabel.get(key);
        if (!ids) this.#byLabel.set(key, (ids = new Set()));
        ids.add(record.session_id);
      }
    }
    this.#ordered.splice(this.#position(record.created_at_ms, record.session_id), 0, record);
    this.#byId.set(record.session_id, record);
  }

  /** Records in creation order; archived ones only when asked. */
  list(opts: ListSessionsOptions = {}): SessionRecord[] {
    const { offset, limit } = pageBounds(opts.offset, opts.limit);
    if (limit === 0) return [];
    if (opts.labels?.length) return this.#listLabelled(opts.labels, offset, limit, opts.includeArchived ?? false);
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

  /** The sessions carrying every label, from the smallest label set, in creation order, paged. */
  #listLabelled(filters: LabelFilters, offset: number, limit: number, includeArchived: boolean): SessionRecord[] {
    let smallest: Set<string> | undefined;
    for (const [k, v] of filters) {
      const ids = this.#byLabel.get(labelKey(k, v));
      if (!ids || ids.size === 0) return [];
      if (!smallest || ids.size < smallest.size) smallest = ids;
    }
    const hits: SessionRecord[] = [];
    for (const id of smallest!) {
      const r = this.#byId.get(id);
      if (r && (includeArchived || !r.archived) && matchesLabels(r, filters)) hits.push(r);
    }
    hits.sort((a, b) => (before(a, b.created_at_ms, b.session_id) ? -1 : 1));
    return hits.slice(offset, offset + limit);
  }

  /** Every stored session, archived included. */
  count(): number {
    return this.#byId.size;
  }
}
