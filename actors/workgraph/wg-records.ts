// actors/workgraph/wg-records.ts: how the WorkGraph lies on the Store's generic records. Per namespace:
// items, edges, the append-only event log (keys are zero-padded seqs, so key order is seq order) and
// attention bindings; one `wg/meta` record per namespace carries the event high-water mark. Every record
// carries `v` and is read through its record kind (storage/record-kinds.ts; schemas in
// contracts/stored-records.ts). Only actors/workgraph/* read or write these.
import { ServiceError } from '../../contracts/errors.ts';
import type { StoredWorkItem, StoredWorkMeta } from '../../contracts/stored-records.ts';
import type { WorkAttentionBinding, WorkEdge, WorkEvent } from '../../contracts/workgraph.ts';
import {
  namespaceOf,
  readRecord,
  readRecords,
  WG_ATTENTION_KIND,
  WG_EDGE_KIND,
  WG_EVENT_KIND,
  WG_ITEM_KIND,
  WG_META_KIND,
} from '../../storage/record-kinds.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

export const META_NS = namespaceOf(WG_META_KIND);
const itemsNs = (ns: string): string => namespaceOf(WG_ITEM_KIND, ns);
const edgesNs = (ns: string): string => namespaceOf(WG_EDGE_KIND, ns);
const eventsNs = (ns: string): string => namespaceOf(WG_EVENT_KIND, ns);
const attentionNs = (ns: string): string => namespaceOf(WG_ATTENTION_KIND, ns);
export const edgeKey = (e: Pick<WorkEdge, 'from_id' | 'to_id' | 'kind'>): string => `${e.from_id}|${e.kind}|${e.to_id}`;
const seqKey = (seq: number): string => String(seq).padStart(15, '0');

export const putItemOp = (ns: string, rec: StoredWorkItem): StoreOp => ({
  op: 'putRecord',
  ns: itemsNs(ns),
  key: rec.fields.id,
  value: rec,
});
export const putEdgeOp = (ns: string, edge: WorkEdge): StoreOp => ({
  op: 'putRecord',
  ns: edgesNs(ns),
  key: edgeKey(edge),
  value: { v: 1, edge },
});
export const putEventOp = (ns: string, event: WorkEvent): StoreOp => ({
  op: 'putRecord',
  ns: eventsNs(ns),
  key: seqKey(event.seq),
  value: { v: 1, event },
});
export const putAttentionOp = (ns: string, binding: WorkAttentionBinding): StoreOp => ({
  op: 'putRecord',
  ns: attentionNs(ns),
  key: binding.binding_id,
  value: { v: 1, binding },
});
export const putMetaOp = (ns: string, seq: number, nextLeaseDue?: number, rev?: number): StoreOp => {
  const value: StoredWorkMeta = { v: 1, seq };
  if (nextLeaseDue !== undefined) value.next_lease_due_ms = nextLeaseDue;
  if (rev !== undefined) value.rev = rev;
  return { op: 'putRecord', ns: META_NS, key: ns, value };
};

/** The namespace head a commit was computed from: its high-water mark and revision (null: no head stored yet). */
export interface Head {
  seq: number;
  /** Undefined for a head stored without a revision (written before revisions existed). */
  rev: number | null | undefined;
}

/**
 * The commit's head guard and new head: the stored head must still be the one read (`checkRecord` on its
 * revision), and the commit stores it one revision later. A head stored without a revision cannot be
 * checked; its first commit gives it revision 1.
 */
export function headOps(ns: string, readRev: Head['rev'], seq: number, nextLeaseDue: number | undefined): { ops: StoreOp[]; rev: number } {
  const rev = (readRev ?? 0) + 1;
  const guard: StoreOp[] = readRev === undefined ? [] : [{ op: 'checkRecord', ns: META_NS, key: ns, rev: readRev }];
  return { ops: [...guard, putMetaOp(ns, seq, nextLeaseDue, rev)], rev };
}

/** True when `err` is a commit refused because the namespace's head moved since it was read. */
export function isHeadConflict(err: unknown, ns: string): boolean {
  if (!(err instanceof ServiceError) || err.code !== 'CONFLICT') return false;
  const d = err.details as { ns?: unknown; key?: unknown } | undefined;
  return d?.ns === META_NS && d.key === ns;
}

/** Everything stored for one namespace. */
export interface NamespaceRecords {
  seq: number;
  /** The head revision read with the records (see Head; omitted: none stored). */
  rev?: number | null;
  items: StoredWorkItem[];
  edges: WorkEdge[];
  events: WorkEvent[];
  attention: WorkAttentionBinding[];
}

/** The namespace's head as stored (seq 0, rev null when the namespace has never been written). */
export async function readHead(store: Store, ns: string): Promise<Head> {
  const meta = await readRecord<StoredWorkMeta>(store, WG_META_KIND, ns);
  if (meta === undefined) return { seq: 0, rev: null };
  return { seq: meta.seq, rev: meta.rev };
}

/** Namespaces holding a live lease (from their stored high-water marks). */
export async function namespacesWithLeases(store: Store): Promise<string[]> {
  return (await readRecords<StoredWorkMeta>(store, WG_META_KIND)).filter((r) => r.value.next_lease_due_ms !== undefined).map((r) => r.key);
}

/** Namespaces that hold any WorkGraph data, sorted. */
export async function listNamespaces(store: Store): Promise<string[]> {
  return (await store.listRecords(META_NS)).map((r) => r.key).sort();
}

/** Reads a whole namespace. */
export async function loadNamespace(store: Store, ns: string): Promise<NamespaceRecords> {
  const [head, items, edges, events, attention] = await Promise.all([
    readHead(store, ns),
    readRecords<StoredWorkItem>(store, WG_ITEM_KIND, ns),
    readRecords<{ edge: WorkEdge }>(store, WG_EDGE_KIND, ns),
    readRecords<{ event: WorkEvent }>(store, WG_EVENT_KIND, ns),
    readRecords<{ binding: WorkAttentionBinding }>(store, WG_ATTENTION_KIND, ns),
  ]);
  return {
    seq: head.seq,
    rev: head.rev,
    items: items.map((r) => r.value),
    edges: edges.map((r) => r.value.edge),
    events: events.map((r) => r.value.event).sort((a, b) => a.seq - b.seq),
    attention: attention.map((r) => r.value.binding),
  };
}
