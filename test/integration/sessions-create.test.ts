// POST /sessions through the real server: the turn response shape, the request-id header, keep_alive,
// model/provider inference, the system prompt tri-state, injected and transient context, and first-turn
// failures (SESSION_CREATED_WITH_TURN_FAILURE, then continuable; PROVIDER_ERROR on continue).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

// Session ids are UUIDv7 (time-ordered: version 7, RFC 9562 variant).
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
/** The Unix ms a UUIDv7 carries in its first 48 bits. */
const v7Ms = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

for (const httpTransport of ['auto', 'node'] as const) {
  describe(`POST /sessions (${httpTransport} transport)`, () => {
    it('answers the turn response shape with optional members omitted, never null', async (t) => {
      const app = await startApp(t, [{ text: 'hello there', usage: { input_tokens: 11, output_tokens: 4 } }], { httpTransport });
      if (httpTransport === 'node') assert.equal(app.transport, 'node');
      const before = Date.now();
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body).sort(), ['session_id', 'session_ref', 'text', 'tool_calls', 'turns', 'usage']);
      assert.match(res.body.session_id, UUID);
      const ms = v7Ms(res.body.session_id);
      assert.ok(ms >= before && ms <= Date.now(), `the id's time ${ms} is the creation time`);
      assert.equal(res.body.session_ref, `test-realm:${res.body.session_id}`);
      assert.equal(res.body.text, 'hello there');
      assert.equal(res.body.turns, 1);
      assert.equal(res.body.tool_calls, 0);
      assert.deepEqual(res.body.usage, { input_tokens: 11, output_tokens: 4, total_tokens: 15 });
    });

    it('accepts an optional X-Warren-Request-Id and rejects a duplicate in flight with 409', async (t) => {
      const gate = deferred();
      const entered = deferred();
      const replies = [{ text: 'first', waitFor: gate.promise }, { text: 'second' }];
      const app = await startApp(t, (_req, i) => (i === 0 && entered.resolve(), replies[i]), { httpTransport });
      const first = call(app.url, 'POST', '/sessions', { prompt: 'a' }, { 'x-warren-request-id': 'req-1' });
      await entered.promise;
      const dup = await call(app.url, 'POST', '/sessions', { prompt: 'b' }, { 'x-warren-request-id': 'req-1' });
      assert.equal(dup.status, 409);
      assert.equal(dup.body.code, 'DUPLICATE_REQUEST_ID');
      gate.resolve();
      assert.equal((await first).status, 200);
      // Once finished, the id may be reused.
      const again = await call(app.url, 'POST', '/sessions', { prompt: 'c' }, { 'x-warren-request-id': 'req-1' });
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(again.body.text, 'second');
    });
  });
}

describe('POST /sessions validation', () => {
  it('rejects an empty X-Warren-Request-Id with 400', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'a' }, { 'x-warren-request-id': '' });
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.code, 'BAD_REQUEST');
    assert.equal(app.provider.requests.length, 0);
  });

  it('rejects keep_alive:true without comms_name with 400', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'a', keep_alive: true });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    const list = await call(app.url, 'GET', '/sessions');
    assert.deepEqual(list.body.sessions, [], 'a rejected create leaves no session behind');
  });

  it('infers the provider from the model and rejects unknown providers and uncatalogued models', async (t) => {
    const app = await startApp(t);
    const inferred = await call(app.url, 'POST', '/sessions', { prompt: 'a', model: 'claude-test-1' });
    assert.equal(inferred.status, 200, JSON.stringify(inferred.body));
    assert.equal(app.provider.requests[0].model, 'claude-test-1');
    const byDefault = await call(app.url, 'POST', '/sessions', { prompt: 'a' });
    assert.equal(byDefault.status, 200);
    assert.equal(typeof app.provider.requests[1].model, 'string');
    assert.notEqual(app.provider.requests[1].model, '');

    const unknownProvider = await call(app.url, 'POST', '/sessions', { prompt: 'a', provider: 'vendor_z' });
    assert.equal(unknownProvider.status, 400);
    assert.equal(unknownProvider.body.code, 'BAD_REQUEST');
    const uncatalogued = await call(app.url, 'POST', '/sessions', { prompt: 'a', model: 'my-local-llm' });
    assert.equal(uncatalogued.status, 400);
    assert.equal(uncatalogued.body.code, 'BAD_REQUEST');
    assert.equal(app.provider.requests.length, 2, 'rejected creates never reach the provider');
    assert.equal((await call(app.url, 'GET', '/sessions')).body.sessions.length, 2);
  });
});

describe('POST /sessions system prompt and context', () => {
  it('inherits the configured prompt, takes an explicit one, and disables every source', async (t) => {
    const app = await startApp(t);
    const patched = await call(app.url, 'PATCH', '/config', { agent: { system_prompt: 'CONFIGURED' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));

    const inherit = await call(app.url, 'POST', '/sessions', { prompt: 'a' });
    const explicit = await call(app.url, 'POST', '/sessions', { prompt: 'b', system_prompt: 'EXPLICIT' });
    const disabled = await call(app.url, 'POST', '/sessions', { prompt: 'c', system_prompt: { action: 'disable' } });
    for (const r of [inherit, explicit, disabled]) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(
      app.provider.requests.map((r) => r.system),
      ['CONFIGURED', 'EXPLICIT', undefined],
    );

    const rows = async (id: string) => (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages;
    const [h1, h2, h3] = [await rows(inherit.body.session_id), await rows(explicit.body.session_id), await rows(disabled.body.session_id)];
    assert.deepEqual(
      h1.map((m: { role: string }) => m.role),
      ['system', 'user', 'block_assistant'],
    );
    assert.equal(h1[0].content, 'CONFIGURED');
    assert.equal(h2[0].content, 'EXPLICIT');
    assert.deepEqual(
      h3.map((m: { role: string }) => m.role),
      ['user', 'block_assistant'],
    );

    // A disabled session stays disabled on later turns; the others keep their prompt.
    await call(app.url, 'POST', `/sessions/${disabled.body.session_id}/messages`, { session_id: disabled.body.session_id, prompt: 'd' });
    assert.equal(app.provider.requests[3].system, undefined);
  });

  it('places injected_context rows right before the user row; transient context reaches only the provider', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', {
      prompt: 'the question',
      injected_context: ['ctx one', [{ type: 'text', text: 'ctx two' }]],
      transient_turn_context: '  facts  ',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const sent = app.provider.requests[0].messages;
    assert.deepEqual(
      sent.map((m) => ('content' in m ? m.content : m.role)),
      ['ctx one', [{ type: 'text', text: 'ctx two' }], '  facts  ', 'the question'],
    );
    const hist = await call(app.url, 'GET', `/sessions/${res.body.session_id}/history`);
    const msgs = hist.body.messages;
    assert.equal(hist.body.message_count, 4);
    assert.deepEqual(
      msgs.map((m: { role: string; transcript_role?: string }) => [m.role, m.transcript_role]),
      [
        ['user', 'injected_context'],
        ['user', 'injected_context'],
        ['user', 'conversational'],
        ['block_assistant', undefined],
      ],
    );
    assert.equal(msgs[2].content, 'the question');
    assert.ok(!JSON.stringify(msgs).includes('facts'), 'transient context never enters history');

    const id = res.body.session_id;
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'next' });
    assert.ok(!JSON.stringify(app.provider.requests[1].messages).includes('facts'), 'transient context is turn-local');
  });

  it('rejects an empty transient_turn_context with 400', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'a', transient_turn_context: '' });
    assert.equal(res.status, 400);
  });
});

describe('POST /sessions first-turn failure', () => {
  it('answers 500 SESSION_CREATED_WITH_TURN_FAILURE with resumable identity; the session continues', async (t) => {
    const app = await startApp(t, [
      { error: { code: 'AGENT_ERROR', message: 'gave up', details: { error: { kind: 'retry_exhausted', terminal: true } } } },
      { text: 'recovered' },
    ]);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'first' });
    assert.equal(res.status, 500);
    assert.equal(res.body.code, 'SESSION_CREATED_WITH_TURN_FAILURE');
    const d = res.body.details;
    assert.match(d.session_id, UUID);
    assert.equal(d.session_ref, `test-realm:${d.session_id}`);
    assert.equal(d.session_created, true);
    assert.equal(d.resumable, true);
    assert.equal(d.error.kind, 'retry_exhausted');

    const detail = await call(app.url, 'GET', `/sessions/${d.session_id}`);
    assert.equal(detail.status, 200);
    assert.equal(detail.body.message_count, 0, 'nothing of the failed turn is committed');
    const cont = await call(app.url, 'POST', `/sessions/${d.session_id}/messages`, { session_id: d.session_id, prompt: 'second' });
    assert.equal(cont.status, 200, JSON.stringify(cont.body));
    assert.equal(cont.body.text, 'recovered');
    const hist = await call(app.url, 'GET', `/sessions/${d.session_id}/history`);
    assert.deepEqual(
      hist.body.messages.map((m: { content?: unknown }) => m.content ?? null),
      ['second', null],
    );
  });

  it('answers 502 PROVIDER_ERROR naming the key variable when the provider key is missing (continue and create)', async (t) => {
    const openai = createScriptedProvider([]);
    const app = await startApp(t, [], { env: {}, providerOverrides: { openai } });
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'a', model: 'gpt-test' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id;
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'b', model: 'claude-test-1' });
    assert.equal(res.status, 502, JSON.stringify(res.body));
    assert.equal(res.body.code, 'PROVIDER_ERROR');
    assert.equal(res.body.details.error.kind, 'llm_failure');

    // On create the missing key is known before anything is created: 502 naming the variable, no session.
    const before = await call(app.url, 'GET', '/sessions');
    const bad = await call(app.url, 'POST', '/sessions', { prompt: 'a', model: 'claude-test-1' });
    assert.equal(bad.status, 502, JSON.stringify(bad.body));
    assert.equal(bad.body.code, 'PROVIDER_ERROR');
    assert.match(bad.body.error, /ANTHROPIC_API_KEY/);
    const after = await call(app.url, 'GET', '/sessions');
    assert.equal(after.body.sessions.length, before.body.sessions.length);
  });
});
