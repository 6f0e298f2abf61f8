// test/helpers/schedule-clock.ts: drives a ManualClock the way real time passes for a live server:
// timer by timer, letting each firing (and the turns it dispatches) settle before the next timer, so
// a schedule re-armed by a firing is not skipped over by a long jump.
import type { ManualClock } from '../../actors/clock.ts';

/** Moves `clock` to `targetMs`, settling after every timer that comes due on the way. */
export async function driveClock(clock: ManualClock, settled: () => Promise<void>, targetMs: number): Promise<void> {
  for (;;) {
    const next = clock.nextTimerAt();
    if (next === null || next > targetMs) break;
    clock.advanceTo(Math.max(next, clock.now()));
    await settled();
  }
  clock.advanceTo(targetMs);
  await settled();
}
