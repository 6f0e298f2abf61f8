// actors/state-clock.ts: when an actor entered its current state (the viewer's "in state for 12.3 s"). An
// actor kind keeps one per actor and notes its state value at each change (a machine subscription or its
// own step); reading it notes the value again, so a change made without a note (a rolled-back step) is
// caught at the next read. Nothing of it is persisted.
import { statePath } from './observe/machine-graph.ts';

export class StateClock {
  private key: string;
  private since: number;

  /** `sinceMs`: when the actor entered `value` (for one restored from storage, its record's last write). */
  constructor(value: unknown, sinceMs: number) {
    this.key = statePath(value);
    this.since = sinceMs;
  }

  /** Notes the state value at `nowMs`: the time moves only when the state (its dotted path) changed. */
  note(value: unknown, nowMs: number): void {
    // The common case (a string state that did not change) allocates nothing.
    if (typeof value === 'string' ? value === this.key : statePath(value) === this.key) return;
    this.key = statePath(value);
    this.since = nowMs;
  }

  /** Notes `value` and answers when the actor entered it (epoch ms). */
  sinceMs(value: unknown, nowMs: number): number {
    this.note(value, nowMs);
    return this.since;
  }
}
