// actors/turn-features/budget.ts: one run's budgets (`[budget] max_tokens`, `max_tool_calls`,
// `max_duration`, `[limits] max_turn_duration`). The turn guard asks it before each model call and each
// tool batch; crossing `[agent] budget_warning_threshold` emits one `budget_warning` per budget and run,
// and running out throws 429 BUDGET_EXHAUSTED (terminal cause budget_exhausted / time_budget_exceeded).
// A request's `budget_limits` (the reference's BudgetLimits) applies the same way for its run, tightening
// the config (runLimits): tokens are checked before each model call, tool calls before each batch.
import { ServiceError } from '../../contracts/errors.ts';
import type { BudgetLimitsRequest, DurationValue } from '../../contracts/turn-features.ts';

export type BudgetType = 'tokens' | 'tool_calls' | 'time';

export interface BudgetLimits {
  maxTokens?: number;
  maxToolCalls?: number;
  maxDurationMs?: number;
  maxTurnDurationMs?: number;
  warningThreshold: number;
}

/** A request's own limits (`budget_limits`), in milliseconds. */
export type RequestBudget = Omit<BudgetLimits, 'warningThreshold'>;

/** Milliseconds of the reference's wire Duration `{secs, nanos}`. */
function wireMs(d: { secs: number; nanos: number } | null | undefined): number | undefined {
  return d == null ? undefined : d.secs * 1000 + d.nanos / 1e6;
}

/** The request's `budget_limits` as run limits; undefined when it sets none. */
export function requestBudget(b: BudgetLimitsRequest | null | undefined): RequestBudget | undefined {
  if (!b) return undefined;
  const out: RequestBudget = {};
  if (b.max_tokens != null) out.maxTokens = b.max_tokens;
  if (b.max_tool_calls != null) out.maxToolCalls = b.max_tool_calls;
  const d = wireMs(b.max_duration);
  if (d !== undefined) out.maxDurationMs = d;
  const td = wireMs(b.max_turn_duration);
  if (td !== undefined) out.maxTurnDurationMs = td;
  return Object.keys(out).length ? out : undefined;
}

/** The tighter of two optional limits (a request can only lower the operator's budget). */
function tighter(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.min(a, b);
}

/** The run's limits: the config's, tightened by the request's `budget_limits`. */
export function runLimits(config: BudgetLimits, request: RequestBudget | undefined): BudgetLimits {
  if (!request) return config;
  return {
    maxTokens: tighter(config.maxTokens, request.maxTokens),
    maxToolCalls: tighter(config.maxToolCalls, request.maxToolCalls),
    maxDurationMs: tighter(config.maxDurationMs, request.maxDurationMs),
    maxTurnDurationMs: tighter(config.maxTurnDurationMs, request.maxTurnDurationMs),
    warningThreshold: config.warningThreshold,
  };
}

/** Milliseconds of a config duration (seconds as a number, or "500ms" / "90s" / "5m" / "1h"). */
export function durationMs(v: DurationValue | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'number') return v * 1000;
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)$/.exec(v);
  if (!m) return undefined;
  const scale = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as 'ms' | 's' | 'm' | 'h'];
  return Number(m[1]) * scale;
}

/** The 429 a run ends with when `budget` runs out. */
export function budgetExhausted(sessionId: string, budget: BudgetType, scope: 'run' | 'turn', limit: number, used: number): ServiceError {
  const kind = budget === 'time' ? 'time_budget_exceeded' : 'budget_exhausted';
  const what = budget === 'time' ? (scope === 'turn' ? 'turn duration' : 'run duration') : budget === 'tokens' ? 'token' : 'tool call';
  return new ServiceError('BUDGET_EXHAUSTED', `${what} budget exhausted: used ${used} of ${limit}`, {
    session_id: sessionId,
    budget_type: budget,
    scope,
    limit,
    used,
    error: { kind, terminal: true },
  });
}

export class RunBudget {
  private tokens = 0;
  private toolCalls = 0;
  private readonly startedMs: number;
  private turnStartedMs = 0;
  private readonly warned = new Set<BudgetType>();

  constructor(
    private readonly sessionId: string,
    private readonly limits: BudgetLimits,
    private readonly now: () => number,
    private readonly warn: (payload: { budget_type: BudgetType; used: number; limit: number; percent: number }) => void,
  ) {
    this.startedMs = now();
  }

  private observe(type: BudgetType, used: number, limit: number | undefined): void {
    if (limit === undefined || this.warned.has(type)) return;
    const percent = limit === 0 ? 1 : used / limit;
    if (percent >= this.limits.warningThreshold) {
      this.warned.add(type);
      this.warn({ budget_type: type, used, limit, percent });
    }
  }

  private checkDuration(): void {
    const limit = this.limits.maxDurationMs;
    if (limit === undefined) return;
    const used = this.now() - this.startedMs;
    this.observe('time', used, limit);
    if (used >= limit) throw budgetExhausted(this.sessionId, 'time', 'run', limit, used);
  }

  /** Before a model call: the run's time and tokens must not be spent. */
  beforeModelCall(): void {
    this.checkDuration();
    const { maxTokens } = this.limits;
    if (maxTokens !== undefined && this.tokens >= maxTokens) throw budgetExhausted(this.sessionId, 'tokens', 'run', maxTokens, this.tokens);
    this.turnStartedMs = this.now();
  }

  /** After a model call: counts its tokens; a call that outlasted `max_turn_duration` ends the run. */
  afterModelCall(tokens: number): void {
    this.tokens += tokens;
    this.observe('tokens', this.tokens, this.limits.maxTokens);
    const turnLimit = this.limits.maxTurnDurationMs;
    if (turnLimit !== undefined) {
      const used = this.now() - this.turnStartedMs;
      if (used >= turnLimit) throw budgetExhausted(this.sessionId, 'time', 'turn', turnLimit, used);
    }
  }

  /** Before a tool batch: the whole batch must fit in `max_tool_calls`, and the run's time must remain. */
  beforeTools(count: number): void {
    this.checkDuration();
    const limit = this.limits.maxToolCalls;
    if (limit === undefined) return;
    if (this.toolCalls + count > limit) throw budgetExhausted(this.sessionId, 'tool_calls', 'run', limit, this.toolCalls);
    this.toolCalls += count;
    this.observe('tool_calls', this.toolCalls, limit);
  }

  /** The per-model-call duration limit (`max_turn_duration`), if any. */
  turnLimitMs(): number | undefined {
    return this.limits.maxTurnDurationMs;
  }

  /** Milliseconds left of the run's duration budget (undefined: unlimited). */
  remainingMs(): number | undefined {
    const limit = this.limits.maxDurationMs;
    return limit === undefined ? undefined : Math.max(0, limit - (this.now() - this.startedMs));
  }
}
