// actors/session/turn-runner.ts: one logical turn. Streams model calls through the provider, dispatches the
// tool calls the model asks for, and loops until the model stops (or max_tokens / the iteration cap).
// It never writes to storage: it returns the rows to commit and reports progress through `emit`.
import type { AssistantBlock, Message, StopReason, ToolResult, ProviderUsage } from '../../contracts/transcript.ts';
import type { SessionEventKind, SessionEventPayload } from '../../contracts/session-events.ts';
import type { ToolSpec } from '../../contracts/tool.ts';
import type { Provider, ProviderResponse } from '../../providers/provider.ts';
import type { ToolContext, ToolOutcome } from '../../tools/tool.ts';
import type { TurnPhase } from '../../machines/session-machine.ts';

/** The slice of a tool set the runner needs (tools/registry.ts provides it). */
export interface TurnToolset {
  specs: ToolSpec[];
  dispatch(name: string, args: unknown, ctx: ToolContext): Promise<ToolOutcome>;
}

/** A tool call as the guard sees it. */
export interface GuardedCall {
  id: string;
  name: string;
  args: unknown;
}

/**
 * Checks around each step of the loop (hooks and budgets, actors/turn-features/run-features.ts). Each
 * may reject (403 HOOK_DENIED, 429 BUDGET_EXHAUSTED), which ends the turn like any other failure.
 */
export interface TurnGuard {
  beforeModelCall(turn: number, request: { system?: string; messages: Message[]; tools: ToolSpec[] }): Promise<void>;
  afterModelCall(turn: number, reply: ProviderResponse): Promise<void>;
  /** Before a batch of tool calls is dispatched (none of them has run yet). */
  beforeTools(calls: GuardedCall[]): Promise<void>;
  afterTool(call: GuardedCall, result: ToolResult): Promise<void>;
  /** Between two model calls, after the tool results are in. */
  turnBoundary(turn: number, toolCalls: number): Promise<void>;
}

export interface TurnRunInput {
  sessionId: string;
  model: string;
  provider: Provider;
  maxTokens: number;
  /** Committed transcript rows (system rows included). */
  history: Message[];
  /** This turn's new rows: injected context, optional system row, then the user row (last). */
  newRows: Message[];
  /** Request-local context placed right before the user message; never stored. */
  transientContext?: string;
  /** Session system prompt; undefined = none. System rows of the transcript are appended to it. */
  systemPrompt?: string;
  toolset: TurnToolset | null;
  contextRoot: string;
  maxIterations: number;
  maxConcurrentTools: number;
  signal: AbortSignal;
  emit<K extends SessionEventKind>(kind: K, payload: SessionEventPayload<K>): void;
  onPhase(phase: TurnPhase): void;
  now(): string;
  guard?: TurnGuard;
  /** Steering rows to place before each model call after the first (comms `handling_mode: steer`). */
  pullSteer?(): Message[];
}

export interface TurnRunResult {
  producedRows: Message[];
  text: string;
  turns: number;
  toolCalls: number;
  usage: ProviderUsage;
  stopReason: StopReason;
  /** Input tokens of the last model call (the compaction trigger's provider high-water mark). */
  lastInputTokens: number;
}

/**
 * Splits the transcript into the provider's system text and its conversation rows. `produced` are the
 * rows this turn has produced so far (assistant replies, tool results): the transient context stays right
 * before the turn's user row on every call of the loop, never between a tool call and its result.
 */
export function projectForProvider(
  input: Pick<TurnRunInput, 'history' | 'newRows' | 'transientContext' | 'systemPrompt' | 'now'>,
  produced: Message[] = [],
): {
  system?: string;
  messages: Message[];
} {
  const systemParts: string[] = input.systemPrompt ? [input.systemPrompt] : [];
  const messages: Message[] = [];
  const lastUser = input.history.length + input.newRows.length - 1;
  let i = 0;
  // Plain loops over the three parts (this runs over the whole history on every model call).
  for (const part of [input.history, input.newRows, produced]) {
    for (let j = 0; j < part.length; j++, i++) {
      const row = part[j];
      if (row.role === 'system') {
        systemParts.push(row.content);
        continue;
      }
      if (i === lastUser && input.transientContext) {
        messages.push({ role: 'user', content: input.transientContext, created_at: input.now() });
      }
      messages.push(row);
    }
  }
  return { system: systemParts.length ? systemParts.join('\n\n') : undefined, messages };
}

function addUsage(a: ProviderUsage, b: ProviderUsage): ProviderUsage {
  const out: ProviderUsage = { input_tokens: a.input_tokens + b.input_tokens, output_tokens: a.output_tokens + b.output_tokens };
  const cc = (a.cache_creation_tokens ?? 0) + (b.cache_creation_tokens ?? 0);
  const cr = (a.cache_read_tokens ?? 0) + (b.cache_read_tokens ?? 0);
  if (a.cache_creation_tokens !== undefined || b.cache_creation_tokens !== undefined) out.cache_creation_tokens = cc;
  if (a.cache_read_tokens !== undefined || b.cache_read_tokens !== undefined) out.cache_read_tokens = cr;
  return out;
}

function textOf(blocks: AssistantBlock[]): string {
  let s = '';
  for (const b of blocks) if (b.block_type === 'text') s += b.data.text;
  return s;
}

/** Runs the model/tool loop. Rejects with the provider's ServiceError, or an AbortError when cancelled. */
export async function runTurn(input: TurnRunInput): Promise<TurnRunResult> {
  const produced: Message[] = [];
  let usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  let turns = 0;
  let toolCalls = 0;
  let text = '';
  let stopReason: StopReason = 'end_turn';
  let lastInputTokens = 0;
  const { system } = projectForProvider(input);
  for (let iteration = 0; iteration < input.maxIterations; iteration++) {
    input.signal.throwIfAborted();
    if (iteration > 0 && input.pullSteer) produced.push(...input.pullSteer());
    const { messages } = projectForProvider(input, produced);
    turns++;
    await input.guard?.beforeModelCall(turns, { system, messages, tools: input.toolset?.specs ?? [] });
    input.onPhase('calling_model');
    input.emit('turn_started', { turn_number: turns });
    const reply = await input.provider.call(
      { model: input.model, system, messages, tools: input.toolset?.specs ?? [], max_tokens: input.maxTokens, signal: input.signal },
      (ev) => {
        if (ev.type === 'text_delta') input.emit('text_delta', { delta: ev.delta });
        else input.emit('reasoning_delta', { delta: ev.delta });
      },
      (notice) => input.emit('retrying', { retry: notice }),
    );
    input.signal.throwIfAborted();
    usage = addUsage(usage, reply.usage);
    lastInputTokens = reply.usage.input_tokens;
    stopReason = reply.stop_reason;
    produced.push({ role: 'block_assistant', blocks: reply.blocks, stop_reason: reply.stop_reason, created_at: input.now() });
    const replyText = textOf(reply.blocks);
    if (replyText) {
      text = replyText;
      input.emit('text_complete', { content: replyText });
    }
    input.emit('turn_completed', { stop_reason: reply.stop_reason, usage: reply.usage });
    await input.guard?.afterModelCall(turns, reply);
    const calls = reply.blocks.filter((b): b is Extract<AssistantBlock, { block_type: 'tool_use' }> => b.block_type === 'tool_use');
    if (calls.length === 0 || reply.stop_reason === 'max_tokens') break;
    await input.guard?.beforeTools(calls.map((c) => c.data));
    input.onPhase('executing_tools');
    toolCalls += calls.length;
    const results = await dispatchAll(input, calls);
    produced.push({ role: 'tool_results', results, created_at: input.now() });
    await input.guard?.turnBoundary(turns, toolCalls);
  }
  return { producedRows: produced, text, turns, toolCalls, usage, stopReason, lastInputTokens };
}

async function dispatchAll(input: TurnRunInput, calls: Array<Extract<AssistantBlock, { block_type: 'tool_use' }>>): Promise<ToolResult[]> {
  const results: ToolResult[] = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const i = next++;
      const { id, name, args } = calls[i].data;
      input.emit('tool_call_requested', { id, name, args });
      results[i] = await dispatchOne(input, id, name, args);
    }
  };
  const n = Math.max(1, Math.min(input.maxConcurrentTools, calls.length));
  await Promise.all(Array.from({ length: n }, worker));
  return results;
}

async function dispatchOne(input: TurnRunInput, id: string, name: string, args: unknown): Promise<ToolResult> {
  const started = Date.now();
  input.emit('tool_execution_started', { id, name });
  let outcome: ToolOutcome;
  if (!input.toolset) outcome = { content: `unknown tool: ${name}`, is_error: true };
  else {
    try {
      outcome = await input.toolset.dispatch(name, args, {
        sessionId: input.sessionId,
        contextRoot: input.contextRoot,
        signal: input.signal,
      });
    } catch (err) {
      outcome = { content: err instanceof Error ? err.message : String(err), is_error: true };
    }
  }
  input.signal.throwIfAborted();
  const isError = outcome.is_error === true;
  if (outcome.timed_out) input.emit('tool_execution_timed_out', { id, name, timeout_ms: outcome.timed_out.timeout_ms });
  input.emit('tool_execution_completed', { id, name, content: outcome.content, is_error: isError, duration_ms: Date.now() - started });
  input.emit('tool_result_received', { id, name, content: [{ type: 'text', text: outcome.content }], is_error: isError });
  const result: ToolResult = { tool_use_id: id, content: outcome.content };
  if (isError) result.is_error = true;
  await input.guard?.afterTool({ id, name, args }, result);
  return result;
}
