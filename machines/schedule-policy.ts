// machines/schedule-policy.ts: the pure decisions about one due occurrence (misfire, overlap, missing
// target) and the occurrence phase graph. No IO, no clock: callers pass `nowMs`. actors/schedules/ asks
// these before every durable phase move.
import type { MisfirePolicy, MissingTargetPolicy, OccurrencePhase, OverlapPolicy } from '../contracts/schedule.ts';

/** An occurrence dispatched within this long after its due time is on time; later it is a misfire. */
const ON_TIME_GRACE_MS = 60_000;

export type LatenessVerdict = { verdict: 'on_time' } | { verdict: 'catch_up'; lateMs: number } | { verdict: 'misfired'; lateMs: number };

/** Misfire policy: skip (default) misfires anything late; catch_up_within dispatches within its window. */
export function decideLateness(dueMs: number, nowMs: number, policy: MisfirePolicy, graceMs = ON_TIME_GRACE_MS): LatenessVerdict {
  const lateMs = Math.max(0, nowMs - dueMs);
  if (lateMs <= graceMs) return { verdict: 'on_time' };
  if (policy.type === 'catch_up_within' && lateMs <= policy.window_seconds * 1000) return { verdict: 'catch_up', lateMs };
  return { verdict: 'misfired', lateMs };
}

export type OverlapVerdict = 'dispatch' | 'skip' | 'wait';

/**
 * Overlap policy against the target session's busy rule (a session runs one turn at a time, SPEC
 * "States and transitions"): skip_if_running skips while the target runs a turn; allow_concurrent waits
 * for the running turn to settle and then dispatches (the session itself never runs two at once).
 */
export function decideOverlap(policy: OverlapPolicy, targetBusy: boolean): OverlapVerdict {
  if (!targetBusy) return 'dispatch';
  return policy === 'skip_if_running' ? 'skip' : 'wait';
}

/** Missing-target policy: the phase an occurrence ends in when its target session is gone. */
export function decideMissingTarget(policy: MissingTargetPolicy): 'misfired' | 'skipped' {
  return policy === 'skip' ? 'skipped' : 'misfired';
}

/** Every phase an occurrence may move to from each phase (terminal phases move nowhere). */
export const OCCURRENCE_MOVES: Readonly<Record<OccurrencePhase, readonly OccurrencePhase[]>> = {
  pending: ['claimed', 'dispatching', 'superseded', 'misfired', 'skipped'],
  // A claim whose lease expired may be claimed again (by any process) and re-decided.
  claimed: ['dispatching', 'skipped', 'misfired', 'superseded', 'delivery_failed'],
  // After a lease expired (a dead process), an in-flight occurrence is completed (its turn committed) or
  // dispatched again, misfired or skipped by the same rules as a fresh one.
  dispatching: ['dispatching', 'awaiting_completion', 'completed', 'delivery_failed', 'misfired', 'skipped'],
  awaiting_completion: ['dispatching', 'completed', 'delivery_failed', 'misfired', 'skipped'],
  completed: [],
  skipped: [],
  misfired: [],
  superseded: [],
  delivery_failed: [],
};

export function isTerminalPhase(phase: OccurrencePhase): boolean {
  return OCCURRENCE_MOVES[phase].length === 0;
}

export function canMove(from: OccurrencePhase, to: OccurrencePhase): boolean {
  return OCCURRENCE_MOVES[from].includes(to);
}
