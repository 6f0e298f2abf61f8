// actors/observe/otlp-exporter.ts: a small OpenTelemetry trace exporter speaking OTLP/HTTP with the JSON
// encoding (POST <endpoint>/v1/traces, an ExportTraceServiceRequest: resourceSpans → scopeSpans →
// spans; trace and span ids as hex, times as decimal strings of Unix nanoseconds). Spans queue in
// memory (bounded: beyond max_queue new spans are dropped and counted) and go out in batches every
// flush interval, and at close. Export failures are logged and the batch dropped (no retry storm).
import type { Logger } from 'pino';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';
import type { ResolvedTelemetry } from './telemetry-config.ts';

/** One finished span as the tracer records it (times: Unix epoch milliseconds, fractional). */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal, 3 client (a call out of Warren). */
  kind: 1 | 3;
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  error?: string;
}

type AnyValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function anyValue(v: string | number | boolean): AnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  return Number.isInteger(v) ? { intValue: String(v) } : { doubleValue: v };
}

function attributes(attrs: Record<string, string | number | boolean>): Array<{ key: string; value: AnyValue }> {
  return Object.entries(attrs).map(([key, v]) => ({ key, value: anyValue(v) }));
}

/** Unix nanoseconds as a decimal string (exact to the microsecond). */
function unixNanos(ms: number): string {
  return (BigInt(Math.round(ms * 1000)) * 1000n).toString();
}

/** The ExportTraceServiceRequest JSON body for `spans`. */
function encodeOtlpJson(serviceName: string, spans: readonly SpanRecord[]): unknown {
  return {
    resourceSpans: [
      {
        resource: {
          attributes: attributes({
            'service.name': serviceName,
            'service.version': WARREN_VERSION,
            'telemetry.sdk.name': 'warren',
            'telemetry.sdk.language': 'nodejs',
          }),
        },
        scopeSpans: [
          {
            scope: { name: 'warren.turns', version: WARREN_VERSION },
            spans: spans.map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              ...(s.parentSpanId ? { parentSpanId: s.parentSpanId } : {}),
              name: s.name,
              kind: s.kind,
              startTimeUnixNano: unixNanos(s.startMs),
              endTimeUnixNano: unixNanos(Math.max(s.endMs, s.startMs)),
              attributes: attributes(s.attributes),
              status: s.error === undefined ? { code: 1 } : { code: 2, message: s.error },
            })),
          },
        ],
      },
    ],
  };
}

function tracesUrl(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}

const BATCH = 512;

export class OtlpExporter {
  private queue: SpanRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> = Promise.resolve();
  /** Spans dropped because the queue was full. */
  dropped = 0;

  constructor(
    private readonly settings: () => ResolvedTelemetry | null,
    private readonly log: Logger,
  ) {}

  /** Queues a finished span (dropped when export is off or the queue is full). */
  add(span: SpanRecord): void {
    const cfg = this.settings();
    if (!cfg) return;
    if (this.queue.length >= cfg.maxQueue) {
      if (this.dropped++ === 0) this.log.warn({ maxQueue: cfg.maxQueue }, 'trace export queue full; dropping spans');
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= BATCH) this.flushDetached();
    else if (!this.timer) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.flushDetached();
      }, cfg.flushIntervalMs);
      this.timer.unref();
    }
  }

  /** A flush nobody awaits: its failures are logged by send(); anything else is logged here. */
  private flushDetached(): void {
    this.flush().catch((err: unknown) => this.log.error({ err }, 'trace export flush failed'));
  }

  /** Sends everything queued now; resolves when the sends finished (failures are logged, not thrown). */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    const cfg = this.settings();
    const spans = this.queue;
    this.queue = [];
    if (!cfg || spans.length === 0) return this.inFlight;
    const prev = this.inFlight;
    this.inFlight = (async () => {
      await prev;
      for (let i = 0; i < spans.length; i += BATCH) await this.send(cfg, spans.slice(i, i + BATCH));
    })();
    return this.inFlight;
  }

  private async send(cfg: ResolvedTelemetry, spans: SpanRecord[]): Promise<void> {
    try {
      const res = await fetch(tracesUrl(cfg.endpoint), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...cfg.headers },
        body: JSON.stringify(encodeOtlpJson(cfg.serviceName, spans)),
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      if (!res.ok) this.log.warn({ status: res.status, spans: spans.length }, 'trace export rejected by the collector');
    } catch (err) {
      this.log.warn({ err, spans: spans.length }, 'trace export failed');
    }
  }
}
