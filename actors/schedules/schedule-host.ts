// actors/schedules/schedule-host.ts: the schedule actor kind. Registers 'schedule' with the actor
// registry (hydrated from the store on first use, evicted when idle), arms every stored schedule's
// durable due time at start on one due-time wheel (one clock timer for the earliest due time; nothing
// relies on a timer surviving a restart), and offers the commands the handlers and tools call.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { initialTransition } from 'xstate';
import { ServiceError } from '../../contracts/errors.ts';
import type { CreateScheduleRequest, Occurrence, OccurrencePhase, Schedule, UpdateScheduleRequest } from '../../contracts/schedule.ts';
import { restoreScheduleValue, scheduleMachine } from '../../machines/schedule-machine.ts';
import type { KindTable } from '../actor-registry.ts';
import type { Clock } from '../clock.ts';
import type { Supervisor } from '../supervisor.ts';
import { DueWheel } from './due-wheel.ts';
import { fire } from './occurrence-runner.ts';
import { nextDueOf, ScheduleActor, type ScheduleDeps } from './schedule-actor.ts';
import { planAhead } from './schedule-plan.ts';
import { casPut, iso, isUuid, SCHEDULE_NS, type OccurrenceRecord, type ScheduleRecord } from './schedule-records.ts';
import { uuidv7 } from '../uuidv7.ts';
import { fieldsForCreate } from './schedule-validate.ts';
import type { SessionPort } from './session-port.ts';
import {
  OCCURRENCE_KIND as OCCURRENCE_RECORD,
  readRecord,
  readRecords,
  SCHEDULE_KIND as SCHEDULE_RECORD,
} from '../../storage/record-kinds.ts';

export const SCHEDULE_KIND = 'schedule';

export interface ScheduleHostOptions {
  clock: Clock;
  /** The schedules' logger (a child of the root logger with `component: 'schedules'`). */
  log: Logger;
  sessions: SessionPort;
  /** Lease of a dispatched turn before another process may recover it (default 30 minutes). */
  turnLeaseMs?: number;
  /** Terminal occurrences kept per schedule (default 64). */
  keepHistory?: number;
  /** Idle schedule actors leave memory after this long (their due times stay on the wheel). Default 60 s. */
  idleEvictMs?: number;
  /**
   * How often (real time) the store is scanned for schedules another process on this realm created, so
   * they are armed here too (a claim in the store keeps them from firing twice). Default 30 s.
   */
  rescanMs?: number;
}

function restored(value: ScheduleRecord): ScheduleRecord {
  // `firing` is not a safe restore state: the claims in the store say what was already fired.
  return { ...value, machine: { ...value.machine, value: restoreScheduleValue(value.machine.value) } };
}

export class ScheduleHost {
  private readonly table: KindTable<ScheduleActor>;
  private readonly wheel: DueWheel;
  private readonly work = new Set<Promise<unknown>>();
  private readonly deps: ScheduleDeps;
  private readonly log: Logger;
  private closing = false;
  /** Schedule ids this process has armed or created (a rescan arms only the others). */
  private readonly known = new Set<string>();
  private readonly rescanTimer: ReturnType<typeof setInterval>;
  /** Resolves once every stored schedule's due time is armed. */
  readonly ready: Promise<void>;
  /** True on a cluster node: other nodes write the same schedules, so a read re-reads the stored record. */
  private readonly shared: boolean;

  constructor(
    sup: Supervisor,
    private readonly opts: ScheduleHostOptions,
  ) {
    const { store } = sup.deps;
    this.log = opts.log;
    this.shared = sup.deps.cluster !== undefined;
    this.wheel = new DueWheel(opts.clock, (ids, now) => this.onDue(ids, now));
    const turnLeaseMs = opts.turnLeaseMs ?? 30 * 60_000;
    this.deps = {
      store,
      clock: opts.clock,
      log: this.log,
      sessions: opts.sessions,
      mobs: () => sup.deps.mobTargets,
      owner: `warren-${randomUUID()}`,
      turnLeaseMs,
      keepHistory: opts.keepHistory ?? 64,
      arm: (id, at) => this.wheel.arm(id, at),
      track: (p) => this.track(p),
      closing: () => this.closing,
      registryNow: () => sup.deps.now(),
    };
    this.table = sup.registry.register<ScheduleActor>({
      kind: SCHEDULE_KIND,
      machine: scheduleMachine,
      policy: { idleEvictMs: opts.idleEvictMs ?? 60_000, maxResident: 100_000 },
      hydrate: async (id) => {
        const stored = await readRecord<ScheduleRecord>(store, SCHEDULE_RECORD, id);
        return stored ? new ScheduleActor(restored(stored), this.deps) : undefined;
      },
      notFound: (id) => new ServiceError('NOT_FOUND', `Schedule not found: ${id}`, { schedule_id: id }),
      busy: (a) => a.isBusy(),
      stop: (a) => a.idle(),
      quiesce: async (a) => {
        this.stop();
        await a.idle();
      },
      describe: (a) => ({ state: a.state, labels: a.record.schedule.labels ?? {}, sinceMs: a.stateSinceMs() }),
    });
    this.ready = this.armUnknown().then((count) => this.log.info({ schedules: count, armed: this.wheel.size }, 'schedules armed'));
    this.track(this.ready);
    this.rescanTimer = setInterval(() => {
      if (!this.closing) this.track(this.armUnknown());
    }, opts.rescanMs ?? 30_000);
    this.rescanTimer.unref();
  }

  /** Arms the next due time of every stored schedule not known yet, reading its occurrences (no actor is hydrated). */
  private async armUnknown(): Promise<number> {
    const { store } = this.deps;
    const stored = await readRecords<ScheduleRecord>(store, SCHEDULE_RECORD);
    for (const { key, value } of stored) {
      if (this.known.has(key)) continue;
      this.known.add(key);
      if (restoreScheduleValue(value.machine.value) !== 'active') continue;
      const occs = (await readRecords<OccurrenceRecord>(store, OCCURRENCE_RECORD, key)).map((r) => r.value);
      this.wheel.arm(key, nextDueOf(occs, new Set()));
    }
    return stored.length;
  }

  private onDue(ids: string[], nowMs: number): void {
    if (this.closing) return;
    for (const id of ids) this.track(this.table.get(id).then((actor) => fire(actor, nowMs)));
  }

  private track(p: Promise<unknown>): void {
    const tracked = p.catch((err) => this.log.error({ err }, 'schedule work failed'));
    this.work.add(tracked);
    tracked.finally(() => this.work.delete(tracked)).catch(() => undefined); // tracked never rejects: it logs above
  }

  /** Resolves once no firing or scheduled turn is in progress (tests and shutdown gate on it). */
  async settled(): Promise<void> {
    while (this.work.size) await Promise.all([...this.work]);
  }

  async create(body: CreateScheduleRequest): Promise<ScheduleActor> {
    await this.ready;
    if (this.closing) throw new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down');
    const now = this.opts.clock.now();
    const fields = fieldsForCreate(body, now);
    const id = uuidv7(now);
    const schedule: Schedule = {
      schedule_id: id,
      ...fields,
      phase: 'active',
      revision: 1,
      next_occurrence_ordinal: 0,
      created_at_utc: iso(now),
      updated_at_utc: iso(now),
    };
    const plan = planAhead(schedule, 0, now);
    const nextDueMs = plan.planned.length ? plan.planned[0].due_ms : null;
    const [snap] = initialTransition(scheduleMachine, { scheduleId: id, revision: 1, nextDueMs });
    const record: ScheduleRecord = {
      v: 1,
      rev: 1,
      schedule: plan.schedule,
      machine: { value: snap.value as 'active', context: snap.context },
    };
    await this.deps.store.commit([...casPut(SCHEDULE_NS, id, null, record), ...plan.ops]);
    this.known.add(id);
    const actor = this.table.adopt(new ScheduleActor(record, this.deps));
    await actor.rearm(plan.planned);
    return actor;
  }

  /** The actor of a schedule id (hydrated if needed); 400 for a malformed id, 404 for an unknown one. */
  async get(rawId: unknown): Promise<ScheduleActor> {
    if (typeof rawId !== 'string' || !isUuid(rawId)) throw new ServiceError('BAD_REQUEST', `Invalid schedule id: ${String(rawId)}`);
    await this.ready;
    const actor = await this.table.get(rawId.toLowerCase());
    if (this.shared) await actor.refresh();
    return actor;
  }

  /** Every schedule (paused and deleted included), from the store, by id. */
  async list(): Promise<Schedule[]> {
    await this.ready;
    return (await readRecords<ScheduleRecord>(this.deps.store, SCHEDULE_RECORD)).map(
      (r) => this.table.peek(r.key)?.view() ?? r.value.schedule,
    );
  }

  update(id: unknown, body: UpdateScheduleRequest): Promise<Schedule> {
    return this.get(id).then((a) => a.update(body));
  }

  async occurrences(id: unknown, filter: { phase?: OccurrencePhase; limit?: number } = {}): Promise<Occurrence[]> {
    const actor = await this.get(id);
    // Occurrences planned before trigger_snapshot was recorded carry the schedule's trigger instead.
    const trigger = actor.view().trigger;
    let occs = (await actor.occurrences()).map((r) => (r.occ.trigger_snapshot ? r.occ : { ...r.occ, trigger_snapshot: trigger }));
    if (filter.phase) occs = occs.filter((o) => o.phase === filter.phase);
    if (filter.limit !== undefined) occs = occs.slice(0, filter.limit);
    return occs;
  }

  /** Stops firing (no new claims). Scheduled turns still running are interrupted by the session shutdown. */
  stop(): void {
    this.closing = true;
    this.wheel.stop();
    clearInterval(this.rescanTimer);
  }

  /** Waits for background work after stop() (the module's close hook, after every actor stopped). */
  async drain(): Promise<void> {
    this.stop();
    await this.settled();
  }
}
