// test/integration/busy-policies.test.ts: busy_policy on continue (Warren extension) through the real
// server: reject stays SPEC.md's 409; enqueue runs follow-ups in order, each request answered with its own
// turn, 503 when the queue is full, 202 + GET /requests/{id} with respond-async; steer is injected before
// the running turn's next model call (or runs as the next turn when there is none); interrupt leaves the
// queue running; archive drops it; and the queue survives kill -9.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { deferred, gatedAt } from '../helpers/gates.ts';
import { openEvents } from '../helpers/sse-client.ts';
import { queuedIs as queued, terminal, untilStatus as until } from '../helpers/follow-ups.ts';
import { within } from '../helpers/wait.ts';

const ASYNC = { prefer: 'respond-async' };

const lastUser = (req: { messages: ProviderRequest['messages'] }) => {
  const m = [...req.messages].reverse().find((x) => x.role === 'user');
  return m && m.role === 'user' ? plainText(m.content) : '';
};

const VARIANTS = [
  ['node', 'lmdb'],
  ['uws', 'lmdb'],
  ['node', 'memory'],
  ['node', 'jsonl'],
] as const;
for (const [transport, realmBackend] of VARIANTS) {
  describe(`busy policies over ${transport} (${realmBackend})`, () => {
    it('reject is the default 409; three enqueued continues run in order, each answered with its own turn', async (t) => {
      const gate = gatedAt(1, 'first done');
      const app = await startApp(t, gate.script, { httpTransport: transport, realmBackend });
      const sid = await createSession(app.url);
      const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
      await gate.entered.promise;
      const busy = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'x' });
      assert.equal(busy.status, 409);
      assert.equal(busy.body.code, 'SESSION_BUSY');
      const rejected = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'x', busy_policy: 'reject' });
      assert.equal(rejected.status, 409);
      const replies = [];
      for (const [i, p] of ['b', 'c', 'd'].entries()) {
        replies.push(call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: p, busy_policy: 'enqueue' }));
        await until(app.url, sid, queued(i + 1));
      }
      // While follow-ups wait, a fresh continue is still refused.
      assert.equal((await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'y' })).status, 409);
      gate.open.resolve();
      assert.equal((await first).body.text, 'first done');
      const bodies = await Promise.all(replies);
      assert.deepEqual(
        bodies.map((r) => r.status),
        [200, 200, 200],
      );
      assert.deepEqual(
        bodies.map((r) => r.body.text),
        ['echo: b', 'echo: c', 'echo: d'],
      );
      assert.deepEqual(app.provider.requests.slice(2).map(lastUser), ['b', 'c', 'd']);
      await until(app.url, sid, (b) => b.state === 'idle' && !b.follow_ups);
      const next = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'e' });
      assert.equal(next.body.text, 'echo: e');
    });

    it('enqueue with Prefer: respond-async answers 202 at once; GET /requests/{id} goes queued → completed', async (t) => {
      const gate = gatedAt(1);
      const app = await startApp(t, gate.script, { httpTransport: transport, realmBackend });
      const sid = await createSession(app.url);
      const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
      await gate.entered.promise;
      const res = await call(
        app.url,
        'POST',
        `/sessions/${sid}/messages`,
        { session_id: sid, prompt: 'later', busy_policy: 'enqueue' },
        { ...ASYNC, 'x-warren-request-id': 'q-1' },
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.status_url, '/requests/q-1');
      assert.equal((await call(app.url, 'GET', '/requests/q-1')).body.status, 'queued');
      // Its events_url works while it waits: the stream starts at the live tail and carries its turn.
      const events = await openEvents(app.url, sid, {}, '?request_id=q-1');
      t.after(() => events.close());
      gate.open.resolve();
      await first;
      await events.until((c) => c.frames.filter((f) => f.event === 'run_completed').length === 2, 'both turns');
      const started = events.envelopes().filter((e) => e.payload.type === 'run_started');
      assert.deepEqual(
        started.map((e) => (e.payload as unknown as { input: { content: string } }).input.content),
        ['later'],
      );
      const done = await terminal(app.url, 'q-1');
      assert.equal(done.status, 'completed');
      assert.equal(done.response.text, 'echo: later');
      assert.equal(done.response.session_id, sid);
    });
  });
}

describe('busy policies', () => {
  it('answers 503 in the error envelope when the queue is full', async (t) => {
    const gate = gatedAt(1);
    const app = await startApp(t, gate.script, { config: { extensions: { max_queued_turns: 1 } } });
    const sid = await createSession(app.url);
    const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
    await gate.entered.promise;
    const one = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'b', busy_policy: 'enqueue' }, ASYNC);
    assert.equal(one.status, 202);
    const full = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'c', busy_policy: 'enqueue' }, ASYNC);
    assert.equal(full.status, 503);
    assert.equal(full.body.code, 'SERVICE_UNAVAILABLE');
    assert.equal(full.body.details.reason, 'queue_full');
    assert.equal(typeof full.body.error, 'string');
    gate.open.resolve();
    await first;
    assert.equal((await terminal(app.url, one.body.request_id)).status, 'completed');
  });

  it("steer is injected as a user message before the running turn's next model call and answered with that turn", async (t) => {
    const toolGate = deferred();
    const entered = deferred();
    const script = (req: ProviderRequest, i: number): ScriptedReply => {
      if (i === 1) {
        entered.resolve();
        return { tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }], waitFor: toolGate.promise };
      }
      if (i === 2) return { text: 'steered final' };
      return echoReply(req);
    };
    const app = await startApp(t, script);
    const sid = await createSession(app.url, { prompt: 'hi', enable_builtins: true });
    const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'what time is it' });
    await entered.promise;
    const steer = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'answer in French', busy_policy: 'steer' });
    await until(app.url, sid, (b) => b.follow_ups?.steering === 1);
    toolGate.resolve();
    const [a, s] = await Promise.all([first, steer]);
    assert.equal(a.body.text, 'steered final');
    assert.equal(s.status, 200, JSON.stringify(s.body));
    assert.deepEqual(s.body, a.body);
    const second = app.provider.requests[2];
    assert.equal(second.messages.at(-1)?.role, 'user');
    assert.equal(lastUser(second), 'answer in French');
    assert.equal(second.messages.at(-2)?.role, 'tool_results');
    assert.equal(app.provider.requests.length, 3);
    const history = await call(app.url, 'GET', `/sessions/${sid}/history`);
    assert.ok(history.body.messages.some((m: { role: string; content: unknown }) => m.role === 'user' && m.content === 'answer in French'));
    await until(app.url, sid, (b) => b.state === 'idle' && !b.follow_ups);
  });

  it('steer runs as the next turn when the running turn ends before another model call', async (t) => {
    const gate = gatedAt(1, 'no tools here');
    const app = await startApp(t, gate.script);
    const sid = await createSession(app.url);
    const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
    await gate.entered.promise;
    const steer = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'steer me', busy_policy: 'steer' });
    await until(app.url, sid, (b) => b.follow_ups?.steering === 1);
    gate.open.resolve();
    assert.equal((await first).body.text, 'no tools here');
    const s = await steer;
    assert.equal(s.status, 200);
    assert.equal(s.body.text, 'echo: steer me');
    assert.deepEqual(app.provider.requests.map(lastUser), ['hi', 'a', 'steer me']);
  });

  it('interrupt cancels only the running turn (the queue goes on); archive drops the queue', async (t) => {
    const gate = gatedAt(1);
    const app = await startApp(t, (req, i) => (i === 3 ? { text: 'held', waitFor: new Promise(() => {}) } : gate.script(req, i)));
    const sid = await createSession(app.url);
    const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
    await gate.entered.promise;
    const b = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'b', busy_policy: 'enqueue' });
    await until(app.url, sid, queued(1));
    assert.equal((await call(app.url, 'POST', `/sessions/${sid}/interrupt`)).status, 200);
    assert.equal((await within('the interrupted turn to answer', first, 5_000)).body.code, 'REQUEST_CANCELLED');
    assert.equal((await b).body.text, 'echo: b');
    // Call 3 never answers: queue two follow-ups behind it, then archive.
    const c = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'c' });
    await until(app.url, sid, (s) => s.state === 'running' && s.phase === 'calling_model');
    const d = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'd', busy_policy: 'enqueue' }, ASYNC);
    const e = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'e', busy_policy: 'enqueue' });
    await until(app.url, sid, queued(2));
    assert.equal((await call(app.url, 'DELETE', `/sessions/${sid}`)).status, 200);
    assert.equal((await c).body.code, 'REQUEST_CANCELLED');
    const dropped = await e;
    assert.equal(dropped.body.code, 'REQUEST_CANCELLED');
    assert.equal(dropped.body.details.reason, 'session_archived');
    const dr = await terminal(app.url, d.body.request_id);
    assert.equal(dr.status, 'cancelled');
    assert.equal(app.provider.requests.length, 4);
  });

  it('cancel removes a waiting follow-up from the queue; steer with respond-async reports the running turn', async (t) => {
    const toolGate = deferred();
    const entered = deferred();
    const script = (req: ProviderRequest, i: number): ScriptedReply => {
      if (i === 1) {
        entered.resolve();
        return { tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }], waitFor: toolGate.promise };
      }
      return echoReply(req);
    };
    const app = await startApp(t, script);
    const sid = await createSession(app.url, { prompt: 'hi', enable_builtins: true });
    const first = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'a' });
    await entered.promise;
    const waiting = call(
      app.url,
      'POST',
      `/sessions/${sid}/messages`,
      { session_id: sid, prompt: 'never', busy_policy: 'enqueue' },
      { 'x-warren-request-id': 'w-1' },
    );
    await until(app.url, sid, queued(1));
    assert.deepEqual((await call(app.url, 'POST', '/requests/w-1/cancel')).body, { request_id: 'w-1', cancelled: true });
    const cancelled = await waiting;
    assert.equal(cancelled.status, 499);
    assert.equal(cancelled.body.code, 'REQUEST_CANCELLED');
    await until(app.url, sid, (b) => !b.follow_ups);
    const steer = await call(
      app.url,
      'POST',
      `/sessions/${sid}/messages`,
      { session_id: sid, prompt: 'steer async', busy_policy: 'steer' },
      ASYNC,
    );
    assert.equal(steer.status, 202);
    assert.equal((await call(app.url, 'GET', steer.body.status_url)).body.status, 'queued');
    toolGate.resolve();
    const a = await first;
    assert.equal(a.body.text, 'echo: steer async');
    const done = await terminal(app.url, steer.body.request_id);
    assert.equal(done.status, 'completed');
    assert.deepEqual(done.response, a.body);
    assert.equal(app.provider.requests.length, 3);
    assert.ok(!app.provider.requests.some((r) => lastUser(r) === 'never'));
  });

  it('validates busy_policy (400 envelope), create accepts and ignores it, and discovery declares it', async (t) => {
    const app = await startApp(t);
    const sid = await createSession(app.url, { prompt: 'hi', busy_policy: 'enqueue' });
    const bad = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'x', busy_policy: 'later' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
    const badCreate = await call(app.url, 'POST', '/sessions', { prompt: 'x', busy_policy: 7 });
    assert.equal(badCreate.status, 400);
    // An idle session runs an enqueued continue at once.
    const now = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'now', busy_policy: 'enqueue' });
    assert.equal(now.body.text, 'echo: now');
    const ext = await call(app.url, 'GET', '/warren/extensions');
    const busy = ext.body.extensions.find((e: { name: string }) => e.name === 'busy_policies');
    assert.deepEqual(busy.config_keys, ['extensions.max_queued_turns']);
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.ok(!JSON.stringify(caps.body).includes('busy'));
    const spec = JSON.stringify((await call(app.url, 'GET', '/openapi.json')).body);
    assert.ok(spec.includes('busy_policy') && spec.includes('steer'));
    // The viewer draws the session machine from its definition: the draining state is there.
    const graph = await call(app.url, 'GET', '/inspect/machines/session');
    assert.equal(graph.status, 200, JSON.stringify(graph.body));
    assert.ok(graph.body.states.some((st: { key: string }) => st.key === 'draining'));
  });
});
