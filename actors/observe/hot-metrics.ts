// actors/observe/hot-metrics.ts: counters and histograms for metrics updated on every turn. prom-client's
// own classes validate and hash the label set and key buckets by float-to-string on every observation;
// these keep one series object per label-value tuple (bounded labels only) and plain arrays of bucket
// counts, so an update is a few additions. They register with a prom-client Registry as ordinary
// metrics (name, help, type, get, reset) and render the same exposition lines prom-client's would.
import type { Registry } from 'prom-client';

interface MetricValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
}

interface MetricSnapshot {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: MetricValue[];
}

abstract class HotMetric<S extends { labels: Record<string, string> }> {
  readonly aggregator = 'sum' as const;
  protected readonly series = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** The series for these label values (in labelNames order), made once. */
  labels(...values: string[]): S {
    const key = values.join('\u0000');
    let s = this.series.get(key);
    if (!s) {
      if (values.length !== this.labelNames.length)
        throw new TypeError(`${this.name}: expected ${this.labelNames.length} label values, got ${values.length}`);
      const labels: Record<string, string> = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]));
      this.series.set(key, (s = this.fresh(labels)));
    }
    return s;
  }

  reset(): void {
    this.series.clear();
  }

  protected abstract fresh(labels: Record<string, string>): S;
}

export interface CounterSeries {
  labels: Record<string, string>;
  value: number;
}

export class HotCounter extends HotMetric<CounterSeries> {
  readonly type = 'counter' as const;

  /** Adds `by` (default 1) to the series; counters only grow, so a negative or non-finite amount is refused. */
  inc(series: CounterSeries, by = 1): void {
    if (!(by >= 0) || !Number.isFinite(by)) throw new TypeError(`${this.name}: a counter cannot add ${by}`);
    series.value += by;
  }

  protected fresh(labels: Record<string, string>): CounterSeries {
    return { labels, value: 0 };
  }

  get(): MetricSnapshot {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      aggregator: this.aggregator,
      values: [...this.series.values()].map((s) => ({ labels: s.labels, value: s.value })),
    };
  }
}

export interface HistogramSeries {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is above every bound (+Inf). */
  counts: number[];
  sum: number;
  count: number;
}

export class HotHistogram extends HotMetric<HistogramSeries> {
  readonly type = 'histogram' as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    super(name, help, labelNames, registry);
  }

  observe(series: HistogramSeries, value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`${this.name}: cannot observe ${value}`);
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]) i++;
    series.counts[i]++;
    series.sum += value;
    series.count++;
  }

  protected fresh(labels: Record<string, string>): HistogramSeries {
    return { labels, counts: new Array<number>(this.bounds.length + 1).fill(0), sum: 0, count: 0 };
  }

  get(): MetricSnapshot {
    const values: MetricValue[] = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ labels: { le, ...s.labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...s.labels }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: s.labels, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: s.labels, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
