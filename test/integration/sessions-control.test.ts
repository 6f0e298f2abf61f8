// Interrupt, archive and request cancel through the real server: idle no-ops, a gated model call
// interrupted or cancelled (499, nothing committed, session continuable), archive of a running turn,
// and the 404 rows.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { within } from '../helpers/wait.ts';

/** Call number `at` signals `entered` and waits on a gate that never opens; other calls echo. */
function stuckAt(at: number) {
  const entered = deferred(`provider call ${at} to start (it then waits forever)`);
  const never = new Promise<void>(() => {});
  const script = (req: ProviderRequest, i: number): ScriptedReply => {
    if (i !== at) return echoReply(req);
    entered.resolve();
    return { text: 'never sent', waitFor: never };
  };
  return { entered, script };
}

const UNKNOWN = '00000000-0000-4000-8000-00000000beef';

describe('POST /sessions/{id}/interrupt', () => {
  it('reports interrupted:true on an idle session (a no-op) and 404 for unknown or archived ones', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${id}/interrupt`);
    assert.equal(res.status, 200);
    assert.equal(res.body.interrupted, true);
    assert.equal(res.body.session_id, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${UNKNOWN}/interrupt`)).status, 404);
    await call(app.url, 'DELETE', `/sessions/${id}`);
    const archived = await call(app.url, 'POST', `/sessions/${id}/interrupt`);
    assert.equal(archived.status, 404);
    assert.equal(archived.body.code, 'SESSION_NOT_FOUND');
  });

  for (const httpTransport of ['auto', 'node'] as const) {
    it(`ends a gated model call with 499 REQUEST_CANCELLED; nothing is committed (${httpTransport})`, async (t) => {
      const g = stuckAt(1);
      const app = await startApp(t, g.script, { httpTransport });
      const id = await createSession(app.url);
      const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'long one' });
      await g.entered.promise;
      const res = await call(app.url, 'POST', `/sessions/${id}/interrupt`);
      assert.deepEqual(res.body, { session_id: id, interrupted: true, result: 'interrupted' });
      const ended = await within('the interrupted turn to answer (only the interrupt can end it)', turn);
      assert.equal(ended.status, 499, JSON.stringify(ended.body));
      assert.equal(ended.body.code, 'REQUEST_CANCELLED');
      assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
      const hist = (await call(app.url, 'GET', `/sessions/${id}/history`)).body;
      assert.equal(hist.message_count, 2);
      assert.ok(!JSON.stringify(hist.messages).includes('long one'));
      const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'after' });
      assert.equal(next.status, 200);
      assert.equal(next.body.text, 'echo: after');
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 4);
    });
  }

  it('interrupting a first turn answers 499 with the created session identity; the session continues', async (t) => {
    const g = stuckAt(0);
    const app = await startApp(t, g.script);
    const turn = call(app.url, 'POST', '/sessions', { prompt: 'first' });
    await g.entered.promise;
    const listed = (await call(app.url, 'GET', '/sessions')).body.sessions;
    assert.equal(listed.length, 1);
    const id = listed[0].session_id;
    assert.equal(listed[0].is_active, true);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/interrupt`)).body.interrupted, true);
    const ended = await within('the interrupted turn to answer (only the interrupt can end it)', turn);
    assert.equal(ended.status, 499, JSON.stringify(ended.body));
    assert.equal(ended.body.code, 'REQUEST_CANCELLED');
    assert.equal(ended.body.details.session_id, id);
    assert.equal(ended.body.details.resumable, true);
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(next.status, 200, JSON.stringify(next.body));
  });
});

describe('DELETE /sessions/{id}', () => {
  it('archives once; a second delete and an unknown id are 404', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const res = await call(app.url, 'DELETE', `/sessions/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.archived, true);
    const again = await call(app.url, 'DELETE', `/sessions/${id}`);
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'SESSION_NOT_FOUND');
    assert.equal((await call(app.url, 'DELETE', `/sessions/${UNKNOWN}`)).status, 404);
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).status, 404);
  });

  it('archiving a running session stops its turn first', async (t) => {
    const g = stuckAt(1);
    const app = await startApp(t, g.script);
    const id = await createSession(app.url);
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x' });
    await g.entered.promise;
    const res = await call(app.url, 'DELETE', `/sessions/${id}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.archived, true);
    assert.equal((await within('the turn of the archived session to answer', turn)).status, 499);
    assert.deepEqual((await call(app.url, 'GET', '/sessions')).body.sessions, []);
  });
});

describe('POST /requests/{id}/cancel', () => {
  it('cancels an in-flight request, then answers already_terminal; unknown ids are 404', async (t) => {
    const g = stuckAt(1);
    const app = await startApp(t, g.script);
    const id = await createSession(app.url);
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x' }, { 'x-warren-request-id': 'job-7' });
    await g.entered.promise;
    const res = await call(app.url, 'POST', '/requests/job-7/cancel');
    assert.equal(res.status, 200);
    assert.equal(res.body.cancelled, true);
    const ended = await within('the interrupted turn to answer (only the interrupt can end it)', turn);
    assert.equal(ended.status, 499);
    assert.equal(ended.body.code, 'REQUEST_CANCELLED');
    assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 2);

    const late = await call(app.url, 'POST', '/requests/job-7/cancel');
    assert.equal(late.status, 200);
    assert.equal(late.body.cancelled, false);
    assert.equal(late.body.reason, 'already_terminal');

    const done = await call(
      app.url,
      'POST',
      `/sessions/${id}/messages`,
      { session_id: id, prompt: 'y' },
      { 'x-warren-request-id': 'job-8' },
    );
    assert.equal(done.status, 200);
    const after = await call(app.url, 'POST', '/requests/job-8/cancel');
    assert.deepEqual([after.body.cancelled, after.body.reason], [false, 'already_terminal']);

    const unknown = await call(app.url, 'POST', '/requests/never-seen/cancel');
    assert.equal(unknown.status, 404);
  });
});
