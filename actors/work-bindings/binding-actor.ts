// actors/work-bindings/binding-actor.ts: one live work execution binding: its stored record and the
// pure binding machine (machines/work-binding-machine.ts) driven by `transition()`. `step()` asks the
// machine and, when it accepts, commits the new record (one Store commit) before returning: every
// phase the machine reaches is durable before anything that depends on it runs.
import { randomUUID } from 'node:crypto';
import { transition } from 'xstate';
import { ServiceError } from '../../contracts/errors.ts';
import { isTerminalPhase, type BindingPhase, type PublicBinding, type WorkBindingRecord } from '../../contracts/work-binding.ts';
import { workBindingMachine, type BindingContext, type BindingEvent } from '../../machines/work-binding-machine.ts';
import type { Store } from '../../storage/store.ts';
import { StateClock } from '../state-clock.ts';

export const BINDING_KIND = 'work_binding';
export const BINDINGS_NS = 'work.bindings';
export const CHAINS_NS = 'work.binding_chains';
export const KEYS_NS = 'work.binding_keys';

/** A fresh binding id and the run id derived from it (deterministic: the same binding, the same run). */
export function newBindingIds(): { bindingId: string; runId: string } {
  const u = randomUUID();
  return { bindingId: `wbind_${u}`, runId: runIdOf(`wbind_${u}`) };
}

const runIdOf = (bindingId: string): string => `wexec_${bindingId.replace(/^wbind_/, '')}`;
export const bindingIdOfRun = (runId: string): string | undefined => (runId.startsWith('wexec_') ? `wbind_${runId.slice(6)}` : undefined);

export function initialMachine(): WorkBindingRecord['machine'] {
  return {
    value: 'launch',
    context: { revision: 1, pendingRun: false, uncertain: false, runStatus: null, reason: null, lastDecision: null },
  };
}

export class BindingActor {
  lastUsedMs: number;
  /** Set once the crash-recovery rules ran for this actor (hydrated actors only; launched ones start true). */
  recovered: boolean;
  /** A command is running in the mailbox. */
  working = 0;
  /** When the binding entered its current phase (the viewer's time in state). */
  private readonly clock: StateClock;

  constructor(
    public record: WorkBindingRecord,
    private readonly store: Store,
    now: number,
    fresh: boolean,
  ) {
    this.lastUsedMs = now;
    this.recovered = fresh;
    // Every phase step writes updated_at: a loaded binding entered its phase then.
    const updated = Date.parse(record.updated_at);
    this.clock = new StateClock(record.machine.value, Number.isFinite(updated) ? Math.min(updated, now) : now);
  }

  /** When the binding entered its current phase (epoch ms). */
  phaseSinceMs(now: number): number {
    return this.clock.sinceMs(this.phase, now);
  }

  get id(): string {
    return this.record.binding_id;
  }

  get phase(): BindingPhase {
    return this.record.machine.value;
  }

  get terminal(): boolean {
    return isTerminalPhase(this.phase);
  }

  get context(): BindingContext {
    return this.record.machine.context as unknown as BindingContext;
  }

  /** Asks the machine; when accepted, commits the record and returns true; a refusal returns its reason. */
  async step(event: BindingEvent, now: number): Promise<{ ok: true } | { ok: false; reason: string }> {
    const snap = workBindingMachine.resolveState({ value: this.phase, context: this.context });
    const [next] = transition(workBindingMachine, snap, event);
    const decision = next.context.lastDecision;
    if (!decision || decision.verdict !== 'accepted') return { ok: false, reason: decision?.reason ?? 'not handled' };
    const rec: WorkBindingRecord = {
      ...this.record,
      machine: { value: next.value as BindingPhase, context: { ...next.context } },
      updated_at: new Date(now).toISOString(),
    };
    await this.store.commit([{ op: 'putRecord', ns: BINDINGS_NS, key: rec.binding_id, value: rec }]);
    this.record = rec;
    this.clock.note(rec.machine.value, now);
    return { ok: true };
  }

  /** `step()` that must be accepted: a refusal is a 409 with the machine's reason. */
  async must(event: BindingEvent, now: number): Promise<void> {
    const r = await this.step(event, now);
    if (!r.ok)
      throw new ServiceError('CONFLICT', `binding ${this.id} (${this.phase}) refused ${event.type}: ${r.reason}`, {
        binding_id: this.id,
        machine_state: this.phase,
        reason: r.reason,
      });
  }

  view(): PublicBinding {
    return publicView(this.record);
  }
}

/** The redacted public view: no activation parameters, idempotency key, correlation id or principal. */
export function publicView(rec: WorkBindingRecord): PublicBinding {
  const c = rec.machine.context;
  return {
    binding_id: rec.binding_id,
    work_ref: { ...rec.work_ref },
    target: { mob_id: rec.target.mob_id, flow_id: rec.target.flow_id, flow_digest: rec.target.flow_digest, run_id: rec.target.run_id },
    supersedes: rec.supersedes,
    superseded_by: rec.superseded_by,
    machine_state: rec.machine.value,
    binding_revision: c.revision,
    terminal: isTerminalPhase(rec.machine.value),
    uncertain: c.uncertain,
    run_status: c.runStatus,
    reason: c.reason,
    evidence_id: rec.evidence_id,
    created_at: rec.created_at,
    updated_at: rec.updated_at,
  };
}
