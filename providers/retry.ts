// providers/retry.ts: the bounded retry policy for provider calls (wire-notes section 6): exponential
// backoff with jitter, retry-after hints, a rate-limit floor, a `retrying` notice before each sleep,
// and `retry_exhausted` after the bound. The wire adapters wrap each model call in withRetry.
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import { isServiceError, type ServiceError } from '../contracts/errors.ts';
import type { RetryNotice } from './provider.ts';
import { cancelledFailure, failureInfo, retryExhausted, thrownFailure } from './errors.ts';

/** Backoff policy. delay(n) = initialDelayMs × multiplier^(n−1), ± jitter, capped at maxDelayMs. */
export interface RetryPolicy {
  /** Retries after the first attempt (so maxRetries + 1 attempts in all). */
  maxRetries: number;
  initialDelayMs: number;
  multiplier: number;
  maxDelayMs: number;
  /** Relative jitter: 0.1 means ±10 %. */
  jitter: number;
  /** Minimum wait after a rate limit that came without a retry-after hint. */
  rateLimitFloorMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 3,
  initialDelayMs: 500,
  multiplier: 2,
  maxDelayMs: 30_000,
  jitter: 0.1,
  rateLimitFloorMs: 30_000,
});

/** Waits `ms`, rejecting early when `signal` aborts. Tests inject an instant one. */
export type SleepFn = (ms: number, signal: AbortSignal) => Promise<void>;

/** The default sleep: a real timer that honours the abort signal. */
export const realSleep: SleepFn = (ms, signal) => delay(ms, undefined, { signal });

export interface RetryOptions {
  provider: string;
  model: string;
  signal: AbortSignal;
  policy?: Partial<RetryPolicy>;
  onRetry?: (n: RetryNotice) => void;
  sleep?: SleepFn;
  /** Uniform random in [0, 1), for jitter. */
  random?: () => number;
  logger?: Logger;
}

/**
 * Computes the wait before retry number `attempt` (1-based). A retry-after hint wins when it is
 * larger than the backoff; a rate limit without a hint waits at least `rateLimitFloorMs`.
 */
export function planRetry(
  policy: RetryPolicy,
  attempt: number,
  failure: { kind: RetryNotice['failure']['kind']; retryAfterMs?: number },
  random: () => number,
): RetryNotice['plan'] {
  const base = policy.initialDelayMs * policy.multiplier ** (attempt - 1);
  const jittered = base * (1 + policy.jitter * (2 * random() - 1));
  const computed = Math.max(0, Math.round(Math.min(policy.maxDelayMs, jittered)));
  let selected = computed;
  let floorApplied = false;
  if (failure.retryAfterMs !== undefined) {
    selected = Math.max(computed, failure.retryAfterMs);
  } else if (failure.kind === 'rate_limited' && policy.rateLimitFloorMs > computed) {
    selected = policy.rateLimitFloorMs;
    floorApplied = true;
  }
  const plan: RetryNotice['plan'] = {
    attempt,
    max_retries: policy.maxRetries,
    computed_delay_ms: computed,
    selected_delay_ms: selected,
    rate_limit_floor_applied: floorApplied,
    budget_capped: false,
  };
  if (failure.retryAfterMs !== undefined) plan.retry_after_hint_ms = failure.retryAfterMs;
  return plan;
}

/**
 * Runs `attempt` until it succeeds, a failure is not retryable, or the policy's bound is reached
 * (then AGENT_ERROR `retry_exhausted`). Only failures whose details.error.retryable is true are
 * retried; errors that are not ServiceErrors count as unknown, retryable failures. The abort signal
 * is honoured during sleeps (REQUEST_CANCELLED).
 */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions): Promise<T> {
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...opts.policy };
  const sleep = opts.sleep ?? realSleep;
  const random = opts.random ?? Math.random;
  const { provider, model, signal } = opts;
  for (let n = 1; ; n++) {
    if (signal.aborted) throw cancelledFailure(provider, model, signal.reason);
    let err: ServiceError;
    try {
      return await attempt(n);
    } catch (thrown) {
      err = isServiceError(thrown) ? thrown : thrownFailure(provider, model, thrown, { cancelled: signal.aborted, callTimedOut: false });
    }
    const info = failureInfo(err);
    if (!info?.retryable || !info.failure) throw err;
    if (n > policy.maxRetries) throw retryExhausted(provider, model, n, err);
    const plan = planRetry(policy, n, { kind: info.failure, retryAfterMs: info.retry_after_ms }, random);
    const failure: RetryNotice['failure'] = { kind: info.failure, message: err.message, provider };
    if (info.retry_after_ms !== undefined) failure.retry_after_ms = info.retry_after_ms;
    opts.logger?.warn({ provider, model, attempt: n, delay_ms: plan.selected_delay_ms, failure: info.failure }, 'provider call retrying');
    opts.onRetry?.({ failure, plan });
    try {
      await sleep(plan.selected_delay_ms, signal);
    } catch (sleepErr) {
      throw cancelledFailure(provider, model, sleepErr);
    }
  }
}
