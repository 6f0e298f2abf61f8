// actors/workgraph/wg-commands.ts: the item mutations (create, claim, release, update, block, close, link,
// add evidence). Each runs inside one namespace actor message (wg-namespace.ts `send`), asks the item's
// machine first, and writes only once the machine accepted: a refusal throws before anything is written.
// wg-host.ts exposes them; the tools and the CLI call the host.
import { ServiceError } from '../../contracts/errors.ts';
import type {
  WorkBlockInput,
  WorkCloseInput,
  WorkCreateInput,
  WorkEvidenceInput,
  WorkLinkInput,
  WorkReleaseInput,
  WorkUpdateInput,
  WorkClaimInput,
} from '../../contracts/workgraph-inputs.ts';
import type { WorkEdge, WorkItem } from '../../contracts/workgraph.ts';
import type { WorkCaller, WorkItemEvent } from '../../machines/work-item-machine.ts';
import { contextOf } from './wg-graph.ts';
import { applyToItem, newItemRecord, readyFacts, type Tx } from './wg-namespace.ts';
import type { StoredWorkItem, WorkItemFields } from '../../contracts/stored-records.ts';
import { uuidv7 } from '../uuidv7.ts';

/** Asks the item's machine; throws BAD_REQUEST (with the machine's reason) when it refuses. */
function step(tx: Tx, id: string, event: WorkItemEvent): { rec: StoredWorkItem; kind: string } {
  const cur = tx.graph.require(id);
  const { rec, outcome } = applyToItem(cur, event);
  if (!outcome.ok) {
    throw new ServiceError('BAD_REQUEST', outcome.message, {
      reason: outcome.reason,
      item_id: id,
      current_revision: contextOf(cur).revision,
    });
  }
  return { rec, kind: outcome.kind };
}

function checkTime(name: string, value: string | null | undefined): void {
  if (value != null && Number.isNaN(Date.parse(value)))
    throw new ServiceError('BAD_REQUEST', `${name} is not an RFC 3339 time: ${value}`, { reason: 'invalid_time' });
}

const readySet = (tx: Tx, ids: string[]): Set<string> => new Set(ids.filter((id) => tx.graph.isReady(id, tx.now)));
const blockedTargets = (tx: Tx, id: string): string[] => tx.graph.outgoing(id, 'blocks').map((e) => e.to_id);

/** Creates an item (and its parent / blocked_by edges) in one transaction. */
export function createItem(tx: Tx, input: WorkCreateInput): WorkItem {
  const g = tx.graph;
  for (const k of ['due_at', 'not_before', 'snoozed_until'] as const) checkTime(k, input[k]);
  const blockers = [...new Set(input.blocked_by ?? [])];
  for (const id of [...blockers, ...(input.parent_id ? [input.parent_id] : [])]) {
    if (!g.items.has(id))
      throw new ServiceError('BAD_REQUEST', `invalid edge endpoint: no work item ${id}`, { reason: 'invalid_endpoint', item_id: id });
  }
  const at = new Date(tx.now).toISOString();
  const fields: WorkItemFields = {
    id: `work_${uuidv7(tx.now)}`,
    title: input.title,
    priority: input.priority ?? 'medium',
    labels: [...new Set(input.labels ?? [])],
    created_at: at,
    updated_at: at,
    external_refs: input.external_refs ?? [],
  };
  for (const k of ['description', 'owner', 'due_at', 'not_before', 'snoozed_until'] as const)
    if (input[k] !== undefined) Object.assign(fields, { [k]: input[k] });
  const rec = newItemRecord(fields, input.completion_policy ?? { kind: 'self_attest' });
  tx.putItem(rec);
  const edges: WorkEdge[] = [];
  const edge = (from_id: string, to_id: string, kind: WorkEdge['kind']): void => {
    const e: WorkEdge = { realm_id: g.realmId, namespace: g.namespace, from_id, to_id, kind, created_at: at };
    tx.putEdge(e);
    edges.push(e);
  };
  if (input.parent_id) edge(fields.id, input.parent_id, 'parent');
  for (const b of blockers) edge(b, fields.id, 'blocks');
  const item = g.project(rec);
  tx.event('created', fields.id, { item, edges }, readyFacts(g, [fields.id], new Set(), tx.now));
  return item;
}

export function claimItem(tx: Tx, by: WorkCaller, input: WorkClaimInput): WorkItem {
  const g = tx.graph;
  const cur = g.require(input.item_id);
  const { rec, kind } = step(tx, input.item_id, {
    type: 'item.claim',
    expectedRevision: input.expected_revision,
    by: by,
    now: tx.now,
    leaseMs: input.lease_ms ?? null,
    unresolvedBlockers: g.unresolvedBlockers(input.item_id),
    gatesOpen: g.gatesOpen(cur, tx.now),
  });
  tx.putItem(rec);
  const item = g.project(rec);
  tx.event('claimed', item.id, {
    owner: by.owner,
    renewed: kind === 'renewed',
    ...(item.claim?.lease_expires_at ? { lease_expires_at: item.claim.lease_expires_at } : {}),
  });
  return item;
}

export function releaseItem(tx: Tx, by: WorkCaller, input: WorkReleaseInput): WorkItem {
  const { rec } = step(tx, input.item_id, { type: 'item.release', expectedRevision: input.expected_revision, by, now: tx.now });
  tx.putItem(rec);
  tx.event('released', input.item_id, { reason: 'released', by: by.owner.key }, readyFacts(tx.graph, [input.item_id], new Set(), tx.now));
  return tx.graph.project(rec);
}

export function updateItem(tx: Tx, by: WorkCaller, input: WorkUpdateInput): WorkItem {
  for (const k of ['due_at', 'not_before', 'snoozed_until'] as const) checkTime(k, input[k]);
  const before = readySet(tx, [input.item_id]);
  const { rec } = step(tx, input.item_id, { type: 'item.update', expectedRevision: input.expected_revision, by, now: tx.now });
  const fields: WorkItemFields = { ...rec.fields, updated_at: new Date(tx.now).toISOString() };
  const changed: string[] = [];
  for (const k of [
    'title',
    'description',
    'priority',
    'labels',
    'owner',
    'due_at',
    'not_before',
    'snoozed_until',
    'external_refs',
  ] as const) {
    const v = input[k];
    if (v === undefined) continue;
    changed.push(k);
    if (v === null) delete fields[k];
    else Object.assign(fields, { [k]: k === 'labels' ? [...new Set(v as string[])] : v });
  }
  const next = { ...rec, fields };
  tx.putItem(next);
  tx.event('updated', input.item_id, { changed }, readyFacts(tx.graph, [input.item_id], before, tx.now));
  return tx.graph.project(next);
}

export function blockItem(tx: Tx, by: WorkCaller, input: WorkBlockInput): WorkItem {
  const blocked = input.blocked ?? true;
  const m = { expectedRevision: input.expected_revision, by, now: tx.now };
  const { rec } = step(
    tx,
    input.item_id,
    blocked ? { type: 'item.block', reason: input.reason ?? '', ...m } : { type: 'item.unblock', ...m },
  );
  tx.putItem(rec);
  tx.event(
    'blocked',
    input.item_id,
    { blocked, ...(input.reason ? { reason: input.reason } : {}) },
    blocked ? [] : readyFacts(tx.graph, [input.item_id], new Set(), tx.now),
  );
  return tx.graph.project(rec);
}

export function closeItem(tx: Tx, by: WorkCaller, input: WorkCloseInput): WorkItem {
  const g = tx.graph;
  const targets = blockedTargets(tx, input.item_id);
  const before = readySet(tx, targets);
  const { rec } = step(tx, input.item_id, {
    type: 'item.close',
    outcome: input.status,
    expectedRevision: input.expected_revision,
    by,
    now: tx.now,
  });
  tx.putItem(rec);
  const facts = readyFacts(g, targets, before, tx.now);
  if (g.allTerminal()) facts.push({ kind: 'namespace_terminal', namespace: g.namespace });
  tx.event(
    'closed',
    input.item_id,
    { status: input.status, by: by.owner.key, ...(input.summary ? { summary: input.summary } : {}) },
    facts,
  );
  return g.project(rec);
}

/** Adds an edge; the from item's revision is the compare-and-set guard (linking bumps it). */
export function linkItems(tx: Tx, by: WorkCaller, input: WorkLinkInput): WorkEdge {
  const g = tx.graph;
  g.checkEdge(input.from_id, input.to_id, input.kind);
  const { rec } = step(tx, input.from_id, { type: 'item.update', expectedRevision: input.expected_revision, by, now: tx.now });
  const edge: WorkEdge = {
    realm_id: g.realmId,
    namespace: g.namespace,
    from_id: input.from_id,
    to_id: input.to_id,
    kind: input.kind,
    created_at: new Date(tx.now).toISOString(),
  };
  tx.putItem(rec);
  tx.putEdge(edge);
  tx.event('linked', input.from_id, { edge });
  return edge;
}

/** Adds evidence; an identical replay is a no-op (nothing written), different content under one id fails. */
export function addEvidence(tx: Tx, by: WorkCaller, input: WorkEvidenceInput): WorkItem {
  const { rec, kind } = step(tx, input.item_id, {
    type: 'evidence.add',
    evidence: input.evidence,
    expectedRevision: input.expected_revision,
    by,
    now: tx.now,
  });
  if (kind === 'evidence_replayed') return tx.graph.project(tx.graph.require(input.item_id));
  tx.putItem(rec);
  tx.event('evidence_added', input.item_id, { evidence: contextOf(rec).evidence.at(-1) });
  return tx.graph.project(rec);
}
