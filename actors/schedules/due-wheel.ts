// actors/schedules/due-wheel.ts: the one timer behind every schedule. Keeps each schedule's next due
// time in a min-heap and arms a single clock timer for the earliest, however many schedules there are.
// The schedule host arms entries; the wheel calls back with every id that came due.
import { MAX_TIMER_MS, type Clock, type TimerHandle } from '../clock.ts';

interface Entry {
  at: number;
  id: string;
}

export class DueWheel {
  private readonly heap: Entry[] = [];
  /** The live due time of each id; heap entries that disagree are stale and skipped when popped. */
  private readonly due = new Map<string, number>();
  private timer: TimerHandle | null = null;
  private timerAt = Infinity;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly onDue: (ids: string[], nowMs: number) => void,
  ) {}

  /** Number of armed ids. */
  get size(): number {
    return this.due.size;
  }

  /** Sets (or with null clears) the due time of `id`. */
  arm(id: string, at: number | null): void {
    if (at === null) {
      this.due.delete(id);
      return;
    }
    if (this.due.get(id) === at) return;
    this.due.set(id, at);
    this.push({ at, id });
    if (at < this.timerAt) this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.dropStale();
    const head = this.heap[0];
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
    this.timerAt = Infinity;
    if (!head) return;
    this.timerAt = head.at;
    const delay = Math.min(Math.max(0, head.at - this.clock.now()), MAX_TIMER_MS);
    this.timer = this.clock.setTimeout(() => this.fire(), delay);
  }

  private fire(): void {
    this.timer = null;
    this.timerAt = Infinity;
    const now = this.clock.now();
    const ids: string[] = [];
    for (;;) {
      this.dropStale();
      const head = this.heap[0];
      if (!head || head.at > now) break;
      this.pop();
      this.due.delete(head.id);
      ids.push(head.id);
    }
    this.schedule();
    if (ids.length) this.onDue(ids, now);
  }

  private dropStale(): void {
    while (this.heap.length && this.due.get(this.heap[0].id) !== this.heap[0].at) this.pop();
  }

  private push(e: Entry): void {
    const h = this.heap;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= h[i].at) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (!h.length) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l].at < h[m].at) m = l;
      if (r < h.length && h[r].at < h[m].at) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i], h[m]];
      i = m;
    }
  }
}
