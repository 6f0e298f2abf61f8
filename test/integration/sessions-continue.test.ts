// POST /sessions/{id}/messages through the real server: path/body checks, unknown and archived
// sessions, model/max_tokens hot-swap (persisted across eviction), the appended System row, and the
// machine's busy decision under concurrent continues.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { deferred, gatedAt } from '../helpers/gates.ts';

describe('POST /sessions/{id}/messages', () => {
  it('rejects a body session_id that differs from the path with 400, before anything stateful', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const other = '00000000-0000-4000-8000-000000000000';
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: other, prompt: 'x' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    const unknownMismatch = await call(app.url, 'POST', `/sessions/${other}/messages`, { session_id: id, prompt: 'x' });
    assert.equal(unknownMismatch.status, 400);
    assert.equal(app.provider.requests.length, 1);
  });

  it('answers 404 SESSION_NOT_FOUND for unknown and archived sessions, 400 for a malformed id', async (t) => {
    const app = await startApp(t);
    const unknown = '00000000-0000-4000-8000-000000000001';
    const res = await call(app.url, 'POST', `/sessions/${unknown}/messages`, { session_id: unknown, prompt: 'x' });
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'SESSION_NOT_FOUND');
    const id = await createSession(app.url);
    assert.equal((await call(app.url, 'DELETE', `/sessions/${id}`)).status, 200);
    const archived = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x' });
    assert.equal(archived.status, 404);
    assert.equal(archived.body.code, 'SESSION_NOT_FOUND');
    const bad = await call(app.url, 'POST', '/sessions/not-a-uuid/messages', { session_id: 'not-a-uuid', prompt: 'x' });
    assert.equal(bad.status, 400);
    // The realm-qualified locator is accepted.
    const live = await createSession(app.url);
    const qualified = await call(app.url, 'POST', `/sessions/test-realm:${live}/messages`, { session_id: live, prompt: 'x' });
    assert.equal(qualified.status, 200, JSON.stringify(qualified.body));
  });

  it('hot-swaps model and max_tokens for later turns, also after the actor is evicted', async (t) => {
    const app = await startApp(t, [], { maxResidentSessions: 1 });
    const id = await createSession(app.url, { prompt: 'a', model: 'gpt-test', max_tokens: 100 });
    const swap = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'b',
      model: 'claude-test-2',
      max_tokens: 77,
    });
    assert.equal(swap.status, 200, JSON.stringify(swap.body));
    await createSession(app.url); // evicts the first session's actor (one resident at most)
    const later = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'c' });
    assert.equal(later.status, 200, JSON.stringify(later.body));
    const mine = app.provider.requests.filter((_, i) => i !== 2);
    assert.deepEqual(
      mine.map((r) => [r.model, r.max_tokens]),
      [
        ['gpt-test', 100],
        ['claude-test-2', 77],
        ['claude-test-2', 77],
      ],
    );
  });

  it('appends one System row at the turn boundary for system_prompt on continue', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url, { prompt: 'a', system_prompt: 'BASE' });
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'b', system_prompt: 'EXTRA' });
    assert.equal(res.status, 200);
    const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.deepEqual(
      hist.messages.map((m: { role: string; content?: unknown }) => [m.role, m.content ?? null]),
      [
        ['system', 'BASE'],
        ['user', 'a'],
        ['block_assistant', null],
        ['system', 'EXTRA'],
        ['user', 'b'],
        ['block_assistant', null],
      ],
    );
    assert.equal(app.provider.requests[1].system, 'BASE\n\nEXTRA');
    assert.equal(hist.message_count, 6);

    // With injected context too, the injected rows stay right before the user row.
    await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'c',
      system_prompt: 'MORE',
      injected_context: ['inj'],
    });
    const tail = (await call(app.url, 'GET', `/sessions/${id}/history?offset=6`)).body.messages;
    assert.deepEqual(
      tail.map((m: { role: string; content?: unknown; transcript_role?: string }) => [
        m.role,
        m.content ?? null,
        m.transcript_role ?? null,
      ]),
      [
        ['system', 'MORE', null],
        ['user', 'inj', 'injected_context'],
        ['user', 'c', 'conversational'],
        ['block_assistant', null, null],
      ],
    );
  });
});

describe('concurrent turns on one session', () => {
  it('the machine admits one turn: the second continue gets 409 SESSION_BUSY; creates are never busy', async (t) => {
    const g = gatedAt(1, 'gated reply');
    const app = await startApp(t, g.script);
    const id = await createSession(app.url);
    const first = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'one' });
    await g.entered.promise;
    const status = await call(app.url, 'GET', `/sessions/${id}/status`);
    assert.deepEqual(status.body, { session_id: id, state: 'running', phase: 'calling_model' });
    const second = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two', model: 'claude-busy' });
    assert.equal(second.status, 409, JSON.stringify(second.body));
    assert.equal(second.body.code, 'SESSION_BUSY');
    const other = await call(app.url, 'POST', '/sessions', { prompt: 'elsewhere' });
    assert.equal(other.status, 200, 'a create gets a new id and is never busy');
    g.open.resolve();
    const done = await first;
    assert.equal(done.status, 200);
    assert.equal(done.body.text, 'gated reply');
    assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    // The rejected request's model must not leak into the session.
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'three' });
    assert.equal(next.status, 200);
    assert.notEqual(app.provider.requests.at(-1)!.model, 'claude-busy');
    const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(hist.message_count, 6, 'the rejected turn committed nothing');
  });

  it('exactly one of many simultaneous continues wins (node transport)', async (t) => {
    const g = gatedAt(1, 'gated reply');
    const app = await startApp(t, g.script, { httpTransport: 'node' });
    const id = await createSession(app.url);
    const sevenAnswered = deferred();
    let answered = 0;
    const all = Array.from({ length: 8 }, (_, i) =>
      call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `p${i}` }).then(
        (r) => (++answered === 7 && sevenAnswered.resolve(), r),
      ),
    );
    await g.entered.promise;
    await sevenAnswered.promise; // every loser answered while the winner is still gated
    g.open.resolve();
    const replies = await Promise.all(all);
    const codes = replies.map((r) => r.status).sort();
    assert.deepEqual(codes, [200, 409, 409, 409, 409, 409, 409, 409]);
    assert.equal(app.provider.requests.length, 2);
  });
});
