// actors/workgraph/wg-records.ts: how the WorkGraph lies on the Store's generic records. Per namespace:
// items, edges, the append-only event log (keys are zero-padded seqs, so key order is seq order) and
// attention bindings; one `wg/meta` record per namespace carries the event high-water mark. Every record
// carries `v` and is validated on read. Only actors/workgraph/* read or write these.
import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../../contracts/errors.ts';
import { ExternalWorkRef, WorkAttentionBinding, WorkEdge, WorkEvent, WorkOwner, WorkPriority } from '../../contracts/workgraph.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

export const META_NS = 'wg/meta';
const itemsNs = (ns: string): string => `wg/${ns}/items`;
const edgesNs = (ns: string): string => `wg/${ns}/edges`;
const eventsNs = (ns: string): string => `wg/${ns}/events`;
const attentionNs = (ns: string): string => `wg/${ns}/attention`;
export const edgeKey = (e: Pick<WorkEdge, 'from_id' | 'to_id' | 'kind'>): string => `${e.from_id}|${e.kind}|${e.to_id}`;
const seqKey = (seq: number): string => String(seq).padStart(15, '0');

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
const MachineRecord = Type.Object({
  value: Type.String(),
  context: Type.Object({ revision: Type.Integer() }, { additionalProperties: true }),
});

const ItemRecord = Type.Object({ v: Type.Literal(1), fields: ItemFields, machine: MachineRecord });
export type ItemRecord = Static<typeof ItemRecord>;
const EdgeRecord = Type.Object({ v: Type.Literal(1), edge: WorkEdge });
const EventRecord = Type.Object({ v: Type.Literal(1), event: WorkEvent });
const AttentionRecord = Type.Object({ v: Type.Literal(1), binding: WorkAttentionBinding });
/**
 * `next_lease_due_ms`: earliest live lease, so a restarted server re-arms the namespace's lease timer.
 * `rev`: the namespace's head revision, bumped by every commit and checked by the next (absent on records
 * written before it existed): two processes hosting one namespace can never both commit over one state.
 */
const MetaRecord = Type.Object({
  v: Type.Literal(1),
  seq: Type.Integer({ minimum: 0 }),
  next_lease_due_ms: Type.Optional(Type.Number()),
  rev: Type.Optional(Type.Integer({ minimum: 1 })),
});
type MetaRecord = Static<typeof MetaRecord>;

const checks = {
  item: Compile(ItemRecord),
  edge: Compile(EdgeRecord),
  event: Compile(EventRecord),
  attention: Compile(AttentionRecord),
  meta: Compile(MetaRecord),
};

function decode<T>(check: { Check(v: unknown): boolean }, what: string, key: string, value: unknown): T {
  if (!check.Check(value)) throw new ServiceError('SESSION_STORE_ERROR', `corrupt WorkGraph ${what} record at ${key}`);
  return value as T;
}

export const putItemOp = (ns: string, rec: ItemRecord): StoreOp => ({ op: 'putRecord', ns: itemsNs(ns), key: rec.fields.id, value: rec });
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
  const value: MetaRecord = { v: 1, seq };
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
  items: ItemRecord[];
  edges: WorkEdge[];
  events: WorkEvent[];
  attention: WorkAttentionBinding[];
}

/** The namespace's head as stored (seq 0, rev null when the namespace has never been written). */
export async function readHead(store: Store, ns: string): Promise<Head> {
  const raw = await store.getRecord(META_NS, ns);
  if (raw === undefined) return { seq: 0, rev: null };
  const meta = decode<MetaRecord>(checks.meta, 'meta', ns, raw);
  return { seq: meta.seq, rev: meta.rev };
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
  const [head, items, edges, events, attention] = await Promise.all([
    readHead(store, ns),
    store.listRecords(itemsNs(ns)),
    store.listRecords(edgesNs(ns)),
    store.listRecords(eventsNs(ns)),
    store.listRecords(attentionNs(ns)),
  ]);
  return {
    seq: head.seq,
    rev: head.rev,
    items: items.map((r) => decode<ItemRecord>(checks.item, 'item', r.key, r.value)),
    edges: edges.map((r) => decode<{ edge: WorkEdge }>(checks.edge, 'edge', r.key, r.value).edge),
    events: events.map((r) => decode<{ event: WorkEvent }>(checks.event, 'event', r.key, r.value).event).sort((a, b) => a.seq - b.seq),
    attention: attention.map((r) => decode<{ binding: WorkAttentionBinding }>(checks.attention, 'attention', r.key, r.value).binding),
  };
}
