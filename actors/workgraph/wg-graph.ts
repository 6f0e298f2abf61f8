// actors/workgraph/wg-graph.ts: one namespace's graph in memory: items (fields + machine snapshot), edges
// with their indexes, the event log and attention bindings. Holds the graph rules: edge validation
// (endpoints, self edges, duplicates, cycles for `blocks` and `parent`) and readiness (no unresolved
// blocker, gates passed). No IO: the namespace actor (wg-namespace.ts) loads, mutates and persists it.
import { ServiceError } from '../../contracts/errors.ts';
import type { WorkAttentionBinding, WorkEdge, WorkEdgeKind, WorkEvent, WorkItem, WorkStatus } from '../../contracts/workgraph.ts';
import type { WorkItemContext } from '../../machines/work-item-machine.ts';
import type { StoredWorkItem } from '../../contracts/stored-records.ts';
import { edgeKey, type NamespaceRecords } from './wg-records.ts';

/** A blocker resolves once it completed or was cancelled; a failed blocker keeps blocking. */
const RESOLVED: ReadonlySet<WorkStatus> = new Set(['completed', 'cancelled']);
const TERMINAL: ReadonlySet<WorkStatus> = new Set(['completed', 'cancelled', 'failed']);
const PRIORITY_RANK = { high: 0, medium: 1, low: 2 } as const;
const CYCLE_KINDS: ReadonlySet<WorkEdgeKind> = new Set(['blocks', 'parent']);

export const isTerminal = (s: WorkStatus): boolean => TERMINAL.has(s);
const iso = (ms: number): string => new Date(ms).toISOString();

export function statusOfRecord(rec: StoredWorkItem): WorkStatus {
  return rec.machine.value as WorkStatus;
}
export function contextOf(rec: StoredWorkItem): WorkItemContext {
  return rec.machine.context as unknown as WorkItemContext;
}

export class NamespaceGraph {
  readonly items = new Map<string, StoredWorkItem>();
  readonly edges = new Map<string, WorkEdge>();
  /** Outgoing and incoming edges per item id. */
  readonly #out = new Map<string, Set<string>>();
  readonly #in = new Map<string, Set<string>>();
  readonly events: WorkEvent[] = [];
  readonly attention = new Map<string, WorkAttentionBinding>();
  /** Claimed items with a lease: item id → lease due time (ms). */
  readonly leases = new Map<string, number>();
  seq = 0;
  /** The stored head revision this graph was read at (wg-records.ts Head): the next commit checks it. */
  headRev: number | null | undefined = null;
  /** Bumped by every item or edge change; keys the ready-order cache. */
  #version = 0;
  #readyCache: { version: number; sorted: StoredWorkItem[] } | null = null;

  constructor(
    readonly realmId: string,
    readonly namespace: string,
    recs?: NamespaceRecords,
  ) {
    if (!recs) return;
    this.seq = recs.seq;
    this.headRev = 'rev' in recs ? recs.rev : null;
    for (const item of recs.items) this.putItem(item);
    for (const edge of recs.edges) this.putEdge(edge);
    // Not push(...events): a spread of 100k+ arguments overflows the stack.
    for (const e of recs.events) this.events.push(e);
    for (const b of recs.attention) this.attention.set(b.binding_id, b);
  }

  putItem(rec: StoredWorkItem): void {
    this.#version++;
    this.items.set(rec.fields.id, rec);
    const due = contextOf(rec).claim?.lease_expires_at_ms;
    if (due != null) this.leases.set(rec.fields.id, due);
    else this.leases.delete(rec.fields.id);
  }

  putEdge(edge: WorkEdge): void {
    this.#version++;
    const key = edgeKey(edge);
    this.edges.set(key, edge);
    for (const [index, id] of [
      [this.#out, edge.from_id],
      [this.#in, edge.to_id],
    ] as const) {
      let set = index.get(id);
      if (!set) index.set(id, (set = new Set()));
      set.add(key);
    }
  }

  outgoing(id: string, kind?: WorkEdgeKind): WorkEdge[] {
    return [...(this.#out.get(id) ?? [])].map((k) => this.edges.get(k)!).filter((e) => kind === undefined || e.kind === kind);
  }

  incoming(id: string, kind?: WorkEdgeKind): WorkEdge[] {
    return [...(this.#in.get(id) ?? [])].map((k) => this.edges.get(k)!).filter((e) => kind === undefined || e.kind === kind);
  }

  require(id: string): StoredWorkItem {
    const rec = this.items.get(id);
    if (!rec) throw new ServiceError('NOT_FOUND', `work item not found: ${id}`, { item_id: id, namespace: this.namespace });
    return rec;
  }

  /**
   * Throws BAD_REQUEST when the edge may not be added: an unknown endpoint, a self edge, a duplicate, or
   * (for `blocks` and `parent`) a cycle through edges of the same kind.
   */
  checkEdge(from: string, to: string, kind: WorkEdgeKind): void {
    for (const id of [from, to]) {
      if (!this.items.has(id))
        throw new ServiceError('BAD_REQUEST', `invalid edge endpoint: no work item ${id}`, { reason: 'invalid_endpoint', item_id: id });
    }
    if (from === to) throw new ServiceError('BAD_REQUEST', `a ${kind} edge cannot link ${from} to itself`, { reason: 'self_edge' });
    if (this.edges.has(edgeKey({ from_id: from, to_id: to, kind }))) {
      throw new ServiceError('BAD_REQUEST', `duplicate edge: ${from} ${kind} ${to}`, { reason: 'duplicate_edge' });
    }
    if (CYCLE_KINDS.has(kind) && this.#reaches(to, from, kind)) {
      throw new ServiceError('BAD_REQUEST', `the ${kind} edge ${from} -> ${to} would create a cycle`, { reason: 'cycle' });
    }
  }

  /** True when `target` is reachable from `start` along edges of `kind`. */
  #reaches(start: string, target: string, kind: WorkEdgeKind): boolean {
    const seen = new Set<string>([start]);
    const stack = [start];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (id === target) return true;
      for (const e of this.outgoing(id, kind)) {
        if (!seen.has(e.to_id)) {
          seen.add(e.to_id);
          stack.push(e.to_id);
        }
      }
    }
    return false;
  }

  /** Blockers (sources of `blocks` edges into `id`) that have not resolved. */
  unresolvedBlockers(id: string): number {
    const keys = this.#in.get(id);
    if (keys === undefined) return 0;
    let n = 0;
    for (const key of keys) {
      const e = this.edges.get(key)!;
      if (e.kind !== 'blocks') continue;
      const src = this.items.get(e.from_id);
      if (src && !RESOLVED.has(statusOfRecord(src))) n++;
    }
    return n;
  }

  gatesOpen(rec: StoredWorkItem, now: number): boolean {
    const { not_before, snoozed_until } = rec.fields;
    if (not_before === undefined && snoozed_until === undefined) return true;
    return (not_before === undefined || Date.parse(not_before) <= now) && (snoozed_until === undefined || Date.parse(snoozed_until) <= now);
  }

  isReady(id: string, now: number): boolean {
    const rec = this.items.get(id);
    return rec !== undefined && statusOfRecord(rec) === 'open' && this.gatesOpen(rec, now) && this.unresolvedBlockers(id) === 0;
  }

  /**
   * Ready items, best first: priority, then due time, then creation, then id. The order of the items that
   * are open with no unresolved blocker is computed once per graph version; time gates and labels are
   * applied per call, so an unchanged graph answers in O(limit).
   */
  ready(now: number, labels: readonly string[] = [], limit = Number.POSITIVE_INFINITY): StoredWorkItem[] {
    if (this.#readyCache?.version !== this.#version) {
      const sorted: StoredWorkItem[] = [];
      for (const rec of this.items.values()) {
        if (statusOfRecord(rec) === 'open' && this.unresolvedBlockers(rec.fields.id) === 0) sorted.push(rec);
      }
      this.#readyCache = { version: this.#version, sorted: sorted.sort(compareReady) };
    }
    const out: StoredWorkItem[] = [];
    for (const rec of this.#readyCache.sorted) {
      if (out.length >= limit) break;
      if (this.gatesOpen(rec, now) && hasLabels(rec, labels)) out.push(rec);
    }
    return out;
  }

  allTerminal(): boolean {
    for (const rec of this.items.values()) if (!isTerminal(statusOfRecord(rec))) return false;
    return this.items.size > 0;
  }

  /** The earliest lease due time, or undefined. */
  nextLeaseDue(): number | undefined {
    let min: number | undefined;
    for (const due of this.leases.values()) if (min === undefined || due < min) min = due;
    return min;
  }

  /** Records are replaced, never mutated, on change: a projection is computed once per record version. */
  readonly #projected = new WeakMap<StoredWorkItem, WorkItem>();

  project(rec: StoredWorkItem): WorkItem {
    let item = this.#projected.get(rec);
    if (item === undefined) this.#projected.set(rec, (item = this.#projectOnce(rec)));
    return item;
  }

  #projectOnce(rec: StoredWorkItem): WorkItem {
    const c = contextOf(rec);
    const f = rec.fields;
    const item: WorkItem = {
      id: f.id,
      realm_id: this.realmId,
      namespace: this.namespace,
      title: f.title,
      status: statusOfRecord(rec),
      priority: f.priority,
      completion_policy: c.policy,
      labels: f.labels,
      machine_state: { machine: 'work-item', version: '1', state: rec.machine.value },
      revision: c.revision,
      created_at: f.created_at,
      updated_at: f.updated_at,
      external_refs: f.external_refs,
      evidence_refs: c.evidence,
    };
    if (f.description !== undefined) item.description = f.description;
    if (f.owner !== undefined) item.owner = f.owner;
    if (c.claim) {
      item.claim = { owner: c.claim.owner, claimed_at: iso(c.claim.claimed_at_ms) };
      if (c.claim.lease_expires_at_ms !== null) item.claim.lease_expires_at = iso(c.claim.lease_expires_at_ms);
    }
    for (const k of ['due_at', 'not_before', 'snoozed_until'] as const) if (f[k] !== undefined) item[k] = f[k];
    if (c.terminalAtMs !== null) item.terminal_at = iso(c.terminalAtMs);
    if (c.blockedReason !== null) item.blocked_reason = c.blockedReason;
    return item;
  }
}

export function hasLabels(rec: StoredWorkItem, labels: readonly string[]): boolean {
  return labels.every((l) => rec.fields.labels.includes(l));
}

/** Code-unit order (RFC 3339 UTC times and ids compare correctly that way; localeCompare is slow). */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareReady(a: StoredWorkItem, b: StoredWorkItem): number {
  const fa = a.fields;
  const fb = b.fields;
  return (
    PRIORITY_RANK[fa.priority] - PRIORITY_RANK[fb.priority] ||
    cmp(fa.due_at ?? '\uffff', fb.due_at ?? '\uffff') ||
    cmp(fa.created_at, fb.created_at) ||
    cmp(fa.id, fb.id)
  );
}
