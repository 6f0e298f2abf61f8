// test/providers/adapter-suite.ts: behaviour every wire adapter shares (incremental streaming,
// retries, error classification, mid-stream failures), run by each adapter's test file against a
// loopback fake that speaks that vendor's format.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../contracts/errors.ts';
import type { Provider, ProviderRequest, ProviderResponse, RetryNotice, StreamEvent } from '../../providers/provider.ts';
import type { AdapterOptions } from '../../providers/wire-call.ts';
import {
  deferred,
  frame,
  jsonError,
  resetConnection,
  sseHead,
  sseReply,
  startFakeVendor,
  type FakeVendor,
  type Responder,
} from './fake-vendor.ts';

interface VendorFormat {
  /** Frames up to and including the text deltas for `chunks`, before any terminal event. */
  head(chunks: string[]): string[];
  /** Frames that complete the reply started by head(). */
  tail(): string[];
  /** The vendor's JSON error body for an HTTP status. */
  errorBody(status: number): unknown;
}

export interface AdapterSuiteSpec {
  name: string;
  envVar: string;
  create(opts: AdapterOptions & { baseUrl: string }): Provider;
  format: VendorFormat;
}

export interface Harness {
  vendor: FakeVendor;
  provider: Provider;
  sleeps: number[];
}

/** Starts a fake vendor and an adapter pointed at it, with instant sleeps and zero jitter. */
export async function harness(
  t: TestContext,
  spec: AdapterSuiteSpec,
  responders: Responder[],
  extra: AdapterOptions = {},
): Promise<Harness> {
  const vendor = await startFakeVendor(responders);
  const sleeps: number[] = [];
  const provider = spec.create({
    apiKey: 'test-key',
    baseUrl: vendor.url,
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    ...extra,
  });
  t.after(async () => {
    await provider.close?.();
    await vendor.close();
  });
  return { vendor, provider, sleeps };
}

export function baseRequest(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return {
    model: 'test-model',
    messages: [{ role: 'user', content: 'hi', created_at: '2026-01-01T00:00:00Z' }],
    tools: [],
    max_tokens: 256,
    signal: new AbortController().signal,
    ...overrides,
  };
}

export interface Outcome {
  events: StreamEvent[];
  retries: RetryNotice[];
  result?: ProviderResponse;
  error?: ServiceError;
}

/** Runs one call and collects everything it reported. */
export async function run(provider: Provider, req: ProviderRequest = baseRequest(), onEvent?: (e: StreamEvent) => void): Promise<Outcome> {
  const out: Outcome = { events: [], retries: [] };
  try {
    out.result = await provider.call(
      req,
      (e) => {
        out.events.push(e);
        onEvent?.(e);
      },
      (n) => out.retries.push(n),
    );
  } catch (err) {
    assert.ok(err instanceof ServiceError, `expected ServiceError, got ${String(err)}`);
    out.error = err;
  }
  return out;
}

function errorOf(o: Outcome): { code: string; details: { error: Record<string, unknown> } } {
  assert.ok(o.error, 'expected the call to fail');
  return o.error as unknown as { code: string; details: { error: Record<string, unknown> } };
}

const texts = (events: StreamEvent[]): string[] => events.filter((e) => e.type === 'text_delta').map((e) => e.delta);

/** The shared behaviour tests for one adapter. */
export function adapterSuite(spec: AdapterSuiteSpec): void {
  const f = spec.format;
  const ok = (chunks = ['ok']): Responder => sseReply([...f.head(chunks), ...f.tail()]);

  describe(`${spec.name} adapter: shared wire behaviour`, () => {
    it('emits each delta as it arrives, before the stream is complete', async (t) => {
      const gate = deferred();
      const { provider } = await harness(t, spec, [
        async (_req, res) => {
          sseHead(res);
          const frames = f.head(['Hel', 'lo ', 'wörld']);
          // Split one frame mid-way (inside a multi-byte character) to exercise incremental decoding.
          const last = Buffer.from(frames.pop()!, 'utf8');
          for (const fr of frames) res.write(fr);
          const cut = last.indexOf(Buffer.from('ö', 'utf8')) + 1;
          res.write(last.subarray(0, cut));
          res.write(last.subarray(cut));
          await gate.promise; // opened by onEvent only: a buffering adapter would never get here
          for (const fr of f.tail()) res.write(fr);
          res.end();
        },
      ]);
      let settled = false;
      const seenBeforeSettled: string[] = [];
      const out = await run(provider, baseRequest(), (e) => {
        if (!settled && e.type === 'text_delta') seenBeforeSettled.push(e.delta);
        if (seenBeforeSettled.join('') === 'Hello wörld') gate.resolve();
      });
      settled = true;
      assert.equal(out.error, undefined);
      assert.deepEqual(texts(out.events), ['Hel', 'lo ', 'wörld']);
      assert.deepEqual(seenBeforeSettled, ['Hel', 'lo ', 'wörld']);
      assert.deepEqual(
        out.result?.blocks.filter((b) => b.block_type === 'text'),
        [{ block_type: 'text', data: { text: 'Hello wörld' } }],
      );
    });

    it('retries a 429 after the retry-after hint and then succeeds', async (t) => {
      const h = await harness(t, spec, [jsonError(429, f.errorBody(429), { 'retry-after': '2' }), ok()]);
      const out = await run(h.provider);
      assert.equal(out.error, undefined);
      assert.equal(h.vendor.requests.length, 2);
      assert.equal(out.retries.length, 1);
      const n = out.retries[0];
      assert.equal(n.failure.kind, 'rate_limited');
      assert.equal(n.failure.provider, spec.name);
      assert.equal(n.failure.retry_after_ms, 2000);
      assert.deepEqual(n.plan, {
        attempt: 1,
        max_retries: 3,
        computed_delay_ms: 500,
        selected_delay_ms: 2000,
        retry_after_hint_ms: 2000,
        rate_limit_floor_applied: false,
        budget_capped: false,
      });
      assert.deepEqual(h.sleeps, [2000]);
      assert.deepEqual(texts(out.events), ['ok']);
    });

    it('gives up with retry_exhausted after four 500s', async (t) => {
      const h = await harness(t, spec, [jsonError(500, f.errorBody(500))]);
      const out = await run(h.provider);
      const err = errorOf(out);
      assert.equal(err.code, 'AGENT_ERROR');
      assert.equal(err.details.error.kind, 'retry_exhausted');
      assert.equal(err.details.error.attempts, 4);
      assert.equal(err.details.error.terminal, true);
      assert.equal((err.details.error.last_error as { status: number }).status, 500);
      assert.equal(h.vendor.requests.length, 4);
      assert.deepEqual(
        out.retries.map((r) => [r.plan.attempt, r.plan.selected_delay_ms]),
        [
          [1, 500],
          [2, 1000],
          [3, 2000],
        ],
      );
    });

    it('fails a 401 with PROVIDER_ERROR and does not retry', async (t) => {
      const h = await harness(t, spec, [jsonError(401, f.errorBody(401))]);
      const out = await run(h.provider);
      const err = errorOf(out);
      assert.equal(err.code, 'PROVIDER_ERROR');
      assert.equal(err.details.error.kind, 'llm_failure');
      assert.equal(err.details.error.status, 401);
      assert.equal(err.details.error.retryable, false);
      assert.equal(h.vendor.requests.length, 1);
      assert.equal(out.retries.length, 0);
    });

    it('fails a 400 with a non-retryable AGENT_ERROR llm_failure', async (t) => {
      const h = await harness(t, spec, [jsonError(400, f.errorBody(400))]);
      const err = errorOf(await run(h.provider));
      assert.equal(err.code, 'AGENT_ERROR');
      assert.equal(err.details.error.kind, 'llm_failure');
      assert.equal(err.details.error.terminal, true);
      assert.equal(h.vendor.requests.length, 1);
    });

    it('names the env variable when the API key is missing, without calling out', async (t) => {
      const h = await harness(t, spec, [ok()], { apiKey: undefined, apiKeyEnv: spec.envVar });
      const out = await run(h.provider);
      const err = errorOf(out);
      assert.equal(err.code, 'PROVIDER_ERROR');
      assert.match(out.error!.message, new RegExp(`${spec.envVar} is not set`));
      assert.equal(h.vendor.requests.length, 0);
    });

    it('retries a connection reset before any response header', async (t) => {
      const h = await harness(t, spec, [resetConnection, ok()]);
      const out = await run(h.provider);
      assert.equal(out.error, undefined);
      assert.equal(h.vendor.requests.length, 2);
      assert.equal(out.retries[0].failure.kind, 'retryable_provider_error');
    });

    it('retries malformed stream JSON met before any delta, and exhausts when it persists', async (t) => {
      const bad = sseReply([frame('{"type": nope')]);
      const h = await harness(t, spec, [bad, ok()]);
      const out = await run(h.provider);
      assert.equal(out.error, undefined);
      assert.equal(out.retries.length, 1);

      const h2 = await harness(t, spec, [bad], { retry: { maxRetries: 1 } });
      const err = errorOf(await run(h2.provider));
      assert.equal(err.details.error.kind, 'retry_exhausted');
      assert.equal((err.details.error.last_error as { kind: string }).kind, 'retryable_provider_error');
      assert.equal(h2.vendor.requests.length, 2);
    });

    it('retries a stream that ends without its terminal event when nothing was streamed', async (t) => {
      const h = await harness(t, spec, [sseReply([]), ok()]);
      const out = await run(h.provider);
      assert.equal(out.error, undefined);
      assert.equal(h.vendor.requests.length, 2);
    });

    it('makes a stream cut after deltas a terminal llm_failure, never replaying deltas', async (t) => {
      const h = await harness(t, spec, [sseReply(f.head(['par', 'tial'])), ok(['again'])]);
      const out = await run(h.provider);
      const err = errorOf(out);
      assert.equal(err.code, 'AGENT_ERROR');
      assert.equal(err.details.error.kind, 'llm_failure');
      assert.equal(err.details.error.terminal, true);
      assert.equal(err.details.error.reason, 'stream_interrupted');
      assert.deepEqual(texts(out.events), ['par', 'tial']);
      assert.equal(h.vendor.requests.length, 1);
    });

    it('rejects with REQUEST_CANCELLED when the signal aborts mid-stream', async (t) => {
      const ctl = new AbortController();
      const h = await harness(t, spec, [
        (_req, res) => {
          sseHead(res);
          for (const fr of f.head(['a'])) res.write(fr);
        },
      ]);
      const out = await run(h.provider, baseRequest({ signal: ctl.signal }), () => ctl.abort());
      assert.equal(errorOf(out).code, 'REQUEST_CANCELLED');
      assert.equal(h.vendor.requests.length, 1);
    });
  });
}
