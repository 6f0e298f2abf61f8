import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../contracts/errors.ts';
import { createScriptedProvider, scriptedFromConfig } from '../../providers/scripted.ts';
import type { StreamEvent } from '../../providers/provider.ts';
import { baseRequest } from './adapter-suite.ts';
import { deferred } from './fake-vendor.ts';

const userReq = (content: string | Array<{ type: 'text'; text: string }>) =>
  baseRequest({ messages: [{ role: 'user', content, created_at: '2026-01-01T00:00:00Z' }] });

describe('scripted provider', () => {
  it('plays replies in order, streaming chunks as text deltas', async () => {
    const p = createScriptedProvider([
      { chunks: ['Hel', 'lo'], usage: { input_tokens: 3, output_tokens: 2 } },
      {
        tool_calls: [
          { name: 'shell', args: { command: 'ls' } },
          { name: 'datetime', args: {}, id: 'fixed' },
        ],
      },
    ]);
    const events: StreamEvent[] = [];
    const first = await p.call(baseRequest(), (e) => events.push(e));
    assert.deepEqual(events, [
      { type: 'text_delta', delta: 'Hel' },
      { type: 'text_delta', delta: 'lo' },
    ]);
    assert.deepEqual(first, {
      blocks: [{ block_type: 'text', data: { text: 'Hello' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 3, output_tokens: 2 },
    });
    const second = await p.call(baseRequest(), () => {});
    assert.equal(second.stop_reason, 'tool_use');
    assert.deepEqual(second.blocks, [
      { block_type: 'tool_use', data: { id: 'scripted_call_1', name: 'shell', args: { command: 'ls' } } },
      { block_type: 'tool_use', data: { id: 'fixed', name: 'datetime', args: {} } },
    ]);
    assert.equal(p.requests.length, 2);
    assert.equal(p.name, 'scripted');
  });

  it('echoes the last user text once the script is exhausted', async () => {
    const p = createScriptedProvider([]);
    assert.deepEqual((await p.call(userReq('ping'), () => {})).blocks, [{ block_type: 'text', data: { text: 'echo: ping' } }]);
    assert.deepEqual(
      (
        await p.call(
          userReq([
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ]),
          () => {},
        )
      ).blocks,
      [{ block_type: 'text', data: { text: 'echo: ab' } }],
    );
  });

  it('asks a script function for each reply with the request and call index', async () => {
    const p = createScriptedProvider((req, i) => ({ text: `${i}:${req.model}` }));
    assert.deepEqual((await p.call(baseRequest(), () => {})).blocks, [{ block_type: 'text', data: { text: '0:test-model' } }]);
    assert.deepEqual((await p.call(baseRequest(), () => {})).blocks, [{ block_type: 'text', data: { text: '1:test-model' } }]);
  });

  it('holds a reply until its waitFor gate opens', async () => {
    const gate = deferred();
    const p = createScriptedProvider([{ text: 'late', waitFor: gate.promise }]);
    const events: StreamEvent[] = [];
    const call = p.call(baseRequest(), (e) => events.push(e));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(events, []);
    gate.resolve();
    assert.deepEqual((await call).blocks, [{ block_type: 'text', data: { text: 'late' } }]);
  });

  it('rejects with REQUEST_CANCELLED when aborted while waiting or between chunks', async () => {
    const waiting = new AbortController();
    const p = createScriptedProvider([{ text: 'x', waitFor: new Promise(() => {}) }, { chunks: ['a', 'b', 'c'] }]);
    const pending = p.call(baseRequest({ signal: waiting.signal }), () => {});
    waiting.abort();
    await assert.rejects(pending, (e) => e instanceof ServiceError && e.code === 'REQUEST_CANCELLED');

    const mid = new AbortController();
    const events: StreamEvent[] = [];
    await assert.rejects(
      p.call(baseRequest({ signal: mid.signal }), (e) => {
        events.push(e);
        mid.abort();
      }),
      (e) => e instanceof ServiceError && e.code === 'REQUEST_CANCELLED',
    );
    assert.deepEqual(events, [{ type: 'text_delta', delta: 'a' }]);

    const delayed = new AbortController();
    const slow = createScriptedProvider([{ text: 'x', delay_ms: 600_000 }]);
    const call = slow.call(baseRequest({ signal: delayed.signal }), () => {});
    delayed.abort();
    await assert.rejects(call, (e) => e instanceof ServiceError && e.code === 'REQUEST_CANCELLED');
  });

  it('fails with the scripted error', async () => {
    const p = createScriptedProvider([{ error: { code: 'PROVIDER_ERROR', message: 'OPENAI_API_KEY is not set' } }]);
    await assert.rejects(
      p.call(baseRequest(), () => {}),
      (e) => {
        assert.ok(e instanceof ServiceError);
        assert.equal(e.code, 'PROVIDER_ERROR');
        assert.equal((e.details as { error: { kind: string } }).error.kind, 'llm_failure');
        return true;
      },
    );
  });
});

describe('scriptedFromConfig', () => {
  it('plays configured replies, then echoes', async () => {
    const p = scriptedFromConfig({ replies: [{ text: 'hi' }] });
    assert.deepEqual((await p.call(userReq('x'), () => {})).blocks, [{ block_type: 'text', data: { text: 'hi' } }]);
    assert.deepEqual((await p.call(userReq('x'), () => {})).blocks, [{ block_type: 'text', data: { text: 'echo: x' } }]);
  });

  it('echoes in echo mode and with no section at all', async () => {
    for (const cfg of [{ mode: 'echo', replies: [{ text: 'ignored' }] }, undefined]) {
      const p = scriptedFromConfig(cfg);
      assert.deepEqual((await p.call(userReq('y'), () => {})).blocks, [{ block_type: 'text', data: { text: 'echo: y' } }]);
    }
  });

  it('rejects an invalid section with BAD_REQUEST', () => {
    assert.throws(
      () => scriptedFromConfig({ replies: [{ text: 5 }] }),
      (e) => e instanceof ServiceError && e.code === 'BAD_REQUEST' && /replies\/0\/text/.test(e.message),
    );
  });
});
