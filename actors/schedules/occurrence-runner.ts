// actors/schedules/occurrence-runner.ts: what a schedule does when its due time comes: claim each due
// occurrence with a compare-and-set in the store (so only one process ever fires it), decide misfire /
// missing target / overlap (machines/schedule-policy.ts), dispatch a real turn into the target session
// and record every phase move durably; recover occurrences whose claim lease expired (a dead process).
import { ServiceError } from '../../contracts/errors.ts';
import type { Occurrence, OccurrencePhase } from '../../contracts/schedule.ts';
import { canMove, decideLateness, decideMissingTarget, decideOverlap } from '../../machines/schedule-policy.ts';
import { planAhead } from './schedule-plan.ts';
import type { StoreOp } from '../../storage/store.ts';
import { casPut, iso, occurrenceKey, occurrenceNs, occurrenceMarker, SCHEDULE_NS, type OccurrenceRecord } from './schedule-records.ts';
import type { ScheduleActor } from './schedule-actor.ts';
import { targetSessionId } from './schedule-validate.ts';
import { failureClass } from './session-port.ts';
import { handleMobDue } from './mob-targets.ts';
import { uuidv7 } from '../uuidv7.ts';

/** A firing that failed (store error) is retried this much later. */
const FIRE_RETRY_MS = 5_000;

const IN_FLIGHT: ReadonlySet<OccurrencePhase> = new Set(['claimed', 'dispatching', 'awaiting_completion']);
const TERMINAL: ReadonlySet<OccurrencePhase> = new Set(['completed', 'skipped', 'misfired', 'superseded', 'delivery_failed']);

/** One occurrence's record as this process last wrote or read it; writes compare-and-set on its rev. */
class OccurrenceCell {
  constructor(
    public rec: OccurrenceRecord,
    private readonly actor: ScheduleActor,
  ) {}

  get occ(): Occurrence {
    return this.rec.occ;
  }

  /**
   * Moves the occurrence; false when another process moved it first (CONFLICT). `guarded` also requires
   * the schedule record unchanged since this actor last read it (a claim must not follow a pause, update
   * or delete made by another process).
   */
  async move(
    patch: Partial<Occurrence>,
    extra: Partial<Omit<OccurrenceRecord, 'occ' | 'rev' | 'v'>> = {},
    guarded = false,
  ): Promise<boolean> {
    const next: OccurrenceRecord = { ...this.rec, ...extra, rev: this.rec.rev + 1, occ: { ...this.rec.occ, ...patch } };
    if (next.occ.phase !== this.occ.phase && !canMove(this.occ.phase, next.occ.phase)) {
      throw new ServiceError(
        'INTERNAL_ERROR',
        `occurrence ${this.occ.occurrence_id} cannot move from ${this.occ.phase} to ${next.occ.phase}`,
      );
    }
    if (next.occ.phase !== 'claimed' && next.occ.phase !== 'dispatching' && next.occ.phase !== 'awaiting_completion') delete next.lease_ms;
    try {
      const guard: StoreOp[] = guarded ? [{ op: 'checkRecord', ns: SCHEDULE_NS, key: this.actor.id, rev: this.actor.record.rev }] : [];
      await this.actor.deps.store.commit([
        ...guard,
        ...casPut(occurrenceNs(this.occ.schedule_id), occurrenceKey(this.occ.occurrence_ordinal), this.rec.rev, next),
      ]);
    } catch (err) {
      if (err instanceof ServiceError && err.code === 'CONFLICT') return false;
      throw err;
    }
    this.rec = next;
    return true;
  }
}

/** The wheel called: process every due occurrence, top up the plan, re-arm. Runs in the actor's mailbox. */
export function fire(actor: ScheduleActor, nowMs: number): Promise<void> {
  return actor.enqueue(async () => {
    if (actor.send({ type: 'timer.due', nowMs }) === 'rejected') {
      await actor.rearm();
      return;
    }
    let occs: OccurrenceRecord[] = [];
    let failed = false;
    try {
      await actor.refresh();
      occs = await actor.occurrences();
      if (actor.record.schedule.phase === 'active') {
        for (const rec of occs) {
          if (actor.deps.closing()) break;
          const cell = new OccurrenceCell(rec, actor);
          if (rec.occ.phase === 'pending' && rec.due_ms <= nowMs) await handleDue(actor, cell, nowMs);
          else if (IN_FLIGHT.has(rec.occ.phase) && (rec.lease_ms ?? 0) <= nowMs && !actor.inflight.has(rec.occ.occurrence_id))
            await recover(actor, cell, nowMs);
        }
        occs = await actor.occurrences();
        occs = await topUp(actor, occs, nowMs);
      }
    } catch (err) {
      failed = true;
      actor.deps.log.error({ err, scheduleId: actor.id }, 'schedule firing failed');
    } finally {
      const next = actor.nextDue(occs);
      actor.send({ type: 'fire.settled', nextDueMs: next });
      // A failed firing is retried after a pause, never in a hot loop on a due time already past.
      if (failed) actor.deps.arm(actor.id, Math.max(next ?? 0, actor.deps.clock.now() + FIRE_RETRY_MS));
      else await actor.rearm(occs);
    }
  });
}

/** Plans occurrences up to the horizon and prunes old terminal ones, in one schedule write. */
async function topUp(actor: ScheduleActor, occs: OccurrenceRecord[], nowMs: number): Promise<OccurrenceRecord[]> {
  const pending = occs.filter((o) => o.occ.phase === 'pending').length;
  const schedule = actor.record.schedule;
  const plan = planAhead(schedule, pending, nowMs);
  const terminal = occs.filter((o) => TERMINAL.has(o.occ.phase));
  const prune = terminal.slice(0, Math.max(0, terminal.length - actor.deps.keepHistory));
  if (!plan.planned.length && !prune.length) return occs;
  const ops = [
    ...plan.ops,
    ...prune.map((o) => ({ op: 'deleteRecord' as const, ns: occurrenceNs(actor.id), key: occurrenceKey(o.occ.occurrence_ordinal) })),
  ];
  try {
    await actor.commitRecord(plan.schedule, ops);
  } catch (err) {
    // Another process planned or changed the schedule meanwhile: its plan stands, ours is dropped.
    if (err instanceof ServiceError && err.code === 'CONFLICT') {
      await actor.refresh();
      return actor.occurrences();
    }
    throw err;
  }
  const pruned = new Set(prune);
  return [...occs.filter((o) => !pruned.has(o)), ...plan.planned];
}

/** A pending occurrence came due: misfire check, target check, overlap check, then dispatch. */
async function handleDue(actor: ScheduleActor, cell: OccurrenceCell, nowMs: number): Promise<void> {
  const occ = cell.occ;
  const late = decideLateness(cell.rec.due_ms, nowMs, occ.misfire_policy);
  if (late.verdict === 'misfired') {
    await cell.move(
      {
        phase: 'misfired',
        failure_class: 'misfire',
        failure_detail: `due ${occ.due_at_utc}, reached ${late.lateMs} ms late (misfire policy ${occ.misfire_policy.type})`,
      },
      {},
      true,
    );
    return;
  }
  if (occ.target_snapshot.target_kind === 'mob') return handleMobDue(actor, cell, occ.target_snapshot, nowMs);
  const target = resolveTarget(actor, cell);
  const presence = await actor.deps.sessions.presence(target.sessionId);
  if (presence === 'missing' && !target.materialize) {
    const phase = decideMissingTarget(occ.missing_target_policy);
    await cell.move({ phase, failure_class: 'missing_target', failure_detail: `target session not found: ${target.sessionId}` }, {}, true);
    return;
  }
  if (presence === 'busy') {
    const verdict = decideOverlap(occ.overlap_policy, true);
    if (verdict === 'skip') {
      await cell.move(
        {
          phase: 'skipped',
          failure_class: 'overlap',
          failure_detail: `target session ${target.sessionId} is running a turn (overlap policy skip_if_running)`,
        },
        {},
        true,
      );
      return;
    }
    // allow_concurrent: hold a claim while the running turn settles, then dispatch.
    const claimed = await cell.move(claimPatch(actor, nowMs), { lease_ms: nowMs + actor.deps.turnLeaseMs }, true);
    if (!claimed) return;
    actor.inflight.add(occ.occurrence_id);
    actor.deps.track(
      (async () => {
        await actor.deps.sessions.whenSettled(target.sessionId);
        await dispatch(actor, cell, target, actor.deps.clock.now());
      })()
        .catch((err) => actor.deps.log.error({ err, scheduleId: actor.id }, 'schedule dispatch failed'))
        .finally(() => actor.inflight.delete(occ.occurrence_id)),
    );
    return;
  }
  actor.inflight.add(occ.occurrence_id);
  const started = await dispatchStart(actor, cell, target, nowMs, true);
  if (!started) {
    actor.inflight.delete(occ.occurrence_id);
    return;
  }
  actor.deps.track(runTurn(actor, cell, target).finally(() => actor.inflight.delete(occ.occurrence_id)));
}

interface ResolvedTarget {
  sessionId: string;
  /** A materialize-on-demand target: a missing session is created (with this id), not a missing target. */
  materialize: boolean;
}

function resolveTarget(actor: ScheduleActor, cell: OccurrenceCell): ResolvedTarget {
  const snapshot = cell.occ.target_snapshot;
  if (snapshot.type !== 'materialize_on_demand_session') return { sessionId: targetSessionId(snapshot)!, materialize: false };
  // A crash-retried dispatch reuses the session it already chose; otherwise the schedule's bound session.
  const live = actor.record.schedule.target;
  const bound = cell.rec.session_id ?? (live.type === 'materialize_on_demand_session' ? live.bound_session_id : undefined);
  return { sessionId: bound ?? uuidv7(), materialize: true };
}

function claimPatch(actor: ScheduleActor, nowMs: number): Partial<Occurrence> {
  return {
    phase: 'claimed',
    claimed_by: actor.deps.owner,
    claimed_at_utc: iso(nowMs),
    lease_expires_at_utc: iso(nowMs + actor.deps.turnLeaseMs),
  };
}

/** Writes `dispatching` (and binds a materialized session to the schedule); false when another process won. */
async function dispatchStart(
  actor: ScheduleActor,
  cell: OccurrenceCell,
  target: ResolvedTarget,
  nowMs: number,
  guarded = false,
): Promise<boolean> {
  const lease = nowMs + actor.deps.turnLeaseMs;
  const moved = await cell.move(
    {
      phase: 'dispatching',
      claimed_by: actor.deps.owner,
      claimed_at_utc: cell.occ.claimed_at_utc ?? iso(nowMs),
      lease_expires_at_utc: iso(lease),
      dispatched_at_utc: iso(nowMs),
      attempt_count: cell.occ.attempt_count + 1,
    },
    { lease_ms: lease, session_id: target.sessionId },
    guarded,
  );
  if (!moved) return false;
  const live = actor.record.schedule.target;
  if (
    live.type === 'materialize_on_demand_session' &&
    live.bound_session_id !== target.sessionId &&
    cell.occ.target_snapshot.type === 'materialize_on_demand_session'
  ) {
    await actor.commitRecord({ ...actor.record.schedule, target: { ...live, bound_session_id: target.sessionId } }).catch((err) => {
      actor.deps.log.warn({ err, scheduleId: actor.id }, 'could not bind the materialized session to the schedule');
    });
  }
  return true;
}

async function dispatch(actor: ScheduleActor, cell: OccurrenceCell, target: ResolvedTarget, nowMs: number): Promise<void> {
  if (await dispatchStart(actor, cell, target, nowMs)) await runTurn(actor, cell, target);
}

/** Runs the turn; records awaiting_completion on admission and the outcome at the end. */
async function runTurn(actor: ScheduleActor, cell: OccurrenceCell, target: ResolvedTarget, busyRetries = 3): Promise<void> {
  const { deps } = actor;
  const occ = cell.occ;
  let admitted: Promise<boolean> = Promise.resolve(false);
  const requestId = `schedule-${occ.occurrence_id}-${occ.attempt_count}-${busyRetries}`;
  try {
    const presence = await deps.sessions.presence(target.sessionId);
    const reply = await deps.sessions.run({
      sessionId: target.sessionId,
      ...(presence === 'missing' && target.materialize && occ.target_snapshot.type === 'materialize_on_demand_session'
        ? { create: occ.target_snapshot.create }
        : {}),
      action: occ.target_snapshot.action!,
      requestId,
      marker: occurrenceMarker(occ.occurrence_id),
      trigger: { schedule_id: occ.schedule_id, occurrence_id: occ.occurrence_id, due_at_utc: occ.due_at_utc },
      onAdmitted: () => {
        admitted = cell.move({ phase: 'awaiting_completion' });
      },
    });
    await admitted.catch(() => false);
    await cell.move({
      phase: 'completed',
      completed_at_utc: iso(deps.clock.now()),
      runtime_outcome: {
        status: 'completed',
        session_id: reply.sessionId,
        turns: reply.turns,
        tool_calls: reply.toolCalls,
        usage: reply.usage,
      },
      last_receipt: { session_id: reply.sessionId, request_id: requestId },
    });
  } catch (err) {
    await admitted.catch(() => false);
    if (deps.closing()) return; // left in flight: the next start recovers it (marker check) once the lease ends
    // Another turn was admitted between the presence check and this one: the overlap policy decides.
    if (err instanceof ServiceError && err.code === 'SESSION_BUSY') {
      if (decideOverlap(occ.overlap_policy, true) === 'skip' || busyRetries <= 0) {
        await cell.move({
          phase: 'skipped',
          failure_class: 'overlap',
          failure_detail: `target session ${target.sessionId} was running a turn`,
        });
        return;
      }
      await deps.sessions.whenSettled(target.sessionId);
      return runTurn(actor, cell, target, busyRetries - 1);
    }
    if (err instanceof ServiceError && err.code === 'SESSION_NOT_FOUND') {
      await cell.move({
        phase: decideMissingTarget(occ.missing_target_policy),
        failure_class: 'missing_target',
        failure_detail: err.message,
      });
      return;
    }
    await cell.move({
      phase: 'delivery_failed',
      completed_at_utc: iso(deps.clock.now()),
      failure_class: failureClass(err),
      failure_detail: err instanceof Error ? err.message : String(err),
      last_receipt: { session_id: target.sessionId, request_id: requestId },
    });
  }
}

/** A claim whose lease expired (its process died): completed if its turn committed, else due again. */
async function recover(actor: ScheduleActor, cell: OccurrenceCell, nowMs: number): Promise<void> {
  const sid = cell.rec.session_id;
  const marker = occurrenceMarker(cell.occ.occurrence_id);
  if (sid && cell.occ.phase !== 'claimed' && (await actor.deps.sessions.hasMarker(sid, marker))) {
    await cell.move({
      phase: 'completed',
      completed_at_utc: iso(nowMs),
      runtime_outcome: { status: 'completed', session_id: sid, recovered: true },
      last_receipt: { session_id: sid },
    });
    return;
  }
  await handleDue(actor, cell, nowMs);
}
