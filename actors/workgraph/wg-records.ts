// actors/workgraph/wg-records.ts: how the WorkGraph lies on the Store's generic records. Per namespace:
// items, edges, the append-only event log (keys are zero-padded seqs, so key order is seq order) and
// attention bindings; one `wg/meta` record per namespace carries the event high-water mark. Every record
// carries `v` and is validated on read. Only actors/workgraph/* read or write these.
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../../contracts/errors.ts';
import {
  ExternalWorkRef, WorkAttentionBinding, WorkEdge, WorkEvent, WorkOwner, WorkPriority,
} from '../../contracts/workgraph.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

export const META_NS = 'wg/meta';
export const itemsNs = (ns: string): string => `wg/${ns}/items`;
export const edgesNs = (ns: string): string => `wg/${ns}/edges`;
export const eventsNs = (ns: string): string => `wg/${ns}/events`;
export const attentionNs = (ns: string): string => `wg/${ns}/attention`;
export const edgeKey = (e: Pick<WorkEdge, 'from_id' | 'to_id' | 'kind'>): string => `${e.from_id}|${e.kind}|${e.to_id}`;
export const seqKey = (seq: number): string => String(seq).padStart(15, '0');

/** The item fields the host owns (the machine owns status, claim, revision, evidence). */
export const ItemFields = Type.Object({
  id: Type.String(),
  title: Type.String(),
  description: Type.Optional(Type.String()),
  priority: WorkPriority,
  labels: Type.Array(Type.String()),
  owner: Type.Optional(WorkOwner),
  due_at: Type.Optional(Type.String()),
  not_before: Type.Optional(Type.String()),
  snoozed_until: Type.Optional(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
  external_refs: Type.Array(ExternalWorkRef),
});
export type ItemFields = Static<typeof ItemFields>;

/** The persisted machine snapshot: its state value and context (outcome dropped). */
const MachineRecord = Type.Object({ value: Type.String(), context: Type.Object({ revision: Type.Integer() }, { additionalProperties: true }) });

const ItemRecord = Type.Object({ v: Type.Literal(1), fields: ItemFields, machine: MachineRecord });
export type ItemRecord = Static<typeof ItemRecord>;
const EdgeRecord = Type.Object({ v: Type.Literal(1), edge: WorkEdge });
const EventRecord = Type.Object({ v: Type.Literal(1), event: WorkEvent });
const AttentionRecord = Type.Object({ v: Type.Literal(1), binding: WorkAttentionBinding });
/** `next_lease_due_ms`: earliest live lease, so a restarted server re-arms the namespace's lease timer. */
const MetaRecord = Type.Object({ v: Type.Literal(1), seq: Type.Integer({ minimum: 0 }), next_lease_due_ms: Type.Optional(Type.Number()) });
export type MetaRecord = Static<typeof MetaRecord>;

const checks = {
  item: Compile(ItemRecord), edge: Compile(EdgeRecord), event: Compile(EventRecord), attention: Compile(AttentionRecord), meta: Compile(MetaRecord),
};

function decode<T>(check: { Check(v: unknown): boolean }, what: string, key: string, value: unknown): T {
  if (!check.Check(value)) throw new ServiceError('SESSION_STORE_ERROR', `corrupt WorkGraph ${what} record at ${key}`);
  return value as T;
}

export const putItemOp = (ns: string, rec: ItemRecord): StoreOp => ({ op: 'putRecord', ns: itemsNs(ns), key: rec.fields.id, value: rec });
export const putEdgeOp = (ns: string, edge: WorkEdge): StoreOp => ({ op: 'putRecord', ns: edgesNs(ns), key: edgeKey(edge), value: { v: 1, edge } });
export const putEventOp = (ns: string, event: WorkEvent): StoreOp => ({ op: 'putRecord', ns: eventsNs(ns), key: seqKey(event.seq), value: { v: 1, event } });
export const putAttentionOp = (ns: string, binding: WorkAttentionBinding): StoreOp =>
  ({ op: 'putRecord', ns: attentionNs(ns), key: binding.binding_id, value: { v: 1, binding } });
export const putMetaOp = (ns: string, seq: number, nextLeaseDue?: number): StoreOp =>
  ({ op: 'putRecord', ns: META_NS, key: ns, value: nextLeaseDue === undefined ? { v: 1, seq } : { v: 1, seq, next_lease_due_ms: nextLeaseDue } });

/** Everything stored for one namespace. */
export interface NamespaceRecords {
  seq: number;
  items: ItemRecord[];
  edges: WorkEdge[];
  events: WorkEvent[];
  attention: WorkAttentionBinding[];
}

/** The namespace's event high-water mark as stored (0 when the namespace has never been written). */
export async function readSeq(store: Store, ns: string): Promise<number> {
  const raw = await store.getRecord(META_NS, ns);
  return raw === undefined ? 0 : decode<MetaRecord>(checks.meta, 'meta', ns, raw).seq;
}

/** Namespaces holding a live lease (from their stored high-water marks). */
export async function namespacesWithLeases(store: Store): Promise<string[]> {
  return (await store.listRecords(META_NS))
    .filter((r) => decode<MetaRecord>(checks.meta, 'meta', r.key, r.value).next_lease_due_ms !== undefined)
    .map((r) => r.key);
}

/** Namespaces that hold any WorkGraph data, sorted. */
export async function listNamespaces(store: Store): Promise<string[]> {
  return (await store.listRecords(META_NS)).map((r) => r.key).sort();
}

/** Reads a whole namespace. */
export async function loadNamespace(store: Store, ns: string): Promise<NamespaceRecords> {
  const [seq, items, edges, events, attention] = await Promise.all([
    readSeq(store, ns),
    store.listRecords(itemsNs(ns)),
    store.listRecords(edgesNs(ns)),
    store.listRecords(eventsNs(ns)),
    store.listRecords(attentionNs(ns)),
  ]);
  return {
    seq,
    items: items.map((r) => decode<ItemRecord>(checks.item, 'item', r.key, r.value)),
    edges: edges.map((r) => decode<{ edge: WorkEdge }>(checks.edge, 'edge', r.key, r.value).edge),
    events: events.map((r) => decode<{ event: WorkEvent }>(checks.event, 'event', r.key, r.value).event).sort((a, b) => a.seq - b.seq),
    attention: attention.map((r) => decode<{ binding: WorkAttentionBinding }>(checks.attention, 'attention', r.key, r.value).binding),
  };
}
