// test/integration/detached.test.ts: detached turns (Warren extension) through the real server:
// Prefer: respond-async on create and continue, GET /requests/{id} through running, completed (the exact
// synchronous response), failed (the error envelope), cancelled, expiry, and ?request_id= on the event
// stream; kill -9 of a real server mid-turn ends the request failed and leaves the session usable.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { kindsOf, openEvents } from '../helpers/sse-client.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const ASYNC = { prefer: 'respond-async' };

/** Polls GET /requests/{id} until it is terminal (the failure write follows run_failed). */
async function terminal(base: string, rid: string): Promise<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    const r = await call(base, 'GET', `/requests/${rid}`);
    if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r.body;
    if (i > 2000) assert.fail(`request ${rid} never settled`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

for (const transport of ['node', 'uws'] as const) {
  describe(`detached turns over ${transport}`, () => {
    it('continue with Prefer: respond-async answers 202, runs, and reports the synchronous response', async (t) => {
      const gate = gatedAt(1, 'late answer');
      const app = await startApp(t, gate.script, { httpTransport: transport });
      const sid = await createSession(app.url);
      const res = await call(
        app.url,
        'POST',
        `/sessions/${sid}/messages`,
        { session_id: sid, prompt: 'p' },
        { ...ASYNC, 'x-warren-request-id': 'r-1' },
      );
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.deepEqual(res.body, {
        session_id: sid,
        request_id: 'r-1',
        status_url: '/requests/r-1',
        events_url: `/sessions/${sid}/events?request_id=r-1`,
      });
      assert.equal(res.headers.get('preference-applied'), 'respond-async');
      await gate.entered.promise;
      const running = await call(app.url, 'GET', '/requests/r-1');
      assert.equal(running.body.status, 'running');
      // A second turn is still refused as SPEC.md says, detached or not.
      const busy = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'q' }, ASYNC);
      assert.equal(busy.status, 409);
      assert.equal(busy.body.code, 'SESSION_BUSY');
      const events = await openEvents(app.url, sid, {}, '?request_id=r-1');
      t.after(() => events.close());
      gate.open.resolve();
      await events.untilEvent('run_completed');
      const envs = events.envelopes();
      assert.equal(envs[0].payload.type, 'run_started');
      assert.equal(envs[0].seq, running.body.first_seq);
      assert.ok(kindsOf(envs).includes('text_delta'));
      const done = await call(app.url, 'GET', '/requests/r-1');
      assert.equal(done.body.status, 'completed');
      while ((await call(app.url, 'GET', `/sessions/${sid}/status`)).body.state !== 'idle') await new Promise((r) => setTimeout(r, 5));
      const sync = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'again' });
      assert.deepEqual(Object.keys(done.body.response).sort(), Object.keys(sync.body).sort());
      assert.equal(done.body.response.text, 'late answer');
      assert.equal(done.body.response.session_id, sid);
    });
  });
}

describe('detached turns', () => {
  it('create with Prefer: respond-async answers 202 and completes', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hello' }, ASYNC);
    assert.equal(res.status, 202);
    const body = await terminal(app.url, res.body.request_id);
    assert.equal(body.status, 'completed');
    assert.equal((body.response as { text: string }).text, 'echo: hello');
    assert.equal((body.response as { session_id: string }).session_id, res.body.session_id);
  });

  it('a failed turn reports the error envelope the synchronous route would have answered', async (t) => {
    const app = await startApp(t, [
      { text: 'ok' },
      { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } },
      { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } },
    ]);
    const sid = await createSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'x' }, ASYNC);
    assert.equal(res.status, 202);
    const body = await terminal(app.url, res.body.request_id);
    // The record turns terminal in the turn's failure write; the machine is at rest just after it.
    while ((await call(app.url, 'GET', `/sessions/${sid}/status`)).body.state !== 'idle') await new Promise((r) => setTimeout(r, 5));
    const sync = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'x' });
    assert.equal(body.status, 'failed');
    assert.equal(body.http_status, sync.status);
    assert.deepEqual(body.error, sync.body);
  });

  it('POST /requests/{id}/cancel cancels a detached turn; bad input is refused synchronously', async (t) => {
    const gate = gatedAt(1);
    const app = await startApp(t, gate.script);
    const sid = await createSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'p' }, ASYNC);
    await gate.entered.promise;
    const cancel = await call(app.url, 'POST', `/requests/${res.body.request_id}/cancel`);
    assert.deepEqual(cancel.body, { request_id: res.body.request_id, cancelled: true });
    const body = await terminal(app.url, res.body.request_id);
    assert.equal(body.status, 'cancelled');
    assert.equal((body.error as { code: string }).code, 'REQUEST_CANCELLED');
    const mismatch = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: 'other', prompt: 'p' }, ASYNC);
    assert.equal(mismatch.status, 400);
    const missing = await call(app.url, 'GET', '/requests/nope');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, 'NOT_FOUND');
  });

  it('results expire after the configured time and then answer 404 with reason expired', async (t) => {
    let now = Date.now();
    const app = await startApp(t, [], { clocks: { detached: () => now } });
    await call(app.url, 'PATCH', '/config', { extensions: { detached_result_ttl_secs: 60 } });
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hello' }, ASYNC);
    assert.equal((await terminal(app.url, res.body.request_id)).status, 'completed');
    now += 61_000;
    const gone = await call(app.url, 'GET', `/requests/${res.body.request_id}`);
    assert.equal(gone.status, 404);
    assert.equal(gone.body.details.reason, 'expired');
    assert.equal((await call(app.url, 'GET', `/requests/${res.body.request_id}`)).body.details.reason, 'expired');
  });

  it('after kill -9 mid-turn the request reports failed truthfully and the session is usable', async (t) => {
    const dir = await tmpDir('warren-detached-kill-');
    t.after(() => dir.cleanup());
    const realm = 'detached-kill';
    await writeRealmConfig(dir.path, realm, {
      providers: { scripted: { replies: [{ text: 'first' }, { text: 'never', delay_ms: 600_000 }] } },
    });
    const first = await startServerProcess({ stateRoot: dir.path, realm, t });
    const sid = (await call(first.url, 'POST', '/sessions', { prompt: 'a', provider: 'scripted' })).body.session_id as string;
    const res = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'b' }, ASYNC);
    assert.equal(res.status, 202);
    assert.equal((await call(first.url, 'GET', res.body.status_url)).body.status, 'running');
    await first.kill('SIGKILL');
    const second = await startServerProcess({ stateRoot: dir.path, realm, t });
    const after = await call(second.url, 'GET', res.body.status_url);
    assert.equal(after.body.status, 'failed');
    assert.equal(after.body.error.details.reason, 'interrupted_by_restart');
    const next = await call(second.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'c' });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    await second.kill('SIGKILL');
  });
});
