// actors/schedules/schedule-actor.ts: one schedule as an actor: a mailbox (commands run one at a time),
// its machine (machines/schedule-machine.ts, stepped with the pure transition() over the stored state
// value and context, so an idle schedule holds no live interpreter) and its durable record. Lifecycle
// commands live here; firing and dispatch live in occurrence-runner.ts.
import type { Logger } from 'pino';
import { transition } from 'xstate';
import { ServiceError } from '../../contracts/errors.ts';
import type { Schedule, UpdateScheduleRequest } from '../../contracts/schedule.ts';
import { scheduleMachine, type ScheduleEvent, type ScheduleVerdict } from '../../machines/schedule-machine.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import type { Clock } from '../clock.ts';
import { StateClock } from '../state-clock.ts';
import { planAhead } from './schedule-plan.ts';
import {
  casPut,
  iso,
  occurrenceKey,
  occurrenceNs,
  SCHEDULE_NS,
  type MachineState,
  type OccurrenceRecord,
  type ScheduleRecord,
} from './schedule-records.ts';
import { applyUpdate } from './schedule-validate.ts';
import type { MobTargetPort } from '../../contracts/schedule.ts';
import type { SessionPort } from './session-port.ts';
import {
  OCCURRENCE_KIND as OCCURRENCE_RECORD,
  readRecord,
  readRecords,
  SCHEDULE_KIND as SCHEDULE_RECORD,
} from '../../storage/record-kinds.ts';

export interface ScheduleDeps {
  store: Store;
  clock: Clock;
  log: Logger;
  /** This process's claim owner token (unique per process start). */
  owner: string;
  sessions: SessionPort;
  /** The mob runtime's schedule port (absent: mob targets follow the missing-target policy). */
  mobs(): MobTargetPort | undefined;
  /** Lease of a dispatched turn: another process recovers the occurrence only after it expires. */
  turnLeaseMs: number;
  /** Terminal occurrences kept per schedule (older ones are pruned at planning). */
  keepHistory: number;
  /** Sets the schedule's next wake-up on the due-time wheel (null: none). */
  arm(scheduleId: string, atMs: number | null): void;
  /** Tracks background work (dispatched turns) for settled() and shutdown. */
  track(work: Promise<unknown>): void;
  closing(): boolean;
  /** The actor registry's clock (last-use times for idle eviction). */
  registryNow(): number;
}

export class ScheduleActor {
  private mailbox: Promise<unknown> = Promise.resolve();
  private queued = 0;
  /** Occurrence ids whose turn this process is running (never recovered by this process meanwhile). */
  readonly inflight = new Set<string>();
  readonly id: string;
  lastUsedMs: number;
  /** When the machine entered its current state (the viewer's time in state). */
  private readonly clock: StateClock;

  constructor(
    public record: ScheduleRecord,
    readonly deps: ScheduleDeps,
  ) {
    this.id = record.schedule.schedule_id;
    this.lastUsedMs = deps.registryNow();
    // A schedule loaded from storage has been in its state at least since its last update.
    const updated = Date.parse(record.schedule.updated_at_utc);
    this.clock = new StateClock(record.machine.value, Number.isFinite(updated) ? Math.min(updated, this.lastUsedMs) : this.lastUsedMs);
  }

  /** A command is queued or running, or a scheduled turn of this schedule runs (never evicted then). */
  isBusy(): boolean {
    return this.queued > 0 || this.inflight.size > 0;
  }

  /** Resolves once the mailbox is empty (eviction and shutdown). */
  async idle(): Promise<void> {
    while (this.queued > 0) await this.mailbox;
  }

  /** Runs `fn` after every earlier command of this schedule (the actor's mailbox). */
  enqueue<T>(fn: () => Promise<T>): Promise<T> {
    this.queued++;
    this.lastUsedMs = this.deps.registryNow();
    const run = this.mailbox.then(fn, fn).finally(() => {
      this.queued--;
      this.lastUsedMs = this.deps.registryNow();
    });
    this.mailbox = run.catch(() => undefined);
    return run;
  }

  /** Steps the machine with `event` and returns its verdict. */
  send(event: ScheduleEvent): ScheduleVerdict {
    const m = this.record.machine;
    const snap = scheduleMachine.resolveState({ value: m.value, context: m.context });
    const [next] = transition(scheduleMachine, snap, event);
    this.record.machine = { value: next.value as MachineState['value'], context: next.context };
    this.clock.note(next.value, this.deps.registryNow());
    return next.context.lastDecision?.verdict ?? 'rejected';
  }

  get state(): MachineState['value'] {
    return this.record.machine.value;
  }

  /** When the machine entered its current state (epoch ms; a rolled-back step is caught here). */
  stateSinceMs(): number {
    return this.clock.sinceMs(this.state, this.deps.registryNow());
  }

  /** The public Schedule (machine state hidden; phase follows the machine). */
  view(): Schedule {
    return { ...this.record.schedule };
  }

  /** The tool form, which includes the machine state. */
  toolView(): Schedule & { machine_state: MachineState } {
    return { ...this.record.schedule, machine_state: this.record.machine };
  }

  /** Re-reads the stored record (another process may have written it); adopts it when newer. */
  async refresh(): Promise<void> {
    const stored = await readRecord<ScheduleRecord>(this.deps.store, SCHEDULE_RECORD, this.id);
    if (stored && stored.rev !== this.record.rev) this.record = stored;
  }

  /** Commits `ops` plus this schedule's record (compare-and-set on its rev). */
  async commitRecord(next: Schedule, ops: StoreOp[] = []): Promise<void> {
    const rev = this.record.rev + 1;
    const value: ScheduleRecord = { v: 1, rev, schedule: next, machine: this.record.machine };
    await this.deps.store.commit([...casPut(SCHEDULE_NS, this.id, this.record.rev, value), ...ops]);
    this.record = value;
  }

  async occurrences(): Promise<OccurrenceRecord[]> {
    return (await readRecords<OccurrenceRecord>(this.deps.store, OCCURRENCE_RECORD, this.id)).map((r) => r.value);
  }

  /** Earliest time this schedule needs attention: a pending due time or another process's lease expiry. */
  nextDue(occs: OccurrenceRecord[]): number | null {
    return nextDueOf(occs, this.inflight);
  }

  /** Re-arms the wheel from the stored occurrences (or disarms a paused or deleted schedule). */
  async rearm(occs?: OccurrenceRecord[]): Promise<void> {
    if (this.state === 'paused' || this.state === 'deleted') return this.deps.arm(this.id, null);
    const next = this.nextDue(occs ?? (await this.occurrences()));
    this.deps.arm(this.id, next);
  }

  /** Runs a lifecycle command; one retry after a CONFLICT with a write by another process. */
  private async withRetry<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      // Only a store condition (another process wrote the record) is retried, never a revision CAS of the caller.
      if (!(err instanceof ServiceError) || err.code !== 'CONFLICT' || (err.details as { ns?: unknown } | undefined)?.ns === undefined)
        throw err;
      await this.refresh();
      return fn();
    }
  }

  private bump(now: number, patch: Partial<Schedule> = {}): Schedule {
    return { ...this.record.schedule, ...patch, revision: this.record.schedule.revision + 1, updated_at_utc: iso(now) };
  }

  private supersedeOps(occs: OccurrenceRecord[], revision: number): StoreOp[] {
    const ops: StoreOp[] = [];
    for (const o of occs) {
      if (o.occ.phase !== 'pending') continue;
      const value: OccurrenceRecord = { ...o, rev: o.rev + 1, occ: { ...o.occ, phase: 'superseded', superseded_by_revision: revision } };
      ops.push(...casPut(occurrenceNs(this.id), occurrenceKey(o.occ.occurrence_ordinal), o.rev, value));
    }
    return ops;
  }

  pause(): Promise<Schedule> {
    return this.enqueue(() =>
      this.withRetry(async () => {
        const before = this.record.machine;
        const next = this.bump(this.deps.clock.now(), { phase: 'paused' });
        if (this.send({ type: 'schedule.pause', revision: next.revision }) === 'rejected') return this.rejected(before);
        try {
          await this.commitRecord(next);
        } catch (err) {
          this.record.machine = before;
          throw err;
        }
        this.deps.arm(this.id, null);
        return this.view();
      }),
    );
  }

  resume(): Promise<Schedule> {
    return this.enqueue(() =>
      this.withRetry(async () => {
        const before = this.record.machine;
        const occs = await this.occurrences();
        const next = this.bump(this.deps.clock.now(), { phase: 'active' });
        if (this.send({ type: 'schedule.resume', revision: next.revision, nextDueMs: this.nextDue(occs) }) === 'rejected')
          return this.rejected(before);
        try {
          await this.commitRecord(next);
        } catch (err) {
          this.record.machine = before;
          throw err;
        }
        await this.rearm(occs);
        return this.view();
      }),
    );
  }

  remove(): Promise<Schedule> {
    return this.enqueue(() =>
      this.withRetry(async () => {
        const before = this.record.machine;
        const now = this.deps.clock.now();
        const next = this.bump(now, { phase: 'deleted', deleted_at_utc: iso(now) });
        if (this.send({ type: 'schedule.delete', revision: next.revision }) === 'rejected') return this.rejected(before);
        try {
          await this.commitRecord(next, this.supersedeOps(await this.occurrences(), next.revision));
        } catch (err) {
          this.record.machine = before;
          throw err;
        }
        this.deps.arm(this.id, null);
        return this.view();
      }),
    );
  }

  update(body: UpdateScheduleRequest): Promise<Schedule> {
    return this.enqueue(() =>
      this.withRetry(async () => {
        const current = this.record.schedule;
        if (current.phase === 'deleted') throw new ServiceError('BAD_REQUEST', `Schedule is deleted: ${this.id}`, { schedule_id: this.id });
        if (body.expected_revision !== undefined && body.expected_revision !== current.revision) {
          throw new ServiceError('CONFLICT', `revision conflict: expected ${body.expected_revision}, current ${current.revision}`, {
            schedule_id: this.id,
            expected_revision: body.expected_revision,
            current_revision: current.revision,
          });
        }
        const now = this.deps.clock.now();
        const { next: fields, replan } = applyUpdate(current, body, now);
        let next = this.bump(now, fields);
        const occs = await this.occurrences();
        const ops: StoreOp[] = [];
        let live = occs;
        if (replan) {
          ops.push(...this.supersedeOps(occs, next.revision));
          live = occs.filter((o) => o.occ.phase !== 'pending');
          const triggerChanged = body.trigger !== undefined;
          const handled = live.reduce<number | null>(
            (m, o) => (o.occ.phase === 'superseded' ? m : Math.max(m ?? -Infinity, o.due_ms)),
            null,
          );
          const once = next.trigger.type === 'once';
          const after = triggerChanged ? (once ? null : now - 1) : once ? handled : Math.max(handled ?? -Infinity, now - 1);
          const plan = planAhead({ ...next, planning_cursor_utc: undefined }, 0, now, after);
          next = plan.schedule;
          ops.push(...plan.ops);
          live = [...live, ...plan.planned];
        }
        const before = this.record.machine;
        this.send({ type: 'schedule.update', revision: next.revision, nextDueMs: this.nextDue(live) });
        try {
          await this.commitRecord(next, ops);
        } catch (err) {
          this.record.machine = before;
          throw err;
        }
        await this.rearm(live);
        return this.view();
      }),
    );
  }

  /** Pause of a paused schedule, resume of an active one: the schedule as it is; anything on a deleted one: 400. */
  private rejected(before: MachineState): Schedule {
    this.record.machine = before;
    if (this.state === 'deleted') throw new ServiceError('BAD_REQUEST', `Schedule is deleted: ${this.id}`, { schedule_id: this.id });
    return this.view();
  }
}

/** The earliest pending due time or expiry of a lease not held by this process (`inflight`). */
export function nextDueOf(occs: readonly OccurrenceRecord[], inflight: ReadonlySet<string>): number | null {
  let next: number | null = null;
  for (const o of occs) {
    const phase = o.occ.phase;
    let t: number | null = null;
    if (phase === 'pending') t = o.due_ms;
    else if ((phase === 'claimed' || phase === 'dispatching' || phase === 'awaiting_completion') && !inflight.has(o.occ.occurrence_id))
      t = o.lease_ms ?? o.due_ms;
    if (t !== null && (next === null || t < next)) next = t;
  }
  return next;
}
