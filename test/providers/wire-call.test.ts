import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../contracts/errors.ts';
import { createWireCaller, endpointUrl, type AdapterOptions } from '../../providers/wire-call.ts';
import { frame, sseHead, sseReply, startFakeVendor, type Responder } from './fake-vendor.ts';

async function callOnce(t: import('node:test').TestContext, responder: Responder, opts: AdapterOptions): Promise<ServiceError | string> {
  const vendor = await startFakeVendor([responder]);
  const caller = createWireCaller('other', { sleep: async () => {}, ...opts });
  t.after(async () => {
    await caller.close();
    await vendor.close();
  });
  try {
    return await caller.call({
      model: 'm',
      url: `${vendor.url}/x`,
      headers: {},
      body: {},
      signal: new AbortController().signal,
      onEvent: () => {},
      decoder: () => {
        let text = '';
        return { onEvent: (ev) => void (text += ev.data), finish: () => text };
      },
    });
  } catch (err) {
    assert.ok(err instanceof ServiceError);
    return err;
  }
}

const lastErrorKind = (e: ServiceError | string): unknown =>
  ((e as ServiceError).details as { error: { last_error: { kind: string } } }).error.last_error.kind;

describe('wire call', () => {
  it('joins base URLs without doubling the version segment', () => {
    assert.equal(endpointUrl('https://api.anthropic.com', 'v1', 'messages'), 'https://api.anthropic.com/v1/messages');
    assert.equal(endpointUrl('https://api.openai.com/v1/', 'v1', 'responses'), 'https://api.openai.com/v1/responses');
    assert.equal(endpointUrl('http://localhost:11434/v1', 'v1', 'chat/completions'), 'http://localhost:11434/v1/chat/completions');
    assert.equal(endpointUrl('http://vllm:8000', 'v1', 'chat/completions'), 'http://vllm:8000/v1/chat/completions');
    assert.equal(endpointUrl('http://proxy/openai/v1', 'v1', 'chat/completions'), 'http://proxy/openai/v1/chat/completions');
    assert.equal(endpointUrl('https://g.example/v1beta', 'v1beta', 'models/x'), 'https://g.example/v1beta/models/x');
  });

  it('sends JSON with SSE accept headers and returns the decoded stream', async (t) => {
    const result = await callOnce(t, sseReply([frame('a'), frame('b')]), {});
    assert.equal(result, 'ab');
  });

  it('classifies a silent stream as a network timeout (the inactivity guard)', async (t) => {
    const err = await callOnce(t, (_req, res) => sseHead(res), { inactivityTimeoutMs: 20, retry: { maxRetries: 0 } });
    assert.equal(lastErrorKind(err), 'network_timeout');
  });

  it('classifies an attempt that outlives callTimeoutMs as a call timeout', async (t) => {
    const err = await callOnce(
      t,
      (_req, res) => {
        sseHead(res);
        res.write(frame('x'));
      },
      { callTimeoutMs: 30, retry: { maxRetries: 0 } },
    );
    assert.equal(lastErrorKind(err), 'call_timeout');
  });

  it('classifies a refused connection as retryable', async (t) => {
    const vendor = await startFakeVendor([sseReply([])]);
    const url = vendor.url;
    await vendor.close();
    const caller = createWireCaller('other', { sleep: async () => {}, retry: { maxRetries: 1 } });
    t.after(() => caller.close());
    await assert.rejects(
      caller.call({
        model: 'm',
        url,
        headers: {},
        body: {},
        signal: new AbortController().signal,
        onEvent: () => {},
        decoder: () => ({ onEvent() {}, finish: () => 1 }),
      }),
      (err: ServiceError) => {
        const e = (err.details as { error: { kind: string; attempts: number; last_error: { kind: string } } }).error;
        return e.kind === 'retry_exhausted' && e.attempts === 2 && e.last_error.kind === 'retryable_provider_error';
      },
    );
  });
});
