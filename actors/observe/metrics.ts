// actors/observe/metrics.ts: Warren's Prometheus metrics (GET /metrics). One Registry per app (tests run
// several apps in one process), fed from where events already flow: the session event tap (turns,
// provider calls, tokens, retries, tools), the instrumented store (commit latency), the SSE drop hook,
// and a census of the actor directory taken only at scrape time. Labels are bounded: provider, outcome,
// kind, state, backend; never a session id.
import { performance } from 'node:perf_hooks';
import { Counter, Gauge, Registry } from 'prom-client';
import type { LedgerEntry } from '../../storage/store.ts';
import type { SessionEventSource } from '../runtime-observer.ts';
import type { ActorDirectory } from './actor-directory.ts';
import { HotCounter, HotHistogram, type CounterSeries, type HistogramSeries } from './hot-metrics.ts';
import { registerProcessMetrics } from './process-metrics.ts';

/** Latency buckets (seconds) for turns and provider calls: 1 ms .. 2 min. */
const TURN_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
/** Store commits: 50 µs .. 1 s. */
const COMMIT_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

/** Which kind of write a store commit was (bounded label). */
export type CommitKind = 'turn' | 'state' | 'ledger';

export interface MetricsOptions {
  /** The actors to count at scrape time (null before the supervisor exists). */
  directory(): ActorDirectory | null;
  /** Live subscribers of the inspection stream (the actor viewer). */
  inspectSubscribers(): number;
  /** Process stats (CPU, memory, event loop, GC); default true. */
  processStats?: boolean;
}

type Outcome = 'succeeded' | 'failed' | 'cancelled';
/** run_failed's error_report.class for a request cancel and a session interrupt (actors/session/turn-steps.ts failTurn). */
const CANCEL_CLASSES: ReadonlySet<string> = new Set(['cancelled', 'interrupted']);

/** One provider's series of the per-turn metrics, bound once (label values are bounded). */
interface ProviderSeries {
  call?: HistogramSeries;
  tokensIn?: CounterSeries;
  tokensOut?: CounterSeries;
  /** Bound on first use, so a series never updated renders no line (as prom-client's labels do). */
  turns: Partial<Record<Outcome, CounterSeries>>;
  turnSeconds: Partial<Record<Outcome, HistogramSeries>>;
}

interface OpenTurn {
  provider: string;
  series: ProviderSeries;
  startedMs: number;
  callStartedMs: number;
}

export class WarrenMetrics {
  readonly registry = new Registry();
  // Updated on every turn: hot-metrics.ts series, bound once per label-value tuple.
  private readonly turns: HotCounter;
  private readonly turnSeconds: HotHistogram;
  private readonly callSeconds: HotHistogram;
  private readonly tokens: HotCounter;
  private readonly retries: Counter<'provider' | 'kind'>;
  private readonly toolCalls: Counter<'outcome'>;
  private readonly commitSeconds: HotHistogram;
  private readonly sseTruncations: Counter<'stream'>;
  private readonly sseDropped: Counter<'stream'>;
  private census: Census | null = null;
  /** Turns in flight, by session id (bounded by the running turns). */
  private readonly open = new Map<string, OpenTurn>();
  private readonly byProvider = new Map<string, ProviderSeries>();

  constructor(opts: MetricsOptions) {
    const registers = [this.registry];
    this.turns = new HotCounter('warren_turns_total', 'Turns (runs) finished, by outcome', ['provider', 'outcome'], this.registry);
    this.turnSeconds = new HotHistogram(
      'warren_turn_duration_seconds',
      'Turn latency from run_started to its outcome',
      ['provider', 'outcome'],
      TURN_BUCKETS,
      this.registry,
    );
    this.callSeconds = new HotHistogram(
      'warren_provider_call_duration_seconds',
      'One model call, turn_started to turn_completed',
      ['provider'],
      TURN_BUCKETS,
      this.registry,
    );
    this.tokens = new HotCounter('warren_tokens_total', 'Model tokens by direction', ['provider', 'direction'], this.registry);
    this.retries = new Counter({
      name: 'warren_provider_retries_total',
      help: 'Provider call retries, by failure kind',
      labelNames: ['provider', 'kind'],
      registers,
    });
    this.toolCalls = new Counter({
      name: 'warren_tool_calls_total',
      help: 'Tool executions, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.commitSeconds = new HotHistogram(
      'warren_store_commit_duration_seconds',
      'Durable store commits (turn rows, state, ledger-only)',
      ['backend', 'kind'],
      COMMIT_BUCKETS,
      this.registry,
    );
    this.sseTruncations = new Counter({
      name: 'warren_sse_truncations_total',
      help: 'stream_truncated markers sent to lagging subscribers',
      labelNames: ['stream'],
      registers,
    });
    this.sseDropped = new Counter({
      name: 'warren_sse_dropped_events_total',
      help: 'Events dropped for lagging subscribers',
      labelNames: ['stream'],
      registers,
    });
    // One census per scrape (scrape() clears it), shared by the gauges below.
    const fresh = (): Census => (this.census ??= takeCensus(opts.directory()));
    new Gauge({
      name: 'warren_actors_resident',
      help: 'Resident actors (awake or shed) by kind',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, k] of fresh()) this.set({ kind }, k.resident);
      },
    });
    new Gauge({
      name: 'warren_actors_awake',
      help: 'Actors holding a live XState actor, by kind',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, k] of fresh()) this.set({ kind }, k.awake);
      },
    });
    new Gauge({
      name: 'warren_actors',
      help: 'Resident actors by kind and state (running = active)',
      labelNames: ['kind', 'state'],
      registers,
      collect() {
        this.reset();
        for (const [kind, k] of fresh()) for (const [state, n] of Object.entries(k.states)) this.set({ kind, state }, n);
      },
    });
    new Gauge({
      name: 'warren_mailbox_depth',
      help: 'Work waiting on actors (running turns + writes not yet durable), summed by kind',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, k] of fresh()) this.set({ kind }, k.mailbox);
      },
    });
    new Gauge({
      name: 'warren_mailbox_depth_max',
      help: 'Deepest single actor mailbox, by kind',
      labelNames: ['kind'],
      registers,
      collect() {
        this.reset();
        for (const [kind, k] of fresh()) this.set({ kind }, k.mailboxMax);
      },
    });
    new Gauge({
      name: 'warren_sse_subscribers',
      help: 'Live SSE subscribers (session event streams, inspection streams)',
      labelNames: ['stream'],
      registers,
      collect() {
        let session = 0;
        for (const k of fresh().values()) session += k.subscribers;
        this.set({ stream: 'session' }, session);
        this.set({ stream: 'inspect' }, opts.inspectSubscribers());
      },
    });
    if (opts.processStats !== false) registerProcessMetrics(this.registry);
  }

  /** The session event tap: turns, model calls, tokens, retries and tools, from events already published. */
  readonly tap = (source: SessionEventSource, entry: LedgerEntry): void => {
    switch (entry.kind) {
      case 'run_started': {
        const now = performance.now();
        const provider = source.settings.provider;
        this.open.set(source.id, { provider, series: this.seriesOf(provider), startedMs: now, callStartedMs: now });
        return;
      }
      case 'turn_started': {
        const t = this.open.get(source.id);
        if (t) t.callStartedMs = performance.now();
        return;
      }
      case 'turn_completed': {
        const t = this.open.get(source.id);
        const series = t?.series ?? this.seriesOf(source.settings.provider);
        const provider = t?.provider ?? source.settings.provider;
        if (t) this.callSeconds.observe((series.call ??= this.callSeconds.labels(provider)), (performance.now() - t.callStartedMs) / 1000);
        const usage = (entry.payload as { usage?: { input_tokens?: number; output_tokens?: number } }).usage;
        // Counters take only finite, non-negative increments (a provider can report anything).
        if (countable(usage?.input_tokens))
          this.tokens.inc((series.tokensIn ??= this.tokens.labels(provider, 'input')), usage.input_tokens);
        if (countable(usage?.output_tokens))
          this.tokens.inc((series.tokensOut ??= this.tokens.labels(provider, 'output')), usage.output_tokens);
        return;
      }
      case 'retrying': {
        const failure = (entry.payload as { retry?: { failure?: { provider?: string; kind?: string } } }).retry?.failure;
        this.retries.inc({ provider: failure?.provider ?? source.settings.provider, kind: failure?.kind ?? 'unknown' });
        return;
      }
      case 'tool_execution_completed':
        this.toolCalls.inc({ outcome: (entry.payload as { is_error?: boolean }).is_error ? 'error' : 'ok' });
        return;
      case 'run_completed':
        this.finishTurn(source, 'succeeded');
        return;
      case 'run_failed':
        this.finishTurn(
          source,
          CANCEL_CLASSES.has((entry.payload as { error_report?: { class?: string } }).error_report?.class ?? '') ? 'cancelled' : 'failed',
        );
        return;
      default:
    }
  };

  private finishTurn(source: SessionEventSource, outcome: Outcome): void {
    const t = this.open.get(source.id);
    this.open.delete(source.id);
    const series = t?.series ?? this.seriesOf(source.settings.provider);
    const provider = t?.provider ?? source.settings.provider;
    this.turns.inc((series.turns[outcome] ??= this.turns.labels(provider, outcome)));
    if (t)
      this.turnSeconds.observe(
        (series.turnSeconds[outcome] ??= this.turnSeconds.labels(provider, outcome)),
        (performance.now() - t.startedMs) / 1000,
      );
  }

  /** The per-turn series of one provider (each bound on its first update). */
  private seriesOf(provider: string): ProviderSeries {
    let s = this.byProvider.get(provider);
    if (!s) {
      s = { turns: {}, turnSeconds: {} };
      this.byProvider.set(provider, s);
    }
    return s;
  }

  /** A durable store commit finished (storage wrapper in instrumented-store.ts). */
  observeCommit(backend: string, kind: CommitKind, seconds: number): void {
    this.commitSeconds.observe(this.commitSeconds.labels(backend, kind), seconds);
  }

  /** A lagging SSE subscriber got a stream_truncated marker for `dropped` events. */
  observeSseDrop(stream: 'session' | 'inspect', dropped: number): void {
    this.sseTruncations.inc({ stream });
    this.sseDropped.inc({ stream }, dropped);
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ contentType: string; text: string }> {
    this.census = null;
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

function countable(n: number | undefined): n is number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0;
}

interface KindCensus {
  resident: number;
  awake: number;
  states: Record<string, number>;
  mailbox: number;
  mailboxMax: number;
  subscribers: number;
}
type Census = Map<string, KindCensus>;

function takeCensus(directory: ActorDirectory | null): Census {
  const out: Census = new Map();
  if (!directory) return out;
  for (const kind of directory.machines().keys())
    out.set(kind, { resident: 0, awake: 0, states: {}, mailbox: 0, mailboxMax: 0, subscribers: 0 });
  for (const a of directory.list()) {
    let k = out.get(a.kind);
    if (!k) out.set(a.kind, (k = { resident: 0, awake: 0, states: {}, mailbox: 0, mailboxMax: 0, subscribers: 0 }));
    k.resident++;
    if (a.awake) k.awake++;
    k.states[a.state] = (k.states[a.state] ?? 0) + 1;
    k.mailbox += a.mailboxDepth;
    if (a.mailboxDepth > k.mailboxMax) k.mailboxMax = a.mailboxDepth;
    k.subscribers += a.subscribers;
  }
  return out;
}
