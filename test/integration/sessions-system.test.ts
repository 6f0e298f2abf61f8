// POST /sessions/{id}/system_context and /system_prompt through the real server: applied/duplicate,
// idempotency conflicts, adoption by target index, versioned updates, CAS on the transcript head, busy.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';

const UNKNOWN = '00000000-0000-4000-8000-00000000abcd';

describe('POST /sessions/{id}/system_context', () => {
  it('appends a durable System row with identity; a retry is a duplicate; reused key with other content is 409', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const body = { content: { type: 'text', text: 'the build is green' }, source: 'ci', idempotency_key: 'k1' };
    const first = await call(app.url, 'POST', `/sessions/${id}/system_context`, body);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, { session_id: id, status: 'applied' });
    const retry = await call(app.url, 'POST', `/sessions/${id}/system_context`, body);
    assert.deepEqual(retry.body, { session_id: id, status: 'duplicate' });
    const conflict = await call(app.url, 'POST', `/sessions/${id}/system_context`, { ...body, content: { type: 'text', text: 'red' } });
    assert.equal(conflict.status, 409);
    assert.equal(conflict.body.code, 'CONFLICT');
    const plain = await call(app.url, 'POST', `/sessions/${id}/system_context`, { content: { type: 'json', value: { a: 1 } } });
    assert.equal(plain.body.status, 'applied');

    const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(hist.message_count, 4);
    assert.deepEqual(hist.messages[2], {
      role: 'system',
      content: 'the build is green',
      created_at: hist.messages[2].created_at,
      identity: { idempotency_key: 'k1', source: 'ci' },
    });
    assert.deepEqual([hist.messages[3].role, hist.messages[3].content, 'identity' in hist.messages[3]], ['system', '{"a":1}', false]);
    // The next turn's model call sees it as system text.
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'next' });
    assert.equal(app.provider.requests.at(-1)!.system, 'the build is green\n\n{"a":1}');
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 6);
  });

  it('waits for a running turn and lands after its rows; unknown sessions are 404', async (t) => {
    const g = gatedAt(1);
    const app = await startApp(t, g.script);
    const id = await createSession(app.url);
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'busy' });
    await g.entered.promise;
    let answered = false;
    const ctx = call(app.url, 'POST', `/sessions/${id}/system_context`, { content: { type: 'text', text: 'late fact' } }).finally(
      () => (answered = true),
    );
    // A few round trips give the append time to reach the server; it must still be waiting.
    for (let i = 0; i < 3; i++) assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'running');
    assert.equal(answered, false, 'the append waits for the admitted boundary');
    g.open.resolve();
    assert.equal((await turn).status, 200);
    assert.equal((await ctx).body.status, 'applied');
    const roles = (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages.map((m: { role: string }) => m.role);
    assert.deepEqual(roles, ['user', 'block_assistant', 'user', 'block_assistant', 'system']);
    const missing = await call(app.url, 'POST', `/sessions/${UNKNOWN}/system_context`, { content: { type: 'text', text: 'x' } });
    assert.equal(missing.status, 404);
  });
});

describe('POST /sessions/{id}/system_prompt', () => {
  it('adopts an unversioned System row, updates by version, reports duplicates and rejects stale versions', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url, { prompt: 'hi', system_prompt: 'v0 prompt' });
    const url = `/sessions/${id}/system_prompt`;
    const adopt = await call(app.url, 'POST', url, { key: 'main', content: 'v1 prompt', target_message_index: 0, actor: 'ops' });
    assert.equal(adopt.status, 200, JSON.stringify(adopt.body));
    assert.equal(adopt.body.version, 1);
    assert.equal(adopt.body.message_index, 0);
    assert.equal(adopt.body.status, 'applied');
    assert.equal(adopt.body.key, 'main');
    assert.equal(typeof adopt.body.transcript_revision, 'string');

    const update = await call(app.url, 'POST', url, { key: 'main', content: 'v2 prompt', expected_version: 1 });
    assert.equal(update.status, 200, JSON.stringify(update.body));
    assert.deepEqual([update.body.version, update.body.message_index, update.body.status], [2, 0, 'applied']);
    const same = await call(app.url, 'POST', url, { key: 'main', content: 'v2 prompt', expected_version: 2 });
    assert.deepEqual([same.status, same.body.status, same.body.version], [200, 'duplicate', 2]);
    const stale = await call(app.url, 'POST', url, { key: 'main', content: 'v3 prompt', expected_version: 1 });
    assert.equal(stale.status, 400);
    assert.equal(stale.body.code, 'BAD_REQUEST');
    const notSystem = await call(app.url, 'POST', url, { key: 'other', content: 'x', target_message_index: 1 });
    assert.equal(notSystem.status, 400);

    const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(hist.message_count, 3, 'replacement is in place');
    assert.deepEqual([hist.messages[0].content, hist.messages[0].prompt_version], ['v2 prompt', { key: 'main', version: 2 }]);
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'next' });
    assert.equal(app.provider.requests.at(-1)!.system, 'v2 prompt');
  });

  it('checks expected_parent_revision against the transcript head', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url, { prompt: 'hi', system_prompt: 'base' });
    const url = `/sessions/${id}/system_prompt`;
    const adopt = await call(app.url, 'POST', url, { key: 'p', content: 'one', target_message_index: 0 });
    const head = adopt.body.transcript_revision;
    const mismatch = await call(app.url, 'POST', url, {
      key: 'p',
      content: 'two',
      expected_version: 1,
      expected_parent_revision: `${head}-old`,
    });
    assert.equal(mismatch.status, 400);
    const ok = await call(app.url, 'POST', url, { key: 'p', content: 'two', expected_version: 1, expected_parent_revision: head });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    // A turn moves the head: the old revision no longer matches.
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'moves head' });
    const moved = await call(app.url, 'POST', url, {
      key: 'p',
      content: 'three',
      expected_version: 2,
      expected_parent_revision: ok.body.transcript_revision,
    });
    assert.equal(moved.status, 400);
  });

  it('rejects a replacement while a turn runs with 409 SESSION_BUSY; unknown sessions are 404', async (t) => {
    const g = gatedAt(1);
    const app = await startApp(t, g.script);
    const id = await createSession(app.url, { prompt: 'hi', system_prompt: 'base' });
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'busy' });
    await g.entered.promise;
    const busy = await call(app.url, 'POST', `/sessions/${id}/system_prompt`, { key: 'p', content: 'x', target_message_index: 0 });
    assert.equal(busy.status, 409);
    assert.equal(busy.body.code, 'SESSION_BUSY');
    g.open.resolve();
    await turn;
    const missing = await call(app.url, 'POST', `/sessions/${UNKNOWN}/system_prompt`, { key: 'p', content: 'x' });
    assert.equal(missing.status, 404);
  });
});
