// actors/observe/observability.ts: the observation subsystem in one place: metrics, the inspector and
// the inspection reads, the turn tracer and its trace export (OpenTelemetry SDK, OTLP), and the hooks the
// runtime calls (session event tap, provider wrap, machine creation, timed store). app.ts creates it before the store and
// attaches the actor directory once the supervisor exists.
import type { Logger } from 'pino';
import type { Config } from '../../contracts/config.ts';
import type { ActorList, MachineGraph, TurnInFlight } from '../../contracts/routes-observe.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { Store } from '../../storage/store.ts';
import type { RuntimeObserver } from '../runtime-observer.ts';
import type { ActorDirectory } from './actor-directory.ts';
import {
  findActor,
  listActors,
  sessionTails,
  sessionTimeline,
  summaryOf,
  type ActorFilter,
  type SessionTails,
  type TimelineStep,
} from './inspect-queries.ts';
import { Inspector } from './inspector.ts';
import { instrumentStore } from './instrumented-store.ts';
import { machineGraph } from './machine-graph.ts';
import { WarrenMetrics } from './metrics.ts';
import { telemetryReader } from './telemetry-config.ts';
import { TraceExport, type ExportAgent } from './trace-export.ts';
import { TurnTracer } from './turn-tracer.ts';

export interface ObservabilityOptions {
  backend: string;
  log: Logger;
  /** The live realm config (`[telemetry]` turns trace export on). */
  config: () => Config;
  /** Opens the trace exporter's connections (the app's outbound guard); absent: node's default agents. */
  exportAgent?: ExportAgent;
  now?: () => number;
}

/** One actor's detail before the HTTP layer shapes its ledger entries into envelopes. */
export interface ActorDetailData {
  actor: ReturnType<typeof summaryOf>;
  recent: ReturnType<Inspector['recentOf']>;
  session?: SessionTails;
  /** The server's clock when the detail was read. */
  nowMs: number;
  /** A session's running turn (null for other kinds and between turns). */
  inFlight: TurnInFlight | null;
}

export class Observability {
  readonly metrics: WarrenMetrics;
  readonly inspector: Inspector;
  private readonly exporter: TraceExport;
  private readonly tracer: TurnTracer;
  private directoryRef: ActorDirectory | null = null;
  private store: Store | null = null;
  private tapFaulted = false;

  constructor(private readonly opts: ObservabilityOptions) {
    this.inspector = new Inspector(() => this.directoryRef, opts.now ?? Date.now);
    this.metrics = new WarrenMetrics({ directory: () => this.directoryRef, inspectSubscribers: () => this.inspector.subscriberCount });
    const telemetry = telemetryReader(opts.config, opts.log);
    this.exporter = new TraceExport(telemetry, opts.log, opts.exportAgent);
    this.tracer = new TurnTracer(this.exporter);
  }

  /** Loads the trace SDK when `[telemetry]` turns export on (app start; otherwise the first traced turn does). */
  ready(): Promise<void> {
    return this.exporter.preload();
  }

  attach(directory: ActorDirectory): void {
    this.directoryRef = directory;
  }

  private get directory(): ActorDirectory {
    if (!this.directoryRef) throw new ServiceError('SERVICE_UNAVAILABLE', 'the actor directory is not ready');
    return this.directoryRef;
  }

  /** The store with timed commits (kept for the inspection reads). */
  wrapStore(store: Store): Store {
    const backend = this.opts.backend;
    this.store = instrumentStore(store, (c) => {
      try {
        this.metrics.observeCommit(backend, c.kind, (c.endedMs - c.startedMs) / 1000);
        this.tracer.onCommit(c);
      } catch (err) {
        this.opts.log.error({ err }, 'commit observation failed');
      }
    });
    return this.store;
  }

  /** The hooks the runtime calls (RuntimeDeps.observer). */
  runtimeObserver(): RuntimeObserver {
    return {
      sessionEvent: (source, entry) => {
        // Observation must never fail a turn: a fault here is logged (once) and the event goes on.
        try {
          this.metrics.tap(source, entry);
          this.tracer.onEvent(source, entry);
        } catch (err) {
          if (!this.tapFaulted) this.opts.log.error({ err, kind: entry.kind }, 'observation hook failed');
          this.tapFaulted = true;
        }
      },
      wrapProvider: (source, provider) => {
        try {
          return this.tracer.wrapProvider(source, provider);
        } catch (err) {
          this.opts.log.error({ err }, 'observation hook failed');
          return provider;
        }
      },
      machineCreated: (kind, id, ref) => this.inspector.onMachine(kind, id, ref),
      sseTruncated: (stream, dropped) => this.metrics.observeSseDrop(stream, dropped),
    };
  }

  /** Told of each stream_truncated marker of an inspection stream. */
  readonly inspectSseTruncated = (dropped: number): void => this.metrics.observeSseDrop('inspect', dropped);

  // Inspection reads (http/handlers/inspect.ts).
  actors(filter: ActorFilter): ActorList {
    return listActors(this.directory, filter, this.now());
  }

  machine(kind: string): MachineGraph {
    const m = this.directory.machines().get(kind);
    if (!m) throw new ServiceError('NOT_FOUND', `no actor kind ${kind}`, { kind });
    return machineGraph(kind, m);
  }

  async actorDetail(kind: string, id: string): Promise<ActorDetailData> {
    const view = findActor(this.directory, kind, id);
    const nowMs = this.now();
    const detail: ActorDetailData = {
      actor: summaryOf(view, this.directory),
      recent: this.inspector.recentOf(kind, id),
      nowMs,
      // Read before the tails (which await the store): the turn as it stood when asked.
      inFlight: view.turn ? view.turn.view(nowMs) : null,
    };
    if (kind === 'session' && this.store) detail.session = await sessionTails(this.store, view);
    return detail;
  }

  private now(): number {
    return (this.opts.now ?? Date.now)();
  }

  timeline(sessionId: string, afterSeq: number, limit: number): Promise<{ steps: TimelineStep[]; lastSeq: number; hasMore: boolean }> {
    if (!this.store) throw new ServiceError('SERVICE_UNAVAILABLE', 'the store is not open');
    return sessionTimeline(this.store, sessionId, afterSeq, limit);
  }

  /** Ends viewer streams and sends every remaining span (runs after every actor stopped). */
  async close(): Promise<void> {
    this.inspector.closeAll();
    this.tracer.flushOpen();
    await this.exporter.close();
  }
}
