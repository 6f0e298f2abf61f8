// actors/clock.ts: the injectable clock of time-driven actors (schedules): wall time plus one-shot
// timers. createApp takes one (option `clock`); tests and the fake-clock server drive a ManualClock
// through DST changes, month ends and leap days without sleeping.

export type TimerHandle = { readonly id: number } | ReturnType<typeof setTimeout>;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** The longest delay a Node timer accepts; longer waits are re-armed in steps. */
export const MAX_TIMER_MS = 2_147_483_647;

/** Real time: Date.now and unref'd Node timers (a pending schedule never keeps the process alive). */
export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, Math.min(Math.max(0, ms), MAX_TIMER_MS));
    t.unref();
    return t;
  },
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * A clock that moves only when told. advanceTo() runs every timer due up to the target in due order,
 * with now() equal to each timer's due time while it runs, then leaves now() at the target.
 */
export class ManualClock implements Clock {
  private current: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(startMs: number) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.current + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle): void {
    if (typeof handle === 'object' && handle !== null && 'id' in handle) this.timers.delete(handle.id);
  }

  /** Number of timers not yet run. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** When the earliest pending timer is due (null: none). */
  nextTimerAt(): number | null {
    let at: number | null = null;
    for (const t of this.timers.values()) if (at === null || t.at < at) at = t.at;
    return at;
  }

  /**
   * Runs the due timers (see the class note). Bounded: more than `maxFirings` timers in one call (a timer that
   * re-arms at the instant it fired would otherwise spin here forever, blocking the event loop) throws instead.
   */
  advanceTo(targetMs: number, maxFirings = 1_000_000): void {
    for (let fired = 0; ; fired++) {
      if (fired >= maxFirings) {
        throw new Error(
          `ManualClock.advanceTo(${targetMs}): ${fired} timers fired at or before ${this.current}; a timer keeps re-arming at the instant it fired`,
        );
      }
      let nextId = -1;
      let next: { at: number; fn: () => void } | undefined;
      for (const [id, t] of this.timers) {
        if (t.at <= targetMs && (!next || t.at < next.at || (t.at === next.at && id < nextId))) {
          next = t;
          nextId = id;
        }
      }
      if (!next) break;
      this.timers.delete(nextId);
      this.current = Math.max(this.current, next.at);
      next.fn();
    }
    this.current = Math.max(this.current, targetMs);
  }

  advanceBy(ms: number): void {
    this.advanceTo(this.current + ms);
  }
}
