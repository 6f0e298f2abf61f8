// actors/schedules/schedule-plan.ts: plans a schedule's occurrences ahead, within its horizon (days and
// count), as store writes. The schedule actor calls it at create, after each firing (top-up) and on a
// replanning update; the occurrence keys are written only if absent (checkRecord), so two processes
// planning the same schedule never overwrite each other's claims.
import type { Occurrence, Schedule } from '../../contracts/schedule.ts';
import type { StoreOp } from '../../storage/store.ts';
import { casPut, iso, occurrenceKey, occurrenceNs, type OccurrenceRecord } from './schedule-records.ts';
import { uuidv7 } from '../uuidv7.ts';
import { dueTimes } from './trigger-plan.ts';

const DAY_MS = 86_400_000;

export interface PlanResult {
  ops: StoreOp[];
  planned: OccurrenceRecord[];
  /** The schedule with its ordinal and planning cursor advanced. */
  schedule: Schedule;
}

/**
 * Plans up to the horizon: `pendingCount` occurrences are already pending; `afterMs` overrides the
 * planning cursor (null: the trigger's beginning; used by replans).
 */
export function planAhead(schedule: Schedule, pendingCount: number, nowMs: number, afterMs?: number | null): PlanResult {
  const room = schedule.planning_horizon_occurrences - pendingCount;
  const cursor = schedule.planning_cursor_utc !== undefined ? Date.parse(schedule.planning_cursor_utc) : undefined;
  // Past instants of a once trigger are planned (the misfire policy then decides); recurring triggers
  // plan from now on.
  const from = afterMs !== undefined ? afterMs : (cursor ?? (schedule.trigger.type === 'once' ? null : nowMs - 1));
  const times = room > 0 ? dueTimes(schedule.trigger, from, nowMs + schedule.planning_horizon_days * DAY_MS, room) : [];
  const next: Schedule = { ...schedule };
  const ops: StoreOp[] = [];
  const planned: OccurrenceRecord[] = [];
  for (const due of times) {
    const ordinal = next.next_occurrence_ordinal++;
    const occ: Occurrence = {
      occurrence_id: uuidv7(nowMs),
      schedule_id: schedule.schedule_id,
      schedule_revision: schedule.revision,
      occurrence_ordinal: ordinal,
      due_at_utc: iso(due),
      phase: 'pending',
      attempt_count: 0,
      target_snapshot: schedule.target,
      trigger_snapshot: schedule.trigger,
      misfire_policy: schedule.misfire_policy,
      overlap_policy: schedule.overlap_policy,
      missing_target_policy: schedule.missing_target_policy,
      created_at_utc: iso(nowMs),
    };
    const record: OccurrenceRecord = { v: 1, rev: 1, due_ms: due, occ };
    planned.push(record);
    ops.push(...casPut(occurrenceNs(schedule.schedule_id), occurrenceKey(ordinal), null, record));
  }
  if (times.length) next.planning_cursor_utc = iso(times[times.length - 1]);
  return { ops, planned, schedule: next };
}
