// actors/workgraph/wg-goals.ts: goals and attention bindings. A goal is a work item plus an attention
// binding pointing a session (or a lowered owner) at it. Creating, confirming and closing goals and pausing
// or resuming attention need trusted in-process host authority (SPEC.md "Authentication" 6): only the CLI
// calls these mutators, never REST. Reads (goal status, attention list) also serve the REST POST reads.
import { ServiceError } from '../../contracts/errors.ts';
import type { GoalCloseInput, GoalConfirmInput, GoalCreateInput } from '../../contracts/workgraph-inputs.ts';
import type {
  AttentionListRequest,
  AttentionStatus,
  AttentionTarget,
  GoalStatus,
  WorkAttentionBinding,
  WorkEvidenceRef,
} from '../../contracts/workgraph.ts';
import { addEvidence, closeItem, createItem } from './wg-commands.ts';
import { cmp, contextOf } from './wg-graph.ts';
import { uuidv7 } from '../uuidv7.ts';
import type { Tx } from './wg-namespace.ts';
import { HOST_CALLER, type WorkGraphHost } from './wg-host.ts';

function binding(tx: Tx, id: string): WorkAttentionBinding {
  const b = tx.graph.attention.get(id);
  if (!b) throw new ServiceError('NOT_FOUND', `attention binding not found: ${id}`, { binding_id: id });
  return b;
}

function status(tx: Tx, b: WorkAttentionBinding): GoalStatus {
  return { item: tx.graph.project(tx.graph.require(b.work_ref.item_id)), attention: b };
}

function setStatus(tx: Tx, b: WorkAttentionBinding, next: AttentionStatus): WorkAttentionBinding {
  const updated = { ...b, status: next, updated_at: new Date(tx.now).toISOString() };
  tx.putAttention(updated);
  tx.event('attention_updated', b.work_ref.item_id, { binding_id: b.binding_id, status: next });
  return updated;
}

/** The namespace holding `bindingId` (the given one, else the first that has it). */
async function locate(host: WorkGraphHost, bindingId: string, namespace?: string): Promise<string> {
  if (namespace !== undefined) return namespace;
  for (const ns of await host.namespaces()) {
    if (await host.run(ns, (tx) => tx.graph.attention.has(bindingId))) return ns;
  }
  throw new ServiceError('NOT_FOUND', `attention binding not found: ${bindingId}`, { binding_id: bindingId });
}

/** Creates the goal's item and its active attention binding in one transaction. */
export function createGoal(host: WorkGraphHost, input: GoalCreateInput): Promise<GoalStatus> {
  return host.run(input.namespace, (tx) => {
    const { target, mode, delegated_authority, ...rest } = input;
    const item = createItem(tx, rest);
    const at = new Date(tx.now).toISOString();
    const b: WorkAttentionBinding = {
      binding_id: `attention_${uuidv7(tx.now)}`,
      work_ref: { realm_id: tx.graph.realmId, namespace: tx.graph.namespace, item_id: item.id },
      target,
      mode: mode ?? 'pursue',
      delegated_authority: delegated_authority ?? 'request_closure',
      status: { state: 'active' },
      created_at: at,
      updated_at: at,
    };
    tx.putAttention(b);
    tx.event('attention_created', item.id, { binding: b });
    return { item, attention: b };
  });
}

export async function goalStatus(host: WorkGraphHost, bindingId: string, namespace?: string): Promise<GoalStatus> {
  const ns = await locate(host, bindingId, namespace);
  return host.run(ns, (tx) => status(tx, binding(tx, bindingId)));
}

/** Records a host (or named principal) confirmation on the goal's item; confirming twice is a no-op. */
export async function confirmGoal(host: WorkGraphHost, input: GoalConfirmInput): Promise<GoalStatus> {
  const ns = await locate(host, input.binding_id, input.namespace);
  return host.run(ns, (tx) => {
    const b = binding(tx, input.binding_id);
    const itemId = b.work_ref.item_id;
    if (input.kind === 'principal' && !input.principal_id)
      throw new ServiceError('BAD_REQUEST', 'a principal confirmation needs principal_id');
    const evidence: WorkEvidenceRef =
      input.kind === 'host'
        ? { id: 'confirmation:host', kind: 'confirmation', confirmation_kind: 'host', confirming_owner_key: HOST_CALLER.owner.key }
        : {
            id: `confirmation:principal:${input.principal_id}`,
            kind: 'confirmation',
            confirmation_kind: 'principal',
            confirming_owner_key: { kind: 'principal', id: input.principal_id! },
          };
    if (input.summary) evidence.summary = input.summary;
    const revision = contextOf(tx.graph.require(itemId)).revision;
    addEvidence(tx, HOST_CALLER, { namespace: ns, item_id: itemId, expected_revision: revision, evidence });
    return status(tx, b);
  });
}

/** Closes the goal's item as the host (completion policy still applies) and stops its attention. */
export async function closeGoal(host: WorkGraphHost, input: GoalCloseInput): Promise<GoalStatus> {
  const ns = await locate(host, input.binding_id, input.namespace);
  return host.run(ns, (tx) => {
    const b = binding(tx, input.binding_id);
    const itemId = b.work_ref.item_id;
    const revision = contextOf(tx.graph.require(itemId)).revision;
    closeItem(tx, HOST_CALLER, { namespace: ns, item_id: itemId, expected_revision: revision, status: input.status });
    return status(tx, setStatus(tx, b, { state: 'stopped' }));
  });
}

export async function pauseAttention(
  host: WorkGraphHost,
  bindingId: string,
  until?: string,
  namespace?: string,
): Promise<WorkAttentionBinding> {
  if (until !== undefined && Number.isNaN(Date.parse(until)))
    throw new ServiceError('BAD_REQUEST', `until is not an RFC 3339 time: ${until}`);
  const ns = await locate(host, bindingId, namespace);
  return host.run(ns, (tx) => {
    const b = binding(tx, bindingId);
    if (b.status.state === 'stopped' || b.status.state === 'superseded')
      throw new ServiceError('BAD_REQUEST', `attention ${bindingId} is ${b.status.state}`, { reason: 'terminal' });
    return setStatus(tx, b, until === undefined ? { state: 'paused' } : { state: 'paused', until });
  });
}

export async function resumeAttention(host: WorkGraphHost, bindingId: string, namespace?: string): Promise<WorkAttentionBinding> {
  const ns = await locate(host, bindingId, namespace);
  return host.run(ns, (tx) => {
    const b = binding(tx, bindingId);
    if (b.status.state !== 'paused')
      throw new ServiceError('BAD_REQUEST', `attention ${bindingId} is ${b.status.state}, not paused`, { reason: 'not_paused' });
    return setStatus(tx, b, { state: 'active' });
  });
}

/** Attention bindings matching the filter (one namespace, or all when none is given). */
export async function listAttention(host: WorkGraphHost, q: AttentionListRequest): Promise<WorkAttentionBinding[]> {
  host.checkRealm(q.realm_id);
  const namespaces = q.namespace !== undefined ? [q.namespace] : await host.namespaces();
  let out: WorkAttentionBinding[] = [];
  for (const ns of namespaces) out = out.concat(await host.run(ns, (tx) => [...tx.graph.attention.values()]));
  const target = q.target === undefined ? undefined : targetKey(q.target);
  return out
    .filter((b) => q.status === undefined || b.status.state === q.status)
    .filter((b) => target === undefined || targetKey(b.target) === target)
    .sort((a, b) => cmp(a.created_at, b.created_at) || cmp(a.binding_id, b.binding_id));
}

function targetKey(t: AttentionTarget): string {
  return t.kind === 'session' ? `session:${t.session_id}` : `owner:${t.owner_key.kind}:${t.owner_key.id}`;
}
