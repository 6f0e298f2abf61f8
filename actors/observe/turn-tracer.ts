// actors/observe/turn-tracer.ts: turns as OpenTelemetry spans, built from what already flows: the
// session events (a span per turn, per model call, per tool call) and the timed store (a span for the
// turn's commit, which also ends the turn span: a turn is done when it is durable). Nothing is tracked
// while export is off, so the hot path pays one config check per run_started.
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { LedgerEntry } from '../../storage/store.ts';
import type { SessionEventSource } from '../runtime-observer.ts';
import { sessionsOf, type CommitObservation } from './instrumented-store.ts';
import type { OtlpExporter, SpanRecord } from './otlp-exporter.ts';

/** Turns traced at once at most (a turn that never ends must not grow memory without bound). */
const OPEN_TURNS_MAX = 10_000;

interface OpenSpan {
  spanId: string;
  startMs: number;
  attributes: Record<string, string | number | boolean>;
}

interface OpenTurn extends OpenSpan {
  traceId: string;
  model: OpenSpan | null;
  modelCalls: number;
  tools: Map<string, OpenSpan & { name: string }>;
  /** run_completed seen: the turn ends when its commit is durable. */
  awaitingCommit: boolean;
}

/** Wall-clock milliseconds with sub-millisecond precision. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

export class TurnTracer {
  private readonly open = new Map<string, OpenTurn>();

  constructor(
    private readonly exporter: OtlpExporter,
    private readonly enabled: () => boolean,
  ) {}

  /** The session event tap. */
  readonly onEvent = (source: SessionEventSource, entry: LedgerEntry): void => {
    if (entry.kind === 'run_started') {
      if (!this.enabled() || this.open.size >= OPEN_TURNS_MAX) return;
      this.open.set(source.id, {
        traceId: hex(16),
        spanId: hex(8),
        startMs: nowMs(),
        model: null,
        modelCalls: 0,
        tools: new Map(),
        awaitingCommit: false,
        attributes: { 'warren.session.id': source.id, 'gen_ai.system': source.settings.provider },
      });
      return;
    }
    if (this.open.size === 0) return;
    const turn = this.open.get(source.id);
    if (!turn) return;
    const p = entry.payload as Record<string, unknown>;
    switch (entry.kind) {
      case 'turn_started':
        turn.modelCalls++;
        turn.model = {
          spanId: hex(8),
          startMs: nowMs(),
          attributes: { 'gen_ai.system': source.settings.provider, 'warren.model_call': turn.modelCalls },
        };
        return;
      case 'turn_completed': {
        if (!turn.model) return;
        const usage = p.usage as { input_tokens?: number; output_tokens?: number } | undefined;
        const attrs = {
          ...turn.model.attributes,
          'gen_ai.response.finish_reason': String(p.stop_reason),
          'gen_ai.usage.input_tokens': usage?.input_tokens ?? 0,
          'gen_ai.usage.output_tokens': usage?.output_tokens ?? 0,
        };
        this.emit(turn, turn.model, 'model call', 3, attrs);
        turn.model = null;
        return;
      }
      case 'tool_execution_started':
        turn.tools.set(String(p.id), {
          spanId: hex(8),
          startMs: nowMs(),
          name: String(p.name),
          attributes: { 'gen_ai.tool.name': String(p.name), 'gen_ai.tool.call.id': String(p.id) },
        });
        return;
      case 'tool_execution_completed': {
        const tool = turn.tools.get(String(p.id));
        if (!tool) return;
        turn.tools.delete(String(p.id));
        this.emit(turn, tool, `tool ${tool.name}`, 1, tool.attributes, p.is_error === true ? 'tool reported an error' : undefined);
        return;
      }
      case 'run_completed':
        turn.awaitingCommit = true;
        return;
      case 'run_failed': {
        const report = p.error_report as { class?: string; message?: string } | undefined;
        this.finish(
          source.id,
          turn,
          nowMs(),
          `${report?.class ?? 'failed'}: ${report?.message ?? ''}`,
          String(p.terminal_cause_kind ?? 'failed'),
        );
        return;
      }
      default:
    }
  };

  /** The timed store: a durable commit carrying a completed turn's rows is its commit span. */
  readonly onCommit = (c: CommitObservation): void => {
    if (this.open.size === 0 || c.kind !== 'turn') return;
    for (const id of sessionsOf(c.ops)) {
      const turn = this.open.get(id);
      if (!turn?.awaitingCommit) continue;
      const start = performance.timeOrigin + c.startedMs;
      const end = performance.timeOrigin + c.endedMs;
      this.emit(
        turn,
        { spanId: hex(8), startMs: start, attributes: { 'warren.commit.ops': c.ops.length } },
        'commit',
        1,
        { 'warren.commit.ops': c.ops.length },
        c.ok ? undefined : 'commit failed',
        end,
      );
      this.finish(id, turn, end, c.ok ? undefined : 'commit failed', c.ok ? 'succeeded' : 'failed');
    }
  };

  /** Ends every open turn now (shutdown), so nothing started is lost. */
  flushOpen(): void {
    for (const [id, turn] of [...this.open]) this.finish(id, turn, nowMs(), 'server stopped before the turn ended', 'interrupted');
  }

  private finish(id: string, turn: OpenTurn, endMs: number, error: string | undefined, outcome: string): void {
    this.open.delete(id);
    if (turn.model) this.emit(turn, turn.model, 'model call', 3, turn.model.attributes, error ?? 'unfinished', endMs);
    for (const tool of turn.tools.values()) this.emit(turn, tool, `tool ${tool.name}`, 1, tool.attributes, error ?? 'unfinished', endMs);
    this.exporter.add({
      traceId: turn.traceId,
      spanId: turn.spanId,
      name: 'turn',
      kind: 1,
      startMs: turn.startMs,
      endMs,
      attributes: { ...turn.attributes, 'warren.turn.outcome': outcome, 'warren.turn.model_calls': turn.modelCalls },
      error,
    });
  }

  private emit(
    turn: OpenTurn,
    span: OpenSpan,
    name: string,
    kind: 1 | 3,
    attributes: SpanRecord['attributes'],
    error?: string,
    endMs = nowMs(),
  ): void {
    this.exporter.add({
      traceId: turn.traceId,
      spanId: span.spanId,
      parentSpanId: turn.spanId,
      name,
      kind,
      startMs: span.startMs,
      endMs,
      attributes,
      error,
    });
  }
}
