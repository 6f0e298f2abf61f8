// actors/workgraph/wg-host.ts: the realm's WorkGraph. Registers the `workgraph_namespace` actor kind with
// the actor registry (one NamespaceActor per namespace, hosting that namespace's work item machines) and
// offers the reads (list, get, ready, snapshot, events) and the agent mutations. The workgraph module
// (http/modules/workgraph-module.ts) builds one per server; the CLI builds one over a realm it opened
// itself. Tools, REST handlers and the CLI all go through it; goals and attention are in wg-goals.ts.
import { ServiceError } from '../../contracts/errors.ts';
import type { ActorRegistry, KindTable } from '../actor-registry.ts';
import type {
  WorkBlockInput,
  WorkClaimInput,
  WorkCloseInput,
  WorkCreateInput,
  WorkEventsInput,
  WorkEvidenceInput,
  WorkGetInput,
  WorkLinkInput,
  WorkListInput,
  WorkReadyInput,
  WorkReleaseInput,
  WorkUpdateInput,
} from '../../contracts/workgraph-inputs.ts';
import {
  DEFAULT_NAMESPACE,
  type WorkEdge,
  type WorkEvent,
  type WorkItem,
  type WorkSnapshot,
  type WorkStatus,
} from '../../contracts/workgraph.ts';
import type { WorkCaller } from '../../machines/work-item-machine.ts';
import { addEvidence, blockItem, claimItem, closeItem, createItem, linkItems, releaseItem, updateItem } from './wg-commands.ts';
import { cmp, hasLabels, isTerminal, statusOfRecord, type NamespaceGraph } from './wg-graph.ts';
import { NamespaceActor, type Tx, type WorkGraphDeps } from './wg-namespace.ts';
import { listNamespaces, namespacesWithLeases } from './wg-records.ts';

/** Trusted in-process host authority (the CLI's goal and attention commands). */
export const HOST_CALLER: WorkCaller = { owner: { key: { kind: 'principal', id: 'host' }, display_name: 'host' }, host: true };

/** The caller identity of an agent session's tool calls. */
export function sessionCaller(sessionId: string): WorkCaller {
  return { owner: { key: { kind: 'session', id: sessionId } }, host: false };
}

const EVENTS_PAGE_MAX = 10_000;

/** The actor kind's name in the registry: one actor per namespace. */
export const WORKGRAPH_KIND = 'workgraph_namespace';

export class WorkGraphHost {
  readonly #table: KindTable<NamespaceActor>;

  constructor(
    readonly deps: WorkGraphDeps,
    registry: ActorRegistry,
  ) {
    this.#table = registry.register<NamespaceActor>({
      kind: WORKGRAPH_KIND,
      // A namespace with live leases stays resident (busy) so that its lease timer observes every expiry.
      policy: { idleEvictMs: 10 * 60_000, maxResident: 10_000 },
      hydrate: async (ns) => new NamespaceActor(ns, deps),
      busy: (a) => a.busy,
      stop: (a) => a.close(),
      describe: (a) => ({ state: a.busy ? 'active' : 'idle', labels: { namespace: a.namespace } }),
      serialized: false,
    });
  }

  get realmId(): string {
    return this.deps.realmId;
  }

  /** Runs `fn` in the mailbox of the namespace's actor (default `default`): one transaction for what it writes. */
  async run<T>(namespace: string | undefined, fn: (tx: Tx) => T): Promise<T> {
    if (this.#table.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'the WorkGraph is shutting down');
    const actor = await this.#table.get(namespace ?? DEFAULT_NAMESPACE);
    return actor.send(fn);
  }

  /**
   * Wakes every namespace that holds a live lease (after a restart nothing else would): its first
   * message expires the leases already due and arms the timer for the rest.
   */
  async resumeLeases(): Promise<void> {
    for (const ns of await namespacesWithLeases(this.deps.store)) await this.run(ns, () => undefined);
  }

  /** Namespaces with stored data, sorted. */
  async namespaces(): Promise<string[]> {
    return listNamespaces(this.deps.store);
  }

  checkRealm(realmId: string | undefined): void {
    if (realmId !== undefined && realmId !== this.deps.realmId) {
      throw new ServiceError('BAD_REQUEST', `unknown realm '${realmId}': this host serves realm '${this.deps.realmId}'`, {
        realm_id: realmId,
      });
    }
  }

  get(q: WorkGetInput): Promise<WorkItem> {
    return this.run(q.namespace, (tx) => tx.graph.project(tx.graph.require(q.item_id)));
  }

  async list(q: WorkListInput): Promise<WorkItem[]> {
    let out: WorkItem[] = [];
    for (const ns of await this.#scope(q))
      out = out.concat(await this.run(ns, (tx) => filtered(tx.graph, q).map((r) => tx.graph.project(r))));
    return q.limit === undefined ? out : out.slice(0, q.limit);
  }

  ready(q: WorkReadyInput): Promise<WorkItem[]> {
    return this.run(q.namespace, (tx) => tx.graph.ready(tx.now, q.labels ?? [], q.limit).map((r) => tx.graph.project(r)));
  }

  async snapshot(q: WorkListInput): Promise<WorkSnapshot> {
    const parts = await Promise.all(
      (await this.#scope(q)).map((ns) =>
        this.run(ns, (tx) => {
          const g = tx.graph;
          const recs = filtered(g, q);
          const ids = new Set(recs.map((r) => r.fields.id));
          const edges: WorkEdge[] = [...g.edges.values()].filter((e) => ids.has(e.from_id) || ids.has(e.to_id));
          return {
            items: recs.map((r) => g.project(r)),
            edges,
            ready: g.ready(tx.now).map((r) => r.fields.id),
            attention: [...g.attention.values()],
            seq: g.seq,
            now: tx.now,
          };
        }),
      ),
    );
    const all = q.all_namespaces === true;
    const snap: WorkSnapshot = {
      realm_id: this.deps.realmId,
      all_namespaces: all,
      items: parts.flatMap((p) => p.items),
      edges: parts.flatMap((p) => p.edges),
      ready_item_ids: parts.flatMap((p) => p.ready),
      attention: parts.flatMap((p) => p.attention),
      captured_at: new Date(parts[0]?.now ?? this.deps.now()).toISOString(),
    };
    if (q.limit !== undefined) snap.items = snap.items.slice(0, q.limit);
    if (!all) {
      snap.namespace = q.namespace ?? DEFAULT_NAMESPACE;
      snap.event_high_water_mark = parts[0]?.seq ?? 0;
    }
    return snap;
  }

  /** Events with seq > after_seq, oldest first (wire-notes 2.5 `after_seq` paging). */
  events(q: WorkEventsInput): Promise<{ events: WorkEvent[]; has_more: boolean }> {
    const limit = Math.min(q.limit ?? 1000, EVENTS_PAGE_MAX);
    return this.run(q.namespace, (tx) => {
      const evs = tx.graph.events;
      const start = firstAfter(evs, q.after_seq ?? 0);
      return { events: evs.slice(start, start + limit), has_more: start + limit < evs.length };
    });
  }

  create(input: WorkCreateInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => createItem(tx, input));
  }
  claim(by: WorkCaller, input: WorkClaimInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => claimItem(tx, by, input));
  }
  release(by: WorkCaller, input: WorkReleaseInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => releaseItem(tx, by, input));
  }
  update(by: WorkCaller, input: WorkUpdateInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => updateItem(tx, by, input));
  }
  block(by: WorkCaller, input: WorkBlockInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => blockItem(tx, by, input));
  }
  close(by: WorkCaller, input: WorkCloseInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => closeItem(tx, by, input));
  }
  link(by: WorkCaller, input: WorkLinkInput): Promise<WorkEdge> {
    return this.run(input.namespace, (tx) => linkItems(tx, by, input));
  }
  addEvidence(by: WorkCaller, input: WorkEvidenceInput): Promise<WorkItem> {
    return this.run(input.namespace, (tx) => addEvidence(tx, by, input));
  }

  async #scope(q: { namespace?: string; all_namespaces?: boolean }): Promise<string[]> {
    if (q.all_namespaces === true) return this.namespaces();
    return [q.namespace ?? DEFAULT_NAMESPACE];
  }
}

/** Items matching the list filters, oldest first: `statuses` if given, else non-terminal unless include_terminal. */
function filtered(g: NamespaceGraph, q: WorkListInput) {
  const statuses = q.statuses && q.statuses.length > 0 ? new Set<WorkStatus>(q.statuses) : undefined;
  const out = [];
  for (const rec of g.items.values()) {
    const s = statusOfRecord(rec);
    if (statuses ? !statuses.has(s) : isTerminal(s) && q.include_terminal !== true) continue;
    if (!hasLabels(rec, q.labels ?? [])) continue;
    out.push(rec);
  }
  return out.sort((a, b) => cmp(a.fields.created_at, b.fields.created_at) || cmp(a.fields.id, b.fields.id));
}

/** Index of the first event with seq > afterSeq (events are sorted by seq). */
function firstAfter(evs: readonly WorkEvent[], afterSeq: number): number {
  let lo = 0;
  let hi = evs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (evs[mid]!.seq <= afterSeq) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
