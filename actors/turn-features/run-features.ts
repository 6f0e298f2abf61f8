// actors/turn-features/run-features.ts: what shapes one run beyond its prompt: structured output,
// budgets and hooks. `TurnFeatureService` (one per server, installed by the turn-features module on the
// runtime deps) prepares a run before anything runs (400s) and begins it; `RunFeatures` is what the
// session actor calls at a few points of its turn, and the TurnGuard it hands to the turn runner.
import type { Config } from '../../contracts/config.ts';
import type { SessionEventKind, SessionEventPayload } from '../../contracts/session-events.ts';
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import type { ContentInput, Message, ToolResult } from '../../contracts/transcript.ts';
import type { HookRunOverrides, SchemaWarning } from '../../contracts/turn-features.ts';
import { jsonSchemaSlot, lowerSchema } from '../../providers/json-schema-slot.ts';
import type { ProviderName } from '../../contracts/session.ts';
import type { ProviderUsage } from '../../contracts/transcript.ts';
import type { Provider, ProviderResponse } from '../../providers/provider.ts';
import type { GuardedCall, TurnGuard } from '../session/turn-runner.ts';
import { budgetExhausted, durationMs, requestBudget, RunBudget, runLimits, type RequestBudget } from './budget.ts';
import type { BudgetLimitsRequest } from '../../contracts/turn-features.ts';
import { extract } from './extraction.ts';
import { BackgroundSlots, RunHooks, runEntries } from './hook-engine.ts';
import { OutputSchemaCompiler, type ResolvedOutputSchema } from './output-schema.ts';

/** The request fields a run plan is made from (create and continue share them). */
export interface RunFeatureRequest {
  output_schema?: unknown;
  structured_output_retries?: number | null;
  hooks_override?: HookRunOverrides | null;
  budget_limits?: BudgetLimitsRequest | null;
}

/** Everything decided before the run starts. */
export interface RunPlan {
  output?: {
    resolved: ResolvedOutputSchema;
    /** The vendor slot's schema; undefined means prompt-only extraction. */
    slot?: { schema: Record<string, unknown>; strict: boolean };
    warnings: SchemaWarning[];
  };
  retries: number;
  hooks?: HookRunOverrides | null;
  /** The request's `budget_limits` (tightening the config's budgets for this run). */
  budget?: RequestBudget;
  /** The request's feature members as sent (non-null only): a turn's recording keeps them for its replay. */
  request?: RunFeatureRequest;
}

/** The feature members a request actually set (null and absent members left out); undefined when none. */
function featureRequest(req: RunFeatureRequest): RunFeatureRequest | undefined {
  const out: RunFeatureRequest = {};
  if (req.output_schema != null) out.output_schema = req.output_schema;
  if (req.structured_output_retries != null) out.structured_output_retries = req.structured_output_retries;
  if (req.hooks_override != null) out.hooks_override = req.hooks_override;
  if (req.budget_limits != null) out.budget_limits = req.budget_limits;
  return Object.keys(out).length ? out : undefined;
}

export interface RunContext {
  sessionId: string;
  requestId: string;
  plan?: RunPlan;
  emit<K extends SessionEventKind>(kind: K, payload: SessionEventPayload<K>): void;
  /** Stops the run in flight (a time budget ran out while a call was running). */
  abort(reason: ServiceError): void;
  /** The run's signal (interrupt, cancel, time budget). */
  signal?: AbortSignal;
}

export interface ExtraOutcome {
  rows: Message[];
  turns: number;
  usage: ProviderUsage;
  structured_output?: unknown;
  extraction_error?: { last_output: string; attempts: number; reason: string };
  schema_warnings?: SchemaWarning[];
}

export class TurnFeatureService {
  private readonly compiler = new OutputSchemaCompiler();
  readonly slots = new BackgroundSlots();

  constructor(
    private readonly config: () => Config,
    private readonly clock: () => number,
    private readonly env: NodeJS.ProcessEnv,
  ) {}

  /**
   * Checks a run's features before anything runs: the output schema (400 when invalid, or when
   * `compat: "strict"` meets a feature the provider's slot cannot express) and the retries.
   */
  prepare(req: RunFeatureRequest, provider: ProviderName, persistedRetries?: number): RunPlan {
    const cfg = this.config();
    const retries = req.structured_output_retries ?? persistedRetries ?? cfg.agent.structured_output_retries;
    const plan: RunPlan = { retries, hooks: req.hooks_override ?? null };
    const sent = featureRequest(req);
    if (sent) plan.request = sent;
    const budget = requestBudget(req.budget_limits);
    if (budget) plan.budget = budget;
    if (req.output_schema == null) return plan;
    const resolved = this.compiler.resolve(req.output_schema);
    const native = jsonSchemaSlot(provider) !== null && cfg.providers[provider]?.native_json_schema !== false;
    if (!native) {
      plan.output = { resolved, warnings: [] };
      return plan;
    }
    const lowered = lowerSchema(provider, resolved.schema, resolved.strict);
    if (resolved.compat === 'strict' && lowered.warnings.length) {
      throw new ServiceError(
        'BAD_REQUEST',
        `output_schema uses features the ${provider} JSON-schema slot cannot express (compat: "strict")`,
        { schema_warnings: lowered.warnings },
      );
    }
    plan.output = { resolved, slot: { schema: lowered.schema, strict: resolved.strict }, warnings: lowered.warnings };
    return plan;
  }

  /** The run's features, or undefined when it has none (no hooks, budgets or schema): the turn runs bare. */
  begin(ctx: RunContext): RunFeatures | undefined {
    const cfg = this.config();
    const hooks = runEntries(cfg.hooks.entries, ctx.plan?.hooks);
    const budgeted =
      cfg.budget.max_tokens !== undefined ||
      cfg.budget.max_tool_calls !== undefined ||
      cfg.budget.max_duration !== undefined ||
      cfg.limits.max_turn_duration !== undefined ||
      ctx.plan?.budget !== undefined;
    if (!hooks.length && !budgeted && !ctx.plan?.output) return undefined;
    return new RunFeatures(
      ctx,
      cfg,
      this.clock,
      hooks.length ? new RunHooks(hooks, cfg.hooks, this.slots, { ...ctx, now: this.clock, env: this.env }) : null,
    );
  }
}

function toolCallsOf(reply: ProviderResponse): GuardedCall[] {
  return reply.blocks.flatMap((b) => (b.block_type === 'tool_use' ? [b.data] : []));
}

function textOf(reply: ProviderResponse): string {
  return reply.blocks.map((b) => (b.block_type === 'text' ? b.data.text : '')).join('');
}

export class RunFeatures implements TurnGuard {
  private readonly budget: RunBudget;
  private timers: NodeJS.Timeout[] = [];
  private turnTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ctx: RunContext,
    private readonly cfg: Config,
    private readonly clock: () => number,
    private readonly hooks: RunHooks | null,
  ) {
    this.budget = new RunBudget(
      ctx.sessionId,
      runLimits(
        {
          maxTokens: cfg.budget.max_tokens,
          maxToolCalls: cfg.budget.max_tool_calls,
          maxDurationMs: durationMs(cfg.budget.max_duration),
          maxTurnDurationMs: durationMs(cfg.limits.max_turn_duration),
          warningThreshold: cfg.agent.budget_warning_threshold,
        },
        ctx.plan?.budget,
      ),
      clock,
      (p) => ctx.emit('budget_warning', p),
    );
    // The run's duration also bounds a call in flight: when it runs out, the run is stopped.
    const remaining = this.budget.remainingMs();
    if (remaining !== undefined) {
      const limit = remaining;
      this.timers.push(this.arm(remaining, () => budgetExhausted(ctx.sessionId, 'time', 'run', limit, limit)));
    }
  }

  get extractionRequired(): boolean {
    return this.ctx.plan?.output !== undefined;
  }

  private arm(ms: number, reason: () => ServiceError): NodeJS.Timeout {
    const t = setTimeout(() => this.ctx.abort(reason()), ms);
    t.unref();
    return t;
  }

  /** run_started hooks (a guardrail may refuse the run before any model call). */
  async started(prompt: ContentInput): Promise<void> {
    await this.hooks?.fire('run_started', { prompt });
  }

  async beforeModelCall(turn: number, request: { system?: string; messages: Message[]; tools: Array<{ name: string }> }): Promise<void> {
    this.budget.beforeModelCall();
    const turnLimit = this.budget.turnLimitMs();
    if (turnLimit !== undefined)
      this.turnTimer = this.arm(turnLimit, () => budgetExhausted(this.ctx.sessionId, 'time', 'turn', turnLimit, turnLimit));
    if (this.hooks?.has('pre_llm_request')) {
      await this.hooks.fire('pre_llm_request', {
        turn_number: turn,
        system: request.system ?? null,
        messages: request.messages,
        tool_names: request.tools.map((t) => t.name),
      });
    }
  }

  async afterModelCall(turn: number, reply: ProviderResponse): Promise<void> {
    clearTimeout(this.turnTimer);
    this.budget.afterModelCall(reply.usage.input_tokens + reply.usage.output_tokens);
    await this.hooks?.fire('post_llm_response', {
      turn_number: turn,
      text: textOf(reply),
      tool_calls: toolCallsOf(reply),
      stop_reason: reply.stop_reason,
      usage: reply.usage,
    });
  }

  async beforeTools(calls: GuardedCall[]): Promise<void> {
    this.budget.beforeTools(calls.length);
    if (!this.hooks?.has('pre_tool_execution')) return;
    for (const call of calls) await this.hooks.fire('pre_tool_execution', { tool_call: call });
  }

  async afterTool(call: GuardedCall, result: ToolResult): Promise<void> {
    await this.hooks?.fire('post_tool_execution', {
      tool_call: call,
      result: { content: result.content, is_error: result.is_error === true },
    });
  }

  async turnBoundary(turn: number, toolCalls: number): Promise<void> {
    await this.hooks?.fire('turn_boundary', { turn_number: turn, tool_calls: toolCalls });
  }

  /** run_completed hooks, before the commit: a guardrail deny keeps nothing of the run. */
  async completing(text: string, usage: ProviderUsage): Promise<void> {
    await this.hooks?.fire('run_completed', { text, usage });
  }

  /** Structured-output extraction after the committed turn; emits extraction_succeeded / extraction_failed. */
  async extract(args: {
    provider: Provider;
    model: string;
    maxTokens: number;
    system?: string;
    messages: Message[];
    committedText: string;
    signal: AbortSignal;
    now(): string;
  }): Promise<ExtraOutcome | undefined> {
    const out = this.ctx.plan?.output;
    if (!out) return undefined;
    const r = await extract({
      ...args,
      schema: out.resolved.schema,
      validate: out.resolved.validate,
      name: out.resolved.name,
      slot: out.slot,
      retries: this.ctx.plan!.retries,
      instruction: this.cfg.agent.extraction_prompt,
    });
    const warnings = out.warnings.length ? { schema_warnings: out.warnings } : {};
    if (r.value) {
      this.ctx.emit('extraction_succeeded', { session_id: this.ctx.sessionId, structured_output: r.value.structured_output, ...warnings });
      return { rows: r.rows, turns: r.turns, usage: r.usage, structured_output: r.value.structured_output, ...warnings };
    }
    const error = r.error!;
    this.ctx.emit('extraction_failed', { session_id: this.ctx.sessionId, ...error });
    return { rows: r.rows, turns: r.turns, usage: r.usage, extraction_error: error, ...warnings };
  }

  /** run_failed hooks. A failing or denying hook here changes nothing: the run has already failed. */
  async failed(err: unknown): Promise<void> {
    const error = isServiceError(err) ? { code: err.code, message: err.message } : { code: 'INTERNAL_ERROR', message: String(err) };
    await this.hooks?.fire('run_failed', { error }).catch(() => {});
  }

  dispose(): void {
    for (const t of this.timers) clearTimeout(t);
    clearTimeout(this.turnTimer);
    this.timers = [];
  }
}
