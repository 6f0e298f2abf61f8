// actors/observe/trace-sdk.ts: the OpenTelemetry SDK pipeline behind `[telemetry]` (loaded on demand by
// trace-export.ts). A tracer provider (resource: the SDK's defaults plus service.name and service.version)
// whose batch span processor holds at most max_queue finished spans (newer ones are dropped while the
// collector is slow or down) and hands batches of at most 512 to the SDK's OTLP/HTTP exporter (binary
// protobuf or JSON). The exporter connects through the app's outbound guard when there is one. A failed
// export is logged and its batch dropped; the SDK retries transient failures within export_timeout_ms.
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { Logger } from 'pino';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';
import { failureReason } from '../net/outbound-guard.ts';
import type { ResolvedTelemetry } from './telemetry-config.ts';
import type { ExportAgent, SpanRecord, TracePipeline, TraceRecord } from './trace-export.ts';

/** The instrumentation scope of every span Warren makes. */
const SCOPE = 'warren';
/** Spans per export request at most. */
const BATCH = 512;
/** ExportResultCode.SUCCESS of @opentelemetry/core. */
const EXPORT_SUCCESS = 0;

type ExportCallback = Parameters<SpanExporter['export']>[1];

/** The SDK exporter, with every failed export logged (the SDK itself only tells its diag logger). */
class LoggedExporter implements SpanExporter {
  constructor(
    private readonly inner: SpanExporter,
    private readonly log: Logger,
    private readonly url: string,
  ) {}

  export(spans: ReadableSpan[], done: ExportCallback): void {
    this.inner.export(spans, (result) => {
      if (result.code !== EXPORT_SUCCESS) {
        const reason = result.error ? failureReason(result.error) : 'export failed';
        this.log.warn({ url: this.url, spans: spans.length, reason }, 'trace export failed; the batch is dropped');
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

/** Resolves when `p` settles or after `ms`, whichever comes first (rejects as `p` does, within `ms`). */
function bounded(p: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return Promise.race([p.then(() => undefined), deadline]).finally(() => clearTimeout(timer));
}

function startSpan(tracer: Tracer, s: SpanRecord, parent: Span | null): Span {
  const options = {
    kind: s.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    startTime: s.startMs,
    attributes: s.error ? { ...s.attributes, [ATTR_ERROR_TYPE]: s.error.type } : s.attributes,
    ...(parent ? {} : { root: true }),
  };
  return tracer.startSpan(s.name, options, parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT);
}

function endSpan(span: Span, s: SpanRecord): void {
  if (s.error) span.setStatus({ code: SpanStatusCode.ERROR, message: s.error.message });
  span.end(Math.max(s.endMs, s.startMs));
}

/** An SDK pipeline for `cfg` (trace-export.ts builds one per distinct `[telemetry]` setting). */
export function createPipeline(cfg: ResolvedTelemetry, key: string, log: Logger, agent?: ExportAgent): TracePipeline {
  const exporterConfig = {
    url: cfg.url,
    headers: cfg.headers,
    timeoutMillis: cfg.exportTimeoutMs,
    ...(agent ? { httpAgentOptions: (protocol: string) => agent(protocol === 'https:' ? 'https:' : 'http:') } : {}),
  };
  const exporter = cfg.protocol === 'http/json' ? new JsonTraceExporter(exporterConfig) : new ProtobufTraceExporter(exporterConfig);
  const processor = new BatchSpanProcessor({
    exporter: new LoggedExporter(exporter, log, cfg.url),
    maxQueueSize: cfg.maxQueue,
    maxExportBatchSize: Math.min(BATCH, cfg.maxQueue),
    scheduledDelayMillis: cfg.flushIntervalMs,
    exportTimeoutMillis: cfg.exportTimeoutMs,
  });
  const resource = defaultResource().merge(
    resourceFromAttributes({ [ATTR_SERVICE_NAME]: cfg.serviceName, [ATTR_SERVICE_VERSION]: WARREN_VERSION }),
  );
  const provider = new TracerProvider({ resource, spanProcessors: [processor], forceFlushTimeoutMillis: cfg.exportTimeoutMs });
  const tracer = provider.getTracer(SCOPE, WARREN_VERSION);
  return {
    key,
    record(t: TraceRecord): void {
      const root = startSpan(tracer, t.root, null);
      for (const child of t.children) endSpan(startSpan(tracer, child, root), child);
      endSpan(root, t.root);
    },
    // The processor's shutdown sends what it holds, batch by batch: bounded as a whole.
    shutdown: () =>
      bounded(provider.shutdown(), cfg.exportTimeoutMs + 1000).catch((err: unknown) =>
        log.warn({ reason: failureReason(err) }, 'trace export shutdown failed'),
      ),
  };
}
