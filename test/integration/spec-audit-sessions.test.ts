// Clause-by-clause audit of the session and turn routes against the interface spec: each test covers a
// clause the other session tests leave open, and fails on the behaviour it replaced.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { call, createSession, startApp } from '../helpers/app.ts';
import { openEvents, type Envelope } from '../helpers/sse-client.ts';
import { deferred } from '../helpers/gates.ts';
import { echoReply } from '../../providers/scripted.ts';

describe('POST /sessions/{id}/messages: body session_id must equal the path id', () => {
  it('accepts the same locator in the body as in the path (realm-qualified, any case); refuses another id', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const ref = `test-realm:${id}`;
    // session_ref (what create answered) used as the locator in both places.
    const qualified = await call(app.url, 'POST', `/sessions/${ref}/messages`, { session_id: ref, prompt: 'a' });
    assert.equal(qualified.status, 200, JSON.stringify(qualified.body));
    assert.equal(qualified.body.session_id, id);
    const upper = id.toUpperCase();
    const cased = await call(app.url, 'POST', `/sessions/${upper}/messages`, { session_id: upper, prompt: 'b' });
    assert.equal(cased.status, 200, JSON.stringify(cased.body));
    const mixed = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: ref, prompt: 'c' });
    assert.equal(mixed.status, 200, JSON.stringify(mixed.body));
    // Another realm's locator of the same uuid, or another uuid, is still a mismatch.
    for (const other of [`other-realm:${id}`, '00000000-0000-4000-8000-000000000000', '']) {
      const res = await call(app.url, 'POST', `/sessions/${ref}/messages`, { session_id: other, prompt: 'x' });
      assert.equal(res.status, 400, other);
      assert.equal(res.body.code, 'BAD_REQUEST');
    }
    assert.equal(app.provider.requests.length, 4);
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 8);
  });
});

describe('verbose (create and continue)', () => {
  it('logs each event of a verbose turn server-side at info; a turn without verbose logs none', async (t) => {
    const lines: Array<{ msg: string; event?: string; sessionId?: string; level: number }> = [];
    const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
    const app = await startApp(t, [{ text: 'one' }, { text: 'two' }, { text: 'three' }], { logger });
    const verboseEvents = (sid: string) =>
      lines.filter((l) => l.msg === 'session event (verbose)' && l.sessionId === sid).map((l) => l.event);
    const quiet = await createSession(app.url, { prompt: 'a' });
    assert.deepEqual(verboseEvents(quiet), []);
    const loud = await createSession(app.url, { prompt: 'b', verbose: true });
    const kinds = ['run_started', 'turn_started', 'text_delta', 'text_complete', 'turn_completed', 'run_completed'];
    assert.deepEqual(verboseEvents(loud), kinds);
    assert.ok(
      lines.every((l) => l.msg !== 'session event (verbose)' || l.level === 30),
      'logged at info',
    );
    // Verbose is per request: a later continue without it adds nothing, one with it logs its turn.
    const plain = await call(app.url, 'POST', `/sessions/${loud}/messages`, { session_id: loud, prompt: 'c' });
    assert.equal(plain.status, 200);
    assert.deepEqual(verboseEvents(loud), kinds);
    const again = await call(app.url, 'POST', `/sessions/${quiet}/messages`, { session_id: quiet, prompt: 'd', verbose: true });
    assert.equal(again.status, 200);
    assert.deepEqual(verboseEvents(quiet), kinds);
  });
});

describe('transient_turn_context', () => {
  it("reaches the turn's model call but never the structured-output extraction request", async (t) => {
    const app = await startApp(t, [{ text: 'The answer is 42.' }, { text: '{"answer": 42}' }]);
    const schema = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
    const res = await call(app.url, 'POST', '/sessions', {
      prompt: 'what is it?',
      output_schema: schema,
      transient_turn_context: 'SECRET-FACTS',
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.structured_output, { answer: 42 });
    const [main, extraction] = app.provider.requests;
    assert.ok(JSON.stringify(main.messages).includes('SECRET-FACTS'));
    assert.ok(!JSON.stringify(extraction.messages).includes('SECRET-FACTS'), 'never in an extraction request');
    assert.ok(!JSON.stringify(extraction.system ?? '').includes('SECRET-FACTS'));
  });
});

describe('session event envelope', () => {
  it("event_id is a UUIDv7 of the event's timestamp, the same live, replayed and in the ledger", async (t) => {
    const app = await startApp(t, [{ text: 'one' }, { chunks: ['t', 'wo'] }]);
    const id = await createSession(app.url, { prompt: 'a' });
    const live = await openEvents(app.url, id);
    t.after(() => live.close());
    const turn = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'b' });
    assert.equal(turn.status, 200);
    await live.untilEvent('run_completed');
    const replay = await openEvents(app.url, id, { 'Last-Event-ID': '0' });
    t.after(() => replay.close());
    const ledger = (await call(app.url, 'GET', `/sessions/${id}/ledger`)).body.events as Envelope[];
    await replay.until((c) => c.envelopes().length === ledger.length, 'the whole ledger replayed');
    const v7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
    const ids = new Set<string>();
    for (const env of ledger) {
      assert.match(env.event_id, v7);
      assert.equal(Number.parseInt(env.event_id.replace(/-/g, '').slice(0, 12), 16), env.timestamp_ms, 'unix-ms timestamp prefix');
      ids.add(env.event_id);
    }
    assert.equal(ids.size, ledger.length, 'unique per event');
    const byLedger = new Map(ledger.map((e) => [e.seq, e.event_id]));
    // The ledger drops a committed turn's text deltas; every other live event is in it.
    const liveKept = live.envelopes().filter((e) => e.payload.type !== 'text_delta');
    assert.ok(liveKept.length > 0);
    for (const env of [...liveKept, ...replay.envelopes()]) assert.equal(env.event_id, byLedger.get(env.seq), `seq ${env.seq}`);
    for (const env of live.envelopes()) assert.match(env.event_id, v7);
  });
});

describe('system context and system prompt keys', () => {
  it('treats keys named like Object.prototype members (constructor, toString) as ordinary keys', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const ctx = (key: string, text: string) =>
      call(app.url, 'POST', `/sessions/${id}/system_context`, { content: { type: 'text', text }, source: 'audit', idempotency_key: key });
    for (const key of ['constructor', 'hasOwnProperty']) {
      const first = await ctx(key, 'fact');
      assert.equal(first.status, 200, `${key}: ${JSON.stringify(first.body)}`);
      assert.deepEqual(first.body, { session_id: id, status: 'applied' });
      assert.equal((await ctx(key, 'fact')).body.status, 'duplicate');
      assert.equal((await ctx(key, 'other fact')).status, 409);
    }
    const prompt = (body: Record<string, unknown>) =>
      call(app.url, 'POST', `/sessions/${id}/system_prompt`, { content: 'be brief', ...body });
    const adopted = await prompt({ key: 'toString' });
    assert.equal(adopted.status, 200, JSON.stringify(adopted.body));
    assert.deepEqual([adopted.body.version, adopted.body.status], [1, 'applied']);
    const updated = await prompt({ key: 'toString', content: 'be thorough', expected_version: 1 });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.deepEqual([updated.body.version, updated.body.status, updated.body.message_index], [2, 'applied', adopted.body.message_index]);
    const history = (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages;
    assert.equal(history[adopted.body.message_index].content, 'be thorough');
    assert.equal(({} as Record<string, unknown>).message_index, undefined, 'Object.prototype untouched');
  });
});

describe('POST /requests/{id}/cancel on a create', () => {
  it('cancels an uncommitted first turn: {cancelled: true}, the create answers 499 with a resumable identity', async (t) => {
    const entered = deferred();
    const app = await startApp(t, (req, i) => {
      if (i !== 0) return echoReply(req);
      entered.resolve();
      return { text: 'never sent', waitFor: new Promise<void>(() => {}) };
    });
    const create = call(app.url, 'POST', '/sessions', { prompt: 'first' }, { 'x-warren-request-id': 'create-1' });
    await entered.promise;
    const cancel = await call(app.url, 'POST', '/requests/create-1/cancel');
    assert.equal(cancel.status, 200);
    assert.equal(cancel.body.cancelled, true);
    assert.ok(!('reason' in cancel.body));
    const ended = await create;
    assert.equal(ended.status, 499, JSON.stringify(ended.body));
    assert.equal(ended.body.code, 'REQUEST_CANCELLED');
    const id = ended.body.details.session_id;
    assert.equal(ended.body.details.resumable, true);
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 0, 'nothing of the cancelled turn committed');
    const late = await call(app.url, 'POST', '/requests/create-1/cancel');
    assert.deepEqual([late.status, late.body.cancelled, late.body.reason], [200, false, 'already_terminal']);
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    assert.equal(next.body.text, 'echo: again');
  });
});
