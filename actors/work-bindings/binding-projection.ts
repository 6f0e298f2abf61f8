// actors/work-bindings/binding-projection.ts: what a binding writes into the WorkGraph, always through
// the namespace actor's real command path (wg-commands.ts, one namespace transaction each): the
// execution events (`execution_bound`, `execution_transitioned`), the terminal evidence
// `work_execution:<binding_id>` of kind `mob_flow_run_completed|failed|canceled` (an identical replay is
// a no-op, different content under the same id is refused: evidence_conflict), and the closure request
// of a completed run, made as the binding's execution principal so the item's completion policy decides.
import { isServiceError } from '../../contracts/errors.ts';
import type { FlowRunRecord } from '../../contracts/mob.ts';
import type { WorkBindingRecord } from '../../contracts/work-binding.ts';
import type { WorkEvidenceRef } from '../../contracts/workgraph.ts';
import type { WorkCaller } from '../../machines/work-item-machine.ts';
import { addEvidence, closeItem } from '../workgraph/wg-commands.ts';
import { contextOf } from '../workgraph/wg-graph.ts';
import { HOST_CALLER, type WorkGraphHost } from '../workgraph/wg-host.ts';

const SUMMARY_MAX = 1000;

const evidenceIdOf = (bindingId: string): string => `work_execution:${bindingId}`;

/** The evidence of a terminal run: a pure function of the binding and the run, so replays are identical. */
export function evidenceFor(rec: WorkBindingRecord, run: FlowRunRecord): WorkEvidenceRef {
  const status = run.status as 'completed' | 'failed' | 'canceled';
  const text = status === 'completed' ? (run.output ?? '') : (run.error ?? status);
  return {
    id: evidenceIdOf(rec.binding_id),
    kind: `mob_flow_run_${status}`,
    label: `${rec.target.mob_id}/${rec.target.flow_id}`,
    summary: text.length > SUMMARY_MAX ? `${text.slice(0, SUMMARY_MAX)}…` : text,
    execution_binding_id: rec.binding_id,
  };
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err));
const canonical = (ev: WorkEvidenceRef): string => JSON.stringify(ev, Object.keys(ev).sort());

export type Projection = { ok: true } | { ok: false; reason: string };

/** Writes the evidence (host authority, at the item's current revision). */
export async function projectEvidence(wg: WorkGraphHost, rec: WorkBindingRecord, evidence: WorkEvidenceRef): Promise<Projection> {
  try {
    await wg.run(rec.work_ref.namespace, (tx) => {
      const item = tx.graph.require(rec.work_ref.item_id);
      addEvidence(tx, HOST_CALLER, { item_id: rec.work_ref.item_id, expected_revision: contextOf(item).revision, evidence });
    });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: isServiceError(err) ? `${err.code}: ${err.message}` : messageOf(err) };
  }
}

/** Whether the item already holds this evidence: identical, different (a conflict), or absent. */
export async function evidenceState(
  wg: WorkGraphHost,
  rec: WorkBindingRecord,
  evidence: WorkEvidenceRef,
): Promise<'identical' | 'different' | 'absent'> {
  const item = await wg.get({ namespace: rec.work_ref.namespace, item_id: rec.work_ref.item_id });
  const prior = item.evidence_refs.find((e) => e.id === evidence.id);
  if (!prior) return 'absent';
  return canonical(prior) === canonical(evidence) ? 'identical' : 'different';
}

/** Asks the WorkGraph to close the item as completed, as the execution principal (policy decides). */
export async function requestClosure(wg: WorkGraphHost, rec: WorkBindingRecord): Promise<Projection> {
  const by: WorkCaller = { owner: { key: { kind: 'principal', id: rec.principal } }, host: false };
  try {
    await wg.run(rec.work_ref.namespace, (tx) => {
      const item = tx.graph.require(rec.work_ref.item_id);
      if (String(item.machine.value) === 'completed') return; // closed before a crash: the request already succeeded
      closeItem(tx, by, {
        item_id: rec.work_ref.item_id,
        expected_revision: contextOf(item).revision,
        status: 'completed',
        summary: `mob flow ${rec.target.flow_id} run ${rec.target.run_id} completed (binding ${rec.binding_id})`,
      });
    });
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: isServiceError(err) ? messageOf(err) : `closure failed: ${messageOf(err)}` };
  }
}

/** Records an execution event on the item's namespace (best effort: the binding record is the truth). */
export async function noteExecution(
  wg: WorkGraphHost,
  rec: WorkBindingRecord,
  kind: 'execution_bound' | 'execution_transitioned',
): Promise<void> {
  await wg.run(rec.work_ref.namespace, (tx) => {
    tx.event(kind, rec.work_ref.item_id, {
      binding_id: rec.binding_id,
      machine_state: rec.machine.value,
      binding_revision: rec.machine.context.revision,
      mob_id: rec.target.mob_id,
      flow_id: rec.target.flow_id,
      run_id: rec.target.run_id,
    });
  });
}
