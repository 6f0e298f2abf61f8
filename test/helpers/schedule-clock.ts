// test/helpers/schedule-clock.ts: drives a ManualClock the way real time passes for a live server:
// timer by timer, letting each firing (and the turns it dispatches) settle before the next timer, so
// a schedule re-armed by a firing is not skipped over by a long jump.
import type { ManualClock } from '../../actors/clock.ts';

/** How many timers one drive may fire before it is answered as a runaway (a timer re-arming at the same instant). */
export const MAX_FIRINGS = 10_000;

/**
 * Moves `clock` to `targetMs`, settling after every timer that comes due on the way. Bounded: a timer that keeps
 * re-arming at the instant it fired (or any other runaway) fails after `maxFirings` firings, or when one instant
 * fires more than `maxSameInstant` times in a row, with the instant named, instead of looping forever.
 */
export async function driveClock(
  clock: ManualClock,
  settled: () => Promise<void>,
  targetMs: number,
  { maxFirings = MAX_FIRINGS, maxSameInstant = 1_000 } = {},
): Promise<void> {
  let firings = 0;
  let sameInstant = 0;
  let lastAt = Number.NaN;
  for (;;) {
    const next = clock.nextTimerAt();
    if (next === null || next > targetMs) break;
    const at = Math.max(next, clock.now());
    sameInstant = at === lastAt ? sameInstant + 1 : 0;
    lastAt = at;
    if (++firings > maxFirings || sameInstant > maxSameInstant) {
      throw new Error(
        `driveClock to ${targetMs}: runaway timers (${firings} firings, ${sameInstant + 1} in a row at ${at}); a timer keeps re-arming at the instant it fired`,
      );
    }
    clock.advanceTo(at);
    await settled();
  }
  clock.advanceTo(targetMs);
  await settled();
}
