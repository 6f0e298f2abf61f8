// actors/observe/turn-tracer.ts: turns as OpenTelemetry traces following the GenAI semantic conventions
// (genai-conventions.ts), built from what already flows: the session events (the turn: invoke_agent; each
// tool call: execute_tool {name}), the provider each turn calls, wrapped (each model call: chat {model},
// with usage, finish reason and the model that answered), and the timed store (the turn's commit, which
// also ends the turn: a turn is done when it is durable). A turn's spans are recorded here and handed to
// the exporter (trace-export.ts) when the turn ends, with their own start and end times. Nothing is
// tracked while export is off: the hot path pays one config check per run_started.
import { performance } from 'node:perf_hooks';
import { isServiceError } from '../../contracts/errors.ts';
import type { Provider } from '../../providers/provider.ts';
import type { LedgerEntry } from '../../storage/store.ts';
import type { SessionEventSource } from '../runtime-observer.ts';
import { GEN_AI, OPERATION, providerAttributes } from './genai-conventions.ts';
import { sessionsOf, type CommitObservation } from './instrumented-store.ts';
import type { SpanAttributes, SpanRecord, TraceExport } from './trace-export.ts';

/** Turns traced at once at most (a turn that never ends must not grow memory without bound). */
const OPEN_TURNS_MAX = 10_000;
/** Child spans one turn records at most (a runaway tool loop stays bounded). */
const CHILDREN_MAX = 1_000;

interface OpenTurn {
  root: SpanRecord;
  children: SpanRecord[];
  /** Attributes every child span carries (provider, conversation). */
  common: SpanAttributes;
  tools: Map<string, SpanRecord>;
  timedOut: Set<string>;
  modelCalls: number;
  toolCalls: number;
  inputTokens: number;
  outputTokens: number;
  /** run_completed seen: the turn ends when its commit is durable. */
  awaitingCommit: boolean;
}

/** Wall-clock milliseconds with sub-millisecond precision. */
function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

export class TurnTracer {
  private readonly open = new Map<string, OpenTurn>();

  constructor(private readonly exporter: TraceExport) {}

  /** The session event tap. */
  readonly onEvent = (source: SessionEventSource, entry: LedgerEntry): void => {
    if (entry.kind === 'run_started') {
      if (!this.exporter.enabled() || this.open.size >= OPEN_TURNS_MAX) return;
      this.open.set(source.id, this.startTurn(source));
      return;
    }
    if (this.open.size === 0) return;
    const turn = this.open.get(source.id);
    if (!turn) return;
    const p = entry.payload as Record<string, unknown>;
    switch (entry.kind) {
      case 'tool_execution_started': {
        const id = String(p.id);
        const name = String(p.name);
        turn.toolCalls++;
        turn.tools.set(id, {
          name: `${OPERATION.executeTool} ${name}`,
          kind: 'internal',
          startMs: nowMs(),
          endMs: 0,
          attributes: {
            ...turn.common,
            [GEN_AI.operationName]: OPERATION.executeTool,
            [GEN_AI.toolName]: name,
            [GEN_AI.toolCallId]: id,
            [GEN_AI.toolType]: 'function',
          },
        });
        return;
      }
      case 'tool_execution_timed_out':
        turn.timedOut.add(String(p.id));
        return;
      case 'tool_execution_completed': {
        const id = String(p.id);
        const tool = turn.tools.get(id);
        if (!tool) return;
        turn.tools.delete(id);
        tool.endMs = nowMs();
        if (turn.timedOut.delete(id)) tool.error = { type: 'timeout', message: 'the tool timed out' };
        else if (p.is_error === true) tool.error = { type: 'tool_error', message: 'the tool answered an error' };
        this.addChild(turn, tool);
        return;
      }
      case 'run_completed':
        turn.awaitingCommit = true;
        return;
      case 'run_failed': {
        const report = p.error_report as { class?: string; message?: string } | undefined;
        const cause = typeof p.terminal_cause_kind === 'string' ? p.terminal_cause_kind : 'failed';
        const type = report?.class ?? cause;
        this.finish(source.id, turn, nowMs(), { type, message: `${type}: ${report?.message ?? ''}` }, 'failed');
        return;
      }
      default:
    }
  };

  /** The provider a traced turn calls: each call becomes a `chat {model}` span (calls outside a traced turn pass straight through). */
  readonly wrapProvider = (source: SessionEventSource, provider: Provider): Provider => {
    if (!this.open.has(source.id)) return provider;
    return {
      name: provider.name,
      ...(provider.preflight ? { preflight: provider.preflight.bind(provider) } : {}),
      ...(provider.close ? { close: provider.close.bind(provider) } : {}),
      call: async (req, onEvent, onRetry) => {
        const turn = this.open.get(source.id);
        if (!turn) return provider.call(req, onEvent, onRetry);
        turn.modelCalls++;
        const span: SpanRecord = {
          name: `${OPERATION.chat} ${req.model}`,
          kind: 'client',
          startMs: nowMs(),
          endMs: 0,
          attributes: {
            ...turn.common,
            [GEN_AI.operationName]: OPERATION.chat,
            [GEN_AI.requestModel]: req.model,
            [GEN_AI.requestMaxTokens]: req.max_tokens,
            'warren.model_call': turn.modelCalls,
          },
        };
        try {
          const reply = await provider.call(req, onEvent, onRetry);
          const u = reply.usage;
          turn.inputTokens += u.input_tokens;
          turn.outputTokens += u.output_tokens;
          Object.assign(span.attributes, {
            [GEN_AI.finishReasons]: [reply.stop_reason],
            [GEN_AI.inputTokens]: u.input_tokens,
            [GEN_AI.outputTokens]: u.output_tokens,
            ...(u.cache_read_tokens !== undefined ? { [GEN_AI.cacheReadTokens]: u.cache_read_tokens } : {}),
            ...(u.cache_creation_tokens !== undefined ? { [GEN_AI.cacheCreationTokens]: u.cache_creation_tokens } : {}),
            ...(reply.model ? { [GEN_AI.responseModel]: reply.model } : {}),
            ...(reply.id ? { [GEN_AI.responseId]: reply.id } : {}),
          });
          return reply;
        } catch (err) {
          span.error = errorOf(err);
          throw err;
        } finally {
          span.endMs = nowMs();
          this.addChild(turn, span);
        }
      },
    };
  };

  /** The timed store: a durable commit carrying a completed turn's rows is its commit span. */
  readonly onCommit = (c: CommitObservation): void => {
    if (this.open.size === 0 || c.kind !== 'turn') return;
    for (const id of sessionsOf(c.ops)) {
      const turn = this.open.get(id);
      if (!turn?.awaitingCommit) continue;
      const end = performance.timeOrigin + c.endedMs;
      const failure = c.ok ? undefined : { type: 'commit_failed', message: 'commit failed' };
      this.addChild(turn, {
        name: 'commit',
        kind: 'internal',
        startMs: performance.timeOrigin + c.startedMs,
        endMs: end,
        attributes: { ...turn.common, 'warren.commit.ops': c.ops.length },
        ...(failure ? { error: failure } : {}),
      });
      this.finish(id, turn, end, failure, c.ok ? 'succeeded' : 'failed');
    }
  };

  /** Ends every open turn now (shutdown), so nothing started is lost. */
  flushOpen(): void {
    const stopped = { type: 'interrupted', message: 'server stopped before the turn ended' };
    for (const [id, turn] of [...this.open]) this.finish(id, turn, nowMs(), stopped, 'interrupted');
  }

  private startTurn(source: SessionEventSource): OpenTurn {
    const settings = source.settings;
    const common = { ...providerAttributes(settings.provider), [GEN_AI.conversationId]: source.id };
    const agent = settings.comms_name;
    return {
      root: {
        name: agent ? `${OPERATION.invokeAgent} ${agent}` : OPERATION.invokeAgent,
        kind: 'internal',
        startMs: nowMs(),
        endMs: 0,
        attributes: {
          ...common,
          [GEN_AI.operationName]: OPERATION.invokeAgent,
          [GEN_AI.requestModel]: settings.model,
          ...(agent ? { [GEN_AI.agentName]: agent } : {}),
          'warren.session.id': source.id,
        },
      },
      children: [],
      common,
      tools: new Map(),
      timedOut: new Set(),
      modelCalls: 0,
      toolCalls: 0,
      inputTokens: 0,
      outputTokens: 0,
      awaitingCommit: false,
    };
  }

  private addChild(turn: OpenTurn, span: SpanRecord): void {
    if (turn.children.length < CHILDREN_MAX) turn.children.push(span);
  }

  private finish(id: string, turn: OpenTurn, endMs: number, error: SpanRecord['error'], outcome: string): void {
    this.open.delete(id);
    for (const tool of turn.tools.values()) {
      tool.endMs = endMs;
      tool.error = error ?? { type: 'unfinished', message: 'the turn ended before the tool' };
      this.addChild(turn, tool);
    }
    const root = turn.root;
    root.endMs = endMs;
    if (error) root.error = error;
    Object.assign(root.attributes, {
      [GEN_AI.inputTokens]: turn.inputTokens,
      [GEN_AI.outputTokens]: turn.outputTokens,
      'warren.turn.outcome': outcome,
      'warren.turn.model_calls': turn.modelCalls,
      'warren.turn.tool_calls': turn.toolCalls,
    });
    this.exporter.emit({ root, children: turn.children });
  }
}

/** error.type and the status message of a failed model call: the service error code, else the error's name. */
function errorOf(err: unknown): NonNullable<SpanRecord['error']> {
  if (isServiceError(err)) return { type: err.code, message: err.message };
  if (err instanceof Error) return { type: err.name === 'Error' ? '_OTHER' : err.name, message: err.message };
  return { type: '_OTHER', message: String(err) };
}
