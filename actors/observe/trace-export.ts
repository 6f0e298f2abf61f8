// actors/observe/trace-export.ts: where finished turns go as traces. It follows `[telemetry]` live and keeps
// the OpenTelemetry SDK out of the process until export is first switched on: the SDK and its OTLP
// exporters (trace-sdk.ts, a chunk of its own in the production build) load on demand, which costs a
// fraction of a second that a server without telemetry never pays. Turns that end while the SDK is
// still loading wait here, bounded by max_queue spans like the SDK's own queue.
import type { Agent } from 'node:http';
import type { Logger } from 'pino';
import type { ResolvedTelemetry } from './telemetry-config.ts';

export type SpanAttributes = Record<string, string | number | boolean | string[]>;

/** One span as the turn tracer recorded it (times: Unix epoch milliseconds, fractional). */
export interface SpanRecord {
  name: string;
  /** internal: work inside Warren; client: a call out of it (a model call). */
  kind: 'internal' | 'client';
  startMs: number;
  endMs: number;
  attributes: SpanAttributes;
  /** Set when the operation failed: error.type and the span's status message. */
  error?: { type: string; message: string };
}

/** A finished turn: its span and the spans under it. */
export interface TraceRecord {
  root: SpanRecord;
  children: SpanRecord[];
}

/** Opens the exporter's connections (OutboundGuard.nodeAgent); absent: node's default agents. */
export type ExportAgent = (protocol: 'http:' | 'https:') => Agent;

/** One SDK pipeline (trace-sdk.ts) for one `[telemetry]` setting. */
export interface TracePipeline {
  /** The settings it was built from, as compared on a config change. */
  readonly key: string;
  /** Makes the trace's spans through the SDK (queued for export; never blocks, never throws). */
  record(t: TraceRecord): void;
  /** Sends what is queued and stops; bounded by export_timeout_ms, never rejects. */
  shutdown(): Promise<void>;
}

type CreatePipeline = typeof import('./trace-sdk.ts').createPipeline;

export class TraceExport {
  /** trace-sdk.ts's pipeline factory, once the SDK is loaded. */
  private sdk: CreatePipeline | null = null;
  private loading: Promise<void> | null = null;
  private active: TracePipeline | null = null;
  /** The settings object last matched against the active pipeline (a config change makes a new one). */
  private activeCfg: ResolvedTelemetry | null = null;
  private readonly retiring = new Set<Promise<void>>();
  private pending: TraceRecord[] = [];
  private pendingSpans = 0;
  private pendingDropped = 0;
  private readonly agents = new Map<string, Agent>();

  constructor(
    private readonly settings: () => ResolvedTelemetry | null,
    private readonly log: Logger,
    private readonly agent?: ExportAgent,
  ) {}

  /**
   * Whether turns are traced now (export configured). A traced turn starts loading the SDK if it is not
   * loaded yet; export switched off stops the pipeline.
   */
  enabled(): boolean {
    if (this.settings() !== null) {
      if (!this.sdk) this.load().catch((err: unknown) => this.log.error({ err }, 'trace export could not start'));
      return true;
    }
    if (this.active) this.retire();
    return false;
  }

  /** Hands a finished turn to the SDK (or holds it while the SDK loads). */
  emit(t: TraceRecord): void {
    const cfg = this.settings();
    if (!cfg) return;
    const pipeline = this.pipeline(cfg);
    if (pipeline) {
      pipeline.record(t);
      return;
    }
    const spans = 1 + t.children.length;
    if (this.pendingSpans + spans > cfg.maxQueue) {
      if (this.pendingDropped++ === 0) this.log.warn({ maxQueue: cfg.maxQueue }, 'trace export queue full; dropping spans');
      return;
    }
    this.pending.push(t);
    this.pendingSpans += spans;
    this.load().catch((err: unknown) => this.log.error({ err }, 'trace export could not start'));
  }

  /** Loads the SDK now if export is on (app start, a config change), so the first traced turn finds it. */
  async preload(): Promise<void> {
    if (this.settings() !== null) await this.load();
  }

  /** Sends every remaining span and stops (shutdown); bounded by export_timeout_ms, never rejects. */
  async close(): Promise<void> {
    await this.loading?.catch(() => undefined);
    this.drain();
    this.retire();
    await Promise.all([...this.retiring]);
  }

  private load(): Promise<void> {
    this.loading ??= import('./trace-sdk.ts').then(
      ({ createPipeline }) => {
        this.sdk = createPipeline;
        this.drain();
      },
      (err: unknown) => {
        this.loading = null;
        this.pending = [];
        this.pendingSpans = 0;
        throw err;
      },
    );
    return this.loading;
  }

  private drain(): void {
    const held = this.pending;
    this.pending = [];
    this.pendingSpans = 0;
    this.pendingDropped = 0;
    for (const t of held) this.emit(t);
  }

  /** The pipeline for `cfg` (rebuilt when the settings changed), or null while the SDK is not loaded. */
  private pipeline(cfg: ResolvedTelemetry): TracePipeline | null {
    if (!this.sdk) return null;
    if (this.active && this.activeCfg === cfg) return this.active;
    const key = JSON.stringify(cfg);
    this.activeCfg = cfg;
    if (this.active?.key === key) return this.active;
    this.retire();
    this.active = this.sdk(cfg, key, this.log, this.agent ? (protocol) => this.agentFor(protocol) : undefined);
    return this.active;
  }

  /** One agent per scheme for every pipeline (the guard keeps each agent it hands out). */
  private agentFor(protocol: 'http:' | 'https:'): Agent {
    let a = this.agents.get(protocol);
    if (!a) this.agents.set(protocol, (a = this.agent!(protocol)));
    return a;
  }

  /** Stops the active pipeline: what it holds is sent in the background (close() waits for it). */
  private retire(): void {
    const old = this.active;
    if (!old) return;
    this.active = null;
    const done: Promise<void> = old
      .shutdown()
      .finally(() => this.retiring.delete(done))
      .catch((err: unknown) => this.log.warn({ err }, 'trace export shutdown failed'));
    this.retiring.add(done);
  }
}
