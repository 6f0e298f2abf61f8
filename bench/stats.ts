// bench/stats.ts: latency summaries for the bench scenarios (nearest-rank percentiles over all samples).

/** A latency summary in milliseconds. */
export interface LatencySummary {
  n: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Nearest-rank percentile of an ascending array (q in 0..100); NaN when empty. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((q / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** Summarises samples (any order; the input is not modified). */
export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples as ArrayLike<number>).sort();
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  return {
    n: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
  };
}

/** Growable sample buffer (avoids a JS array of boxed numbers for large runs). */
export class Samples {
  private buf: Float64Array;
  length = 0;

  constructor(initial = 1 << 14) {
    this.buf = new Float64Array(initial);
  }

  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }

  values(): Float64Array {
    return this.buf.subarray(0, this.length);
  }
}

/** Rounds for tables: 3 significant digits below 100, integers above. */
export function round(v: number): number {
  if (!Number.isFinite(v)) return v;
  const a = Math.abs(v);
  if (a >= 100) return Math.round(v);
  if (a >= 10) return Math.round(v * 10) / 10;
  if (a >= 1) return Math.round(v * 100) / 100;
  return Math.round(v * 1000) / 1000;
}
