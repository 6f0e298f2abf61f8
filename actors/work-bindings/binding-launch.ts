// actors/work-bindings/binding-launch.ts: the launch of a work execution binding, in the SPEC's order:
//   1. binding commit: the record (phase `launch`), the item's chain (append-only; the prior head must be
//      terminal and is marked superseded) and the idempotency key, in ONE Store commit, which also checks
//      (checkRecord) that the chain, the key and the item's WorkGraph namespace head are still as read: two
//      processes on one realm (cluster nodes) can never both extend one chain, reuse one key or bind a stale
//      item revision; the loser's launch runs again and answers from what the winner committed;
//   2. delivery begin (`begun`); 3. deterministic pending-run persistence (run id derived from the
//   binding id); 4. realization claim (`realizing`); 5. run start (FlowRunner.startFlowRun) → `running`.
// Before step 1: an exact idempotent replay (same key, same request) answers the existing binding; the
// same key with another request is a 409; a new binding needs `expected_item_revision` to equal the
// item's revision (compare-and-set) and the item not to be terminal.
import { createHash, randomUUID } from 'node:crypto';
import { ServiceError } from '../../contracts/errors.ts';
import {
  isTerminalPhase,
  type BindingChainRecord,
  type BindingKeyRecord,
  type FlowLaunchArgs,
  type PublicBinding,
  type WorkBindingRecord,
} from '../../contracts/work-binding.ts';
import { DEFAULT_NAMESPACE } from '../../contracts/workgraph.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { META_NS as WG_META_NS, readHead } from '../workgraph/wg-records.ts';
import { BINDINGS_NS, BindingActor, CHAINS_NS, initialMachine, KEYS_NS, newBindingIds } from './binding-actor.ts';
import type { BindingHost } from './binding-host.ts';
import { noteExecution } from './binding-projection.ts';
import type { bindingPorts } from './ports.ts';
import { BINDING_CHAIN_KIND, BINDING_KEY_KIND, readRecord, WORK_BINDING_KIND } from '../../storage/record-kinds.ts';

export interface LaunchDeps {
  host: BindingHost;
  ports: NonNullable<ReturnType<typeof bindingPorts>>;
  store: Store;
  realmId: string;
  now(): number;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/** JSON with sorted object keys at every depth: the digest of equal values is equal. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    return `{${Object.keys(obj)
      .sort()
      .filter((k) => obj[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

const flowDigest = (flow: unknown): string => sha256(canonicalJson(flow));

function requestDigest(args: FlowLaunchArgs): string {
  const { idempotency_key: _k, expected_item_revision: _r, ...rest } = args;
  return sha256(canonicalJson({ ...rest, namespace: args.namespace ?? DEFAULT_NAMESPACE }));
}

/** The item's chain and the revision it was read at (null: no chain yet; undefined: stored without one). */
async function readChain(store: Store, key: string): Promise<{ ids: string[]; rev: number | null | undefined }> {
  const raw = await readRecord<BindingChainRecord>(store, BINDING_CHAIN_KIND, key);
  if (raw === undefined) return { ids: [], rev: null };
  return { ids: raw.binding_ids, rev: raw.rev };
}

/** Records whose compare-and-set guards the binding commit (a CONFLICT on one of them: run the launch again). */
const GUARDED = new Set([CHAINS_NS, KEYS_NS, WG_META_NS]);
const LAUNCH_ATTEMPTS = 4;

function guardConflict(err: unknown): boolean {
  if (!(err instanceof ServiceError) || err.code !== 'CONFLICT') return false;
  const ns = (err.details as { ns?: unknown } | undefined)?.ns;
  return typeof ns === 'string' && GUARDED.has(ns);
}

export async function launchBinding(d: LaunchDeps, args: FlowLaunchArgs): Promise<PublicBinding> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await launchOnce(d, args);
    } catch (err) {
      if (!guardConflict(err) || attempt >= LAUNCH_ATTEMPTS) throw err;
    }
  }
}

async function launchOnce(d: LaunchDeps, args: FlowLaunchArgs): Promise<PublicBinding> {
  const { host, store, ports } = d;
  const namespace = args.namespace ?? DEFAULT_NAMESPACE;
  const digest = requestDigest(args);

  // Idempotent replay.
  const keyRaw = await readRecord<BindingKeyRecord>(store, BINDING_KEY_KIND, args.idempotency_key);
  if (keyRaw !== undefined) {
    if (keyRaw.request_digest !== digest) {
      throw new ServiceError('CONFLICT', 'idempotency_key was already used with a different launch request', {
        reason: 'idempotency_mismatch',
      });
    }
    return host.get(keyRaw.binding_id);
  }

  // Item compare-and-set: the item read between two equal reads of its namespace's head, which the binding
  // commit then checks, so the revision compared here is still the item's when the binding lands.
  let item: Awaited<ReturnType<typeof ports.workgraph.get>>;
  let wgHead: Awaited<ReturnType<typeof readHead>>;
  for (let read = 0; ; read++) {
    const before = await readHead(store, namespace);
    item = await ports.workgraph.get({ namespace, item_id: args.item_id });
    wgHead = await readHead(store, namespace);
    if (wgHead.rev === before.rev || read >= LAUNCH_ATTEMPTS) break;
  }
  if (item.revision !== args.expected_item_revision) {
    throw new ServiceError('CONFLICT', `stale item revision: expected ${args.expected_item_revision}, current ${item.revision}`, {
      reason: 'stale_revision',
      item_id: item.id,
      current_revision: item.revision,
    });
  }
  if (['completed', 'cancelled', 'failed'].includes(item.status)) {
    throw new ServiceError('BAD_REQUEST', `work item ${item.id} is ${item.status}`, { reason: 'terminal', item_id: item.id });
  }

  // The exact flow attempt.
  const mob = await ports.mobs.host.live(args.mob_id);
  const flow = (mob.record.definition.flows ?? []).find((f) => f.flow_id === args.flow_id);
  if (!flow)
    throw new ServiceError('BAD_REQUEST', `mob ${args.mob_id} has no flow ${args.flow_id}`, { mob_id: args.mob_id, flow_id: args.flow_id });
  const fDigest = flowDigest(flow);
  if (args.flow_digest !== undefined && args.flow_digest !== fDigest) {
    throw new ServiceError('CONFLICT', `flow ${args.flow_id} changed: digest ${fDigest}`, {
      reason: 'flow_digest_mismatch',
      flow_digest: fDigest,
    });
  }

  // The retry chain: a new binding may supersede only a terminal head.
  const chainKey = `${namespace}/${item.id}`;
  const { ids: chain, rev: chainRev } = await readChain(store, chainKey);
  const headId = chain.at(-1);
  let head: WorkBindingRecord | undefined;
  if (headId !== undefined) {
    head = await host
      .with(headId, async (a) => a.record)
      .catch(async (err: unknown) => {
        // Hosted by another cluster node: its stored record is what the chain check below needs.
        if (!(err instanceof ServiceError && err.code === 'SERVICE_UNAVAILABLE')) throw err;
        const stored = await readRecord<WorkBindingRecord>(store, WORK_BINDING_KIND, headId);
        if (!stored) throw err;
        return stored;
      });
    if (!isTerminalPhase(head.machine.value)) {
      throw new ServiceError('CONFLICT', `work item ${item.id} already has a live binding ${headId} (${head.machine.value})`, {
        reason: 'binding_active',
        binding_id: headId,
        machine_state: head.machine.value,
      });
    }
  }
  if (args.supersedes !== undefined && args.supersedes !== headId) {
    throw new ServiceError('CONFLICT', `supersedes must name the item's current binding (${headId ?? 'none'})`, {
      reason: 'not_chain_head',
      chain_head: headId ?? null,
    });
  }

  // 1. Binding commit.
  const { bindingId, runId } = newBindingIds();
  const at = new Date(d.now()).toISOString();
  const rec: WorkBindingRecord = {
    v: 1,
    binding_id: bindingId,
    work_ref: { realm_id: d.realmId, namespace, item_id: item.id },
    target: { mob_id: args.mob_id, flow_id: flow.flow_id, flow_digest: fDigest, run_id: runId, activation: args.activation ?? null },
    idempotency_key: args.idempotency_key,
    request_digest: digest,
    correlation_id: randomUUID(),
    principal: args.principal ?? 'mcp',
    supersedes: headId ?? null,
    superseded_by: null,
    machine: initialMachine(),
    evidence_id: null,
    created_at: at,
    updated_at: at,
  };
  // Stored without a revision (written before revisions existed): cannot be checked, gets one now.
  const guards: StoreOp[] = [{ op: 'checkRecord', ns: KEYS_NS, key: args.idempotency_key, rev: null }];
  if (chainRev !== undefined) guards.push({ op: 'checkRecord', ns: CHAINS_NS, key: chainKey, rev: chainRev });
  if (wgHead.rev !== undefined) guards.push({ op: 'checkRecord', ns: WG_META_NS, key: namespace, rev: wgHead.rev });
  const ops: StoreOp[] = [
    ...guards,
    { op: 'putRecord', ns: BINDINGS_NS, key: bindingId, value: rec },
    {
      op: 'putRecord',
      ns: CHAINS_NS,
      key: chainKey,
      value: { v: 1, binding_ids: [...chain, bindingId], rev: (chainRev ?? 0) + 1 } satisfies BindingChainRecord,
    },
    {
      op: 'putRecord',
      ns: KEYS_NS,
      key: args.idempotency_key,
      value: { v: 1, binding_id: bindingId, request_digest: digest } satisfies BindingKeyRecord,
    },
  ];
  if (head)
    ops.push({ op: 'putRecord', ns: BINDINGS_NS, key: head.binding_id, value: { ...head, superseded_by: bindingId, updated_at: at } });
  await store.commit(ops);
  if (head) {
    const resident = host.table.peek(head.binding_id);
    if (resident) resident.record = { ...resident.record, superseded_by: bindingId, updated_at: at };
    else await host.leave(head.binding_id);
  }
  const actor = host.table.adopt(new BindingActor(rec, store, d.now(), true));
  await noteExecution(ports.workgraph, rec, 'execution_bound').catch(() => undefined);

  return host.with(bindingId, async (a) => {
    await host.advance(a, { type: 'delivery.begin' }); // 2. delivery begin
    await host.advance(a, { type: 'run.pending' }, 'begun'); // 3. pending-run persistence
    await host.advance(a, { type: 'realize.claim' }, 'realizing'); // 4. realization claim
    try {
      await ports.mobs.flows.startFlowRun({
        mobId: rec.target.mob_id,
        flowId: rec.target.flow_id,
        runId,
        activation: rec.target.activation,
        runLabels: { work_binding: bindingId },
      });
    } catch (err) {
      await host.advance(a, { type: 'run.start_failed', reason: err instanceof Error ? err.message : String(err) });
      return a.view();
    }
    await host.advance(a, { type: 'run.started' }, 'running'); // 5. run start
    return actor.view();
  });
}
