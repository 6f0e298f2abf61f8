// bench/eld.ts: event-loop delay of a server process over a measured window (perf_hooks
// monitorEventLoopDelay, 10 ms resolution), started and stopped over IPC by bench/server.ts and
// bench/floor-server.ts. Figures in ms.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface EldSummary {
  p50: number;
  p99: number;
  max: number;
}

export class EldWindow {
  private h: IntervalHistogram | null = null;

  start(): void {
    this.h?.disable();
    this.h = monitorEventLoopDelay({ resolution: 10 });
    this.h.enable();
  }

  stop(): EldSummary {
    const h = this.h;
    if (!h) return { p50: NaN, p99: NaN, max: NaN };
    h.disable();
    this.h = null;
    const ms = (ns: number) => Math.round(ns / 1e4) / 100;
    return { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
  }
}
