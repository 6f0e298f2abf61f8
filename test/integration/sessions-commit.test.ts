// A turn whose durable commit fails: the store refuses the batch (a non-finite token count cannot be
// stored as JSON), so the session must keep its last committed state in memory and on disk, come back
// unquarantined after eviction, and stay continuable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { call, startApp } from '../helpers/app.ts';

describe('a failed turn commit', () => {
  it('rolls the session back to its last commit; the session stays continuable and unquarantined', async (t) => {
    const script = (req: ProviderRequest, i: number): ScriptedReply =>
      i === 1
        ? { text: 'unstorable', usage: { input_tokens: Number.POSITIVE_INFINITY, output_tokens: 1 } }
        : { ...echoReply(req), usage: { input_tokens: 2, output_tokens: 1 } };
    const app = await startApp(t, script, { maxResidentSessions: 1 });
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
    assert.equal(created.status, 200);
    const id = created.body.session_id;
    const before = (await call(app.url, 'GET', `/sessions/${id}`)).body;

    const failed = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'boom' });
    assert.equal(failed.status, 503, JSON.stringify(failed.body));
    assert.equal(failed.body.code, 'SESSION_STORE_ERROR');

    const after = (await call(app.url, 'GET', `/sessions/${id}`)).body;
    assert.deepEqual([after.message_count, after.total_tokens], [before.message_count, before.total_tokens]);
    assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
    assert.equal(hist.messages.length, 2);
    assert.ok(!JSON.stringify(hist.messages).includes('boom'));

    // Evict it (one resident session at most) and hydrate it again from the store.
    assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'other' })).status, 200);
    assert.deepEqual((await call(app.url, 'GET', `/sessions/${id}/status`)).body, { session_id: id, state: 'idle' });
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'fine' });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    const final = (await call(app.url, 'GET', `/sessions/${id}`)).body;
    assert.deepEqual([final.message_count, final.total_tokens], [4, 6]);
  });
});
