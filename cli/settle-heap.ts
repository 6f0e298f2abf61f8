// cli/settle-heap.ts: gives back the memory a `warren serve` process grew for its own start-up, once it
// idles (docs/performance.md, issue 33). V8 sizes its young generation by what survives: start-up
// allocates tens of MB in a second, nearly all of it kept (modules, compiled code, the route table), so
// the young generation grows from 1 to 16 MB and stays there. V8 shrinks it only in a full collection
// made while allocation is low, which its memory reducer schedules after some earlier full collection;
// a fresh server's heap is too small to have needed one, so an idle server would hold about 10 MB of
// young generation (and the start-up garbage promoted to the old one) until its first busy period.
// After 'ready', once the event loop has been idle for a whole window, this makes that one full
// collection; from then on V8's memory reducer handles idle periods itself. A busy window is skipped
// (checked again each window), and it never runs twice. Only main.ts's serve path uses it.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { Logger } from 'pino';

/** After 'ready': the first young-generation collection, which starts the quiet window. */
const PRIME_DELAY_MS = 1_000;
/** The quiet window: V8 judges the allocation rate over (at least) the last 5 s between collections. */
const WINDOW_MS = 6_000;
/** The share of a window the event loop may be busy for the window to count as idle. */
const IDLE_UTILIZATION = 0.05;

/** V8's collections, exposed for this module (see exposeCollector). */
interface Collector {
  /** A young-generation collection (a scavenge). */
  minor(): void;
  /** A full collection. */
  full(): void;
}

/**
 * Schedules the one full collection of an idle server; `stop()` cancels it if it has not run. Each window
 * opens with a young-generation collection, so that V8 measures the window's allocation rate alone, not
 * the tail of start-up (or of a busy period) allocated since the previous collection.
 */
export function settleHeapWhenIdle(log: Logger): { stop(): void } {
  let collector: Collector | null | undefined;
  let last = performance.eventLoopUtilization();
  let interval: NodeJS.Timeout | undefined;
  const openWindow = (): boolean => {
    collector ??= exposeCollector();
    if (!collector) {
      log.debug('no V8 collection available; the start-up heap stays as V8 sized it');
      return false;
    }
    collector.minor();
    last = performance.eventLoopUtilization();
    return true;
  };
  const endWindow = (): void => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization;
    if (busy > IDLE_UTILIZATION) {
      openWindow();
      return;
    }
    clearInterval(interval);
    const before = process.memoryUsage();
    const started = performance.now();
    collector?.full();
    const after = process.memoryUsage();
    log.debug(
      {
        ms: Math.round(performance.now() - started),
        heap_used_before: before.heapUsed,
        heap_used_after: after.heapUsed,
        heap_total_before: before.heapTotal,
        heap_total_after: after.heapTotal,
      },
      'start-up heap settled',
    );
  };
  const prime = setTimeout(() => {
    if (!openWindow()) return;
    interval = setInterval(endWindow, WINDOW_MS);
    interval.unref();
  }, PRIME_DELAY_MS);
  prime.unref();
  return {
    stop: () => {
      clearTimeout(prime);
      clearInterval(interval);
    },
  };
}

/**
 * V8's collections through its `gc` function: node's own under --expose-gc, otherwise one exposed to a
 * single new context only (the flag is turned off again, so later contexts and worker threads get no `gc`
 * global); null if this V8 refuses.
 */
function exposeCollector(): Collector | null {
  let gc: unknown = (globalThis as { gc?: unknown }).gc;
  if (typeof gc !== 'function') {
    try {
      setFlagsFromString('--expose-gc');
      gc = runInNewContext('gc');
    } catch {
      return null;
    } finally {
      setFlagsFromString('--no-expose-gc');
    }
  }
  if (typeof gc !== 'function') return null;
  const run = gc as (options?: { type: 'minor' | 'major'; execution: 'sync' }) => unknown;
  return {
    minor: () => void run({ type: 'minor', execution: 'sync' }),
    full: () => void run({ type: 'major', execution: 'sync' }),
  };
}
