// actors/schedules/mob-targets.ts: a due occurrence whose target is a mob (wire-notes §2.4: member,
// flow, spawn_helper, fork_helper). The occurrence is claimed (`dispatching`, with a lease), handed to
// the mob runtime through RuntimeDeps.mobTargets (installed by the mob module), and completed with the
// mob's outcome, or `delivery_failed`. An unknown mob or member follows the missing-target policy. After
// a crash the lease expires and the occurrence is delivered again: a flow target starts its run once
// (run id `schedule-<occurrence_id>`), member and helper targets are at-least-once.
import { ServiceError } from '../../contracts/errors.ts';
import type { MobTarget, Occurrence } from '../../contracts/schedule.ts';
import { decideMissingTarget } from '../../machines/schedule-policy.ts';
import type { OccurrenceRecord } from './schedule-records.ts';
import { iso } from './schedule-records.ts';
import type { ScheduleActor } from './schedule-actor.ts';
import { failureClass } from './session-port.ts';

interface Cell {
  readonly occ: Occurrence;
  move(patch: Partial<Occurrence>, extra?: Partial<Omit<OccurrenceRecord, 'occ' | 'rev' | 'v'>>, guarded?: boolean): Promise<boolean>;
}

export async function handleMobDue(actor: ScheduleActor, cell: Cell, target: MobTarget, nowMs: number): Promise<void> {
  const { deps } = actor;
  const occ = cell.occ;
  const port = deps.mobs();
  if (!port) {
    await cell.move(
      {
        phase: decideMissingTarget(occ.missing_target_policy),
        failure_class: 'missing_target',
        failure_detail: 'mobs are not available in this process',
      },
      {},
      true,
    );
    return;
  }
  const lease = nowMs + deps.turnLeaseMs;
  const moved = await cell.move(
    {
      phase: 'dispatching',
      claimed_by: deps.owner,
      claimed_at_utc: occ.claimed_at_utc ?? iso(nowMs),
      lease_expires_at_utc: iso(lease),
      dispatched_at_utc: iso(nowMs),
      attempt_count: occ.attempt_count + 1,
    },
    { lease_ms: lease },
    true,
  );
  if (!moved) return;
  actor.inflight.add(occ.occurrence_id);
  deps.track(
    (async () => {
      try {
        const outcome = await port.fire(target, occ.occurrence_id);
        await cell.move({
          phase: 'completed',
          completed_at_utc: iso(deps.clock.now()),
          runtime_outcome: { status: 'completed', mob_id: target.mob_id, ...outcome },
        });
      } catch (err) {
        if (deps.closing()) return; // left in flight: recovered once the lease ends
        if (err instanceof ServiceError && err.code === 'NOT_FOUND') {
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
        });
      }
    })()
      .catch((err) => deps.log.error({ err, scheduleId: actor.id }, 'mob schedule dispatch failed'))
      .finally(() => actor.inflight.delete(occ.occurrence_id)),
  );
}
