// actors/workgraph/wg-namespace.ts: the actor hosting one namespace of the WorkGraph. Its mailbox runs one
// message at a time: it re-reads the namespace when another process moved the stored head, expires due
// leases through each item's machine, runs the message, and commits everything that message wrote (items,
// edges, attention, events, the head) in ONE store transaction, guarded by the head revision it read: when
// another process (a cluster peer hosting the same namespace) committed first, the commit is refused and the
// message runs again on the namespace re-read. A lease timer re-arms at the earliest lease due time, so
// expiries are observed without a caller. wg-host.ts owns these actors.
import type { Logger } from 'pino';
import { initialTransition, transition } from 'xstate';
import type {
  WorkAttentionBinding,
  WorkCompletionPolicy,
  WorkEdge,
  WorkEvent,
  WorkEventKind,
  WorkFact,
} from '../../contracts/workgraph.ts';
import { workItemMachine, type WorkItemEvent, type WorkOutcome } from '../../machines/work-item-machine.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { NamespaceGraph } from './wg-graph.ts';
import { headOps, isHeadConflict, loadNamespace, putAttentionOp, putEdgeOp, putEventOp, putItemOp, readHead } from './wg-records.ts';
import type { StoredWorkItem, WorkItemFields } from '../../contracts/stored-records.ts';

export interface WorkGraphDeps {
  store: Store;
  realmId: string;
  /** Injected clock (epoch ms). */
  now(): number;
  log: Logger;
}

/** Drives one item's machine with the pure `transition()`; returns the next record and the machine's outcome. */
export function applyToItem(rec: StoredWorkItem, event: WorkItemEvent): { rec: StoredWorkItem; outcome: WorkOutcome } {
  const snap = workItemMachine.resolveState({ value: rec.machine.value, context: rec.machine.context as never });
  const [next] = transition(workItemMachine, snap, event);
  const outcome = next.context.outcome ?? { ok: false, reason: 'terminal', message: 'event not handled' };
  const context = { ...next.context, outcome: null };
  return { rec: { ...rec, machine: { value: String(next.value), context } }, outcome };
}

/** A new item's record, its machine in its initial state (revision 1). */
export function newItemRecord(fields: WorkItemFields, policy: WorkCompletionPolicy): StoredWorkItem {
  const [snap] = initialTransition(workItemMachine, { itemId: fields.id, policy });
  return { v: 1, fields, machine: { value: String(snap.value), context: { ...snap.context } } };
}

/** What one message writes; committed as one transaction after the message returns. */
export class Tx {
  readonly #items = new Map<string, StoredWorkItem>();
  readonly #other: StoreOp[] = [];
  readonly events: WorkEvent[] = [];

  constructor(
    readonly graph: NamespaceGraph,
    readonly now: number,
  ) {}

  get empty(): boolean {
    return this.#items.size === 0 && this.#other.length === 0 && this.events.length === 0;
  }

  putItem(rec: StoredWorkItem): void {
    this.graph.putItem(rec);
    this.#items.set(rec.fields.id, rec);
  }

  putEdge(edge: WorkEdge): void {
    this.graph.putEdge(edge);
    this.#other.push(putEdgeOp(this.graph.namespace, edge));
  }

  putAttention(binding: WorkAttentionBinding): void {
    this.graph.attention.set(binding.binding_id, binding);
    this.#other.push(putAttentionOp(this.graph.namespace, binding));
  }

  event(kind: WorkEventKind, itemId: string | undefined, payload?: unknown, facts: WorkFact[] = []): WorkEvent {
    const g = this.graph;
    const ev: WorkEvent = { seq: ++g.seq, realm_id: g.realmId, namespace: g.namespace, kind, at: new Date(this.now).toISOString() };
    if (itemId !== undefined) ev.item_id = itemId;
    if (payload !== undefined) ev.payload = payload;
    if (facts.length > 0) ev.facts = facts;
    g.events.push(ev);
    this.events.push(ev);
    return ev;
  }

  ops(): StoreOp[] {
    const ns = this.graph.namespace;
    const head = headOps(ns, this.graph.headRev, this.graph.seq, this.graph.nextLeaseDue());
    this.#rev = head.rev;
    return [
      ...head.ops,
      ...[...this.#items.values()].map((r) => putItemOp(ns, r)),
      ...this.#other,
      ...this.events.map((e) => putEventOp(ns, e)),
    ];
  }

  #rev: number | undefined;

  /** Commits what the message wrote; the graph then stands at the new head revision. */
  async commit(store: Store): Promise<void> {
    if (this.empty) return;
    await store.commit(this.ops());
    this.graph.headRev = this.#rev;
  }
}

/**
 * How many times a message runs again after a peer moved the namespace's head under it; each retry waits a
 * random pause growing with the attempt, so peers contending for one namespace do not keep colliding.
 */
const HEAD_RETRIES = 32;
const backoff = (attempt: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 2 ** Math.min(attempt + 1, 7))));

/** item_ready facts for the given items that are ready now but were not in `before`. */
export function readyFacts(g: NamespaceGraph, ids: Iterable<string>, before: ReadonlySet<string>, now: number): WorkFact[] {
  const facts: WorkFact[] = [];
  for (const id of ids) {
    if (!before.has(id) && g.isReady(id, now))
      facts.push({ kind: 'item_ready', item_id: id, item_revision: g.require(id).machine.context.revision });
  }
  return facts;
}

const MAX_TIMER_MS = 2 ** 31 - 1;

/** The actor hosting one namespace (registered as kind `workgraph_namespace` by wg-host.ts). */
export class NamespaceActor {
  lastUsedMs: number;
  #pending = 0;
  #graph: NamespaceGraph | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(
    readonly namespace: string,
    readonly deps: WorkGraphDeps,
  ) {
    this.lastUsedMs = deps.now();
  }

  get id(): string {
    return this.namespace;
  }

  /** Messages pending, or live leases whose expiry the timer must still observe. */
  get busy(): boolean {
    return this.#pending > 0 || (this.#graph?.leases.size ?? 0) > 0;
  }

  /**
   * Runs `fn` alone in the mailbox on a fresh graph (due leases already expired) and commits what it wrote
   * in one transaction before resolving. If `fn` throws after writing, or the commit fails, the in-memory
   * graph is dropped and re-read from storage by the next message.
   */
  send<T>(fn: (tx: Tx) => T): Promise<T> {
    this.lastUsedMs = this.deps.now();
    this.#pending++;
    const run = this.#tail
      .then(async () => {
        for (let attempt = 0; ; attempt++) {
          const graph = await this.#fresh();
          const tx = new Tx(graph, this.deps.now());
          try {
            await this.#expireDue(graph);
            const result = fn(tx);
            await tx.commit(this.deps.store);
            return result;
          } catch (err) {
            if (!tx.empty || isHeadConflict(err, this.namespace)) this.#graph = null;
            // A peer committed first: `fn` is synchronous over the graph, so it runs again on the state re-read.
            if (!isHeadConflict(err, this.namespace) || attempt >= HEAD_RETRIES) throw err;
          } finally {
            this.#arm();
          }
          await backoff(attempt);
        }
      })
      .finally(() => {
        this.#pending--;
      });
    this.#tail = run.catch(() => undefined);
    return run;
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#tail;
  }

  async #fresh(): Promise<NamespaceGraph> {
    const { store, realmId } = this.deps;
    if (this.#graph !== null) {
      const head = await readHead(store, this.namespace);
      if (head.seq === this.#graph.seq && head.rev === this.#graph.headRev) return this.#graph;
    }
    this.#graph = new NamespaceGraph(realmId, this.namespace, await loadNamespace(store, this.namespace));
    return this.#graph;
  }

  /** Expires every due lease through its item's machine (lease.check), in one transaction. */
  async #expireDue(graph: NamespaceGraph): Promise<void> {
    const now = this.deps.now();
    const due = [...graph.leases].filter(([, at]) => at <= now).map(([id]) => id);
    if (due.length === 0) return;
    const tx = new Tx(graph, now);
    try {
      for (const id of due) {
        const before = new Set(graph.isReady(id, now) ? [id] : []);
        const { rec, outcome } = applyToItem(graph.require(id), { type: 'lease.check', now });
        if (!outcome.ok) continue;
        tx.putItem(rec);
        tx.event('released', id, { reason: 'lease_expired' }, [...outcome.facts, ...readyFacts(graph, [id], before, now)]);
      }
      await tx.commit(this.deps.store);
    } catch (err) {
      this.#graph = null;
      throw err;
    }
  }

  /** (Re-)arms the lease timer at the earliest due lease; the tick is an empty message. */
  #arm(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    const due = this.#graph?.nextLeaseDue();
    if (due === undefined || this.#closed) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, due - this.deps.now()) + 1);
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.send(() => undefined).catch((err: unknown) =>
        this.deps.log.error({ err, namespace: this.namespace }, 'workgraph lease sweep failed'),
      );
    }, delay);
    this.#timer.unref();
  }
}
