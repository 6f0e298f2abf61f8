// actors/observe/process-metrics.ts: process stats for GET /metrics (CPU, memory, heap, handles, event
// loop delay, uptime). Read at scrape time only. One event-loop delay monitor serves every registry of
// the process (tests run several apps in one process; each would otherwise start its own sampler).
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';

let loopDelay: IntervalHistogram | null = null;

function loopMonitor(): IntervalHistogram {
  if (!loopDelay) {
    loopDelay = monitorEventLoopDelay({ resolution: 20 });
    loopDelay.enable();
  }
  return loopDelay;
}

/** Registers the process gauges on `registry`. */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  new Counter({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time of this process',
    labelNames: ['mode'],
    registers,
    collect() {
      const { user, system } = process.cpuUsage();
      this.reset();
      this.inc({ mode: 'user' }, user / 1e6);
      this.inc({ mode: 'system' }, system / 1e6);
    },
  });
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident set size',
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: 'nodejs_heap_bytes',
    help: 'V8 heap and external memory',
    labelNames: ['space'],
    registers,
    collect() {
      const m = process.memoryUsage();
      this.set({ space: 'total' }, m.heapTotal);
      this.set({ space: 'used' }, m.heapUsed);
      this.set({ space: 'external' }, m.external);
      this.set({ space: 'array_buffers' }, m.arrayBuffers);
    },
  });
  new Gauge({
    name: 'nodejs_active_resources',
    help: 'Active libuv resources (handles, requests, timers)',
    registers,
    collect() {
      this.set(process.getActiveResourcesInfo().length);
    },
  });
  // Three plain gauges, not one gauge with a `quantile` label: Prometheus reserves that label for
  // summaries (promtool refuses it elsewhere). Read from one histogram window per scrape; a window with
  // no samples reads 0 for all three (the histogram's percentiles are meaningless without samples).
  loopMonitor(); // sampling starts with the registry, so the first scrape has a window to read
  let window = { p50: 0, p99: 0, max: 0 };
  const readWindow = (): void => {
    const h = loopMonitor();
    window = h.count === 0 ? { p50: 0, p99: 0, max: 0 } : { p50: h.percentile(50) / 1e9, p99: h.percentile(99) / 1e9, max: h.max / 1e9 };
    h.reset();
  };
  new Gauge({
    name: 'nodejs_eventloop_delay_p50_seconds',
    help: 'Median event loop delay since the previous scrape',
    registers,
    collect() {
      readWindow();
      this.set(window.p50);
    },
  });
  new Gauge({
    name: 'nodejs_eventloop_delay_p99_seconds',
    help: '99th percentile event loop delay since the previous scrape',
    registers,
    collect() {
      this.set(window.p99);
    },
  });
  new Gauge({
    name: 'nodejs_eventloop_delay_max_seconds',
    help: 'Largest event loop delay since the previous scrape',
    registers,
    collect() {
      this.set(window.max);
    },
  });
  new Gauge({
    name: 'process_uptime_seconds',
    help: 'Seconds since the process started',
    registers,
    collect() {
      this.set(process.uptime());
    },
  });
}
