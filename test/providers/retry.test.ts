import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../contracts/errors.ts';
import { statusFailure } from '../../providers/errors.ts';
import { DEFAULT_RETRY_POLICY, planRetry, realSleep, withRetry } from '../../providers/retry.ts';
import { Compile } from 'typebox/compile';
import { SESSION_EVENTS } from '../../contracts/session-events.ts';
import type { RetryNotice } from '../../providers/provider.ts';

const mid = (): number => 0.5; // zero jitter
const opts = (extra: Partial<Parameters<typeof withRetry>[1]> = {}) => ({
  provider: 'p',
  model: 'm',
  signal: new AbortController().signal,
  sleep: async () => {},
  random: mid,
  ...extra,
});
const details = (e: unknown) => (e as ServiceError).details as { error: Record<string, unknown> };

describe('retry policy', () => {
  it('backs off exponentially and caps at maxDelayMs', () => {
    const p = { ...DEFAULT_RETRY_POLICY, maxRetries: 10 };
    const delays = [1, 2, 3, 4, 7, 8].map((n) => planRetry(p, n, { kind: 'retryable_provider_error' }, mid).computed_delay_ms);
    assert.deepEqual(delays, [500, 1000, 2000, 4000, 30_000, 30_000]);
  });

  it('applies at most ±jitter', () => {
    const low = planRetry(DEFAULT_RETRY_POLICY, 1, { kind: 'network_timeout' }, () => 0).computed_delay_ms;
    const high = planRetry(DEFAULT_RETRY_POLICY, 1, { kind: 'network_timeout' }, () => 0.999999).computed_delay_ms;
    assert.equal(low, 450);
    assert.equal(high, 550);
  });

  it('lets a larger retry-after hint win, and keeps the backoff when the hint is smaller', () => {
    const big = planRetry(DEFAULT_RETRY_POLICY, 2, { kind: 'rate_limited', retryAfterMs: 5000 }, mid);
    assert.equal(big.selected_delay_ms, 5000);
    assert.equal(big.retry_after_hint_ms, 5000);
    assert.equal(big.rate_limit_floor_applied, false);
    const small = planRetry(DEFAULT_RETRY_POLICY, 2, { kind: 'retryable_provider_error', retryAfterMs: 10 }, mid);
    assert.equal(small.selected_delay_ms, 1000);
  });

  it('waits at least the rate-limit floor when a rate limit has no hint', () => {
    const plan = planRetry(DEFAULT_RETRY_POLICY, 1, { kind: 'rate_limited' }, mid);
    assert.equal(plan.selected_delay_ms, 30_000);
    assert.equal(plan.rate_limit_floor_applied, true);
  });
});

describe('withRetry', () => {
  it('retries retryable failures, notifying before each sleep, until success', async () => {
    const notices: RetryNotice[] = [];
    const sleeps: number[] = [];
    let calls = 0;
    const result = await withRetry(
      async () => {
        if (++calls < 3) throw statusFailure('p', 'm', 503, 'busy');
        return 'done';
      },
      opts({ onRetry: (n) => notices.push(n), sleep: async (ms) => void sleeps.push(ms) }),
    );
    assert.equal(result, 'done');
    assert.deepEqual(sleeps, [500, 1000]);
    assert.deepEqual(
      notices.map((n) => [n.failure.kind, n.plan.attempt]),
      [
        ['retryable_provider_error', 1],
        ['retryable_provider_error', 2],
      ],
    );
    // Each notice is the payload of a `retrying` event: it must match that event's schema.
    const check = Compile(SESSION_EVENTS.retrying);
    for (const retry of notices) assert.ok(check.Check({ retry }), JSON.stringify(retry));
  });

  it('does not retry a non-retryable failure', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(async () => {
        calls++;
        throw statusFailure('p', 'm', 404, 'no such model');
      }, opts()),
      (e) => details(e).error.kind === 'llm_failure',
    );
    assert.equal(calls, 1);
  });

  it('retries unknown errors and reports retry_exhausted with the last error', async () => {
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw new Error('boom');
        },
        opts({ policy: { maxRetries: 2 } }),
      ),
      (e) => {
        const d = details(e).error;
        assert.equal((e as ServiceError).code, 'AGENT_ERROR');
        assert.equal(d.kind, 'retry_exhausted');
        assert.equal(d.attempts, 3);
        assert.equal(d.provider, 'p');
        assert.equal(d.model, 'm');
        assert.equal((d.last_error as { kind: string }).kind, 'retryable_provider_error');
        return true;
      },
    );
    assert.equal(calls, 3);
  });

  it('is cancelled by the abort signal during a backoff sleep', async () => {
    const ctl = new AbortController();
    let calls = 0;
    await assert.rejects(
      withRetry(
        async () => {
          calls++;
          throw statusFailure('p', 'm', 500, 'down');
        },
        opts({
          signal: ctl.signal,
          sleep: realSleep,
          policy: { initialDelayMs: 60_000 },
          onRetry: () => ctl.abort(),
        }),
      ),
      (e) => (e as ServiceError).code === 'REQUEST_CANCELLED',
    );
    assert.equal(calls, 1);
  });
});
