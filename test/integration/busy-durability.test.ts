// test/integration/busy-durability.test.ts: the follow-up queue of busy_policy enqueue is durable: a real
// server killed with SIGKILL while a turn runs and two follow-ups wait comes back, reports the cut-off turn
// failed, and runs the follow-ups at startup, in order, reporting each through GET /requests/{id}.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { Script } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { bootApp, call, createSession } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { queuedIs, terminal, untilStatus } from '../helpers/follow-ups.ts';

const ASYNC = { prefer: 'respond-async' };

for (const backend of ['lmdb', 'sqlite'] as const)
  describe(`busy policies across kill -9 (${backend})`, () => {
    it('queued follow-ups survive SIGKILL and run in order at the next start', { timeout: 120_000 }, async (t) => {
      const dir = await tmpDir('warren-busy-kill-');
      t.after(() => dir.cleanup());
      const realm = 'busy-kill';
      await writeRealmConfig(dir.path, realm, {
        providers: { scripted: { replies: [{ text: 'first' }, { text: 'never', delay_ms: 600_000 }] } },
      });
      const first = await startServerProcess({ stateRoot: dir.path, realm, backend, t });
      const sid = (await call(first.url, 'POST', '/sessions', { prompt: 'a', provider: 'scripted' })).body.session_id as string;
      const running = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'b' }, ASYNC);
      assert.equal(running.status, 202);
      const c = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'c', busy_policy: 'enqueue' }, ASYNC);
      const d = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'd', busy_policy: 'enqueue' }, ASYNC);
      // Steering the running turn never reaches (it is killed first) runs as a follow-up after the restart.
      const e = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'e', busy_policy: 'steer' }, ASYNC);
      assert.deepEqual([c.status, d.status, e.status], [202, 202, 202]);
      assert.deepEqual((await call(first.url, 'GET', `/sessions/${sid}/status`)).body.follow_ups, { queued: 2, steering: 1 });
      assert.equal((await call(first.url, 'GET', c.body.status_url)).body.status, 'queued');
      await first.kill('SIGKILL');
      // The next process echoes (its script starts over, so it is emptied).
      await writeRealmConfig(dir.path, realm, { providers: { scripted: { replies: [] } } });
      const second = await startServerProcess({ stateRoot: dir.path, realm, backend, t });
      const cut = await call(second.url, 'GET', running.body.status_url);
      assert.equal(cut.body.status, 'failed');
      assert.equal(cut.body.error.details.reason, 'interrupted_by_restart');
      const cr = await terminal(second.url, c.body.request_id);
      const dr = await terminal(second.url, d.body.request_id);
      assert.equal(cr.status, 'completed', JSON.stringify(cr));
      assert.equal(cr.response.text, 'echo: c');
      assert.equal(dr.status, 'completed', JSON.stringify(dr));
      assert.equal(dr.response.text, 'echo: d');
      const er = await terminal(second.url, e.body.request_id);
      assert.equal(er.status, 'completed', JSON.stringify(er));
      assert.equal(er.response.text, 'echo: e');
      const history = await call(second.url, 'GET', `/sessions/${sid}/history`);
      const users = history.body.messages
        .filter((m: { role: string; transcript_role?: string }) => m.role === 'user' && m.transcript_role === 'conversational')
        .map((m: { content: string }) => m.content);
      assert.deepEqual(users, ['a', 'c', 'd', 'e']);
      const next = await call(second.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'f' });
      assert.equal(next.status, 200, JSON.stringify(next.body));
      await second.kill('SIGKILL');
    });
  });

describe('busy policies across a graceful restart', () => {
  it('close interrupts the running turn only; the queue runs when the realm is opened again', async (t) => {
    const dir = await tmpDir('warren-busy-close-');
    t.after(() => dir.cleanup());
    const gate = gatedAt(1);
    const open = (script: Script) => bootApp({ stateRoot: dir.path, realm: 'busy-close', script });
    const one = await open(gate.script);
    const sid = await createSession(one.url);
    // Both answers are read after close, which may end them first: their handlers are attached now.
    const first = call(one.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'b' }).catch(() => ({ status: 0 }));
    await gate.entered.promise;
    const c = await call(one.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'c', busy_policy: 'enqueue' }, ASYNC);
    const d = call(one.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'd', busy_policy: 'enqueue' }).catch(
      () => undefined,
    );
    await untilStatus(one.url, sid, queuedIs(2));
    await one.close();
    assert.equal((await first).status !== 200, true);
    await d;
    const two = await open([]);
    t.after(() => two.close());
    const cr = await terminal(two.url, c.body.request_id);
    assert.equal(cr.status, 'completed', JSON.stringify(cr));
    await untilStatus(two.url, sid, (b) => b.state === 'idle');
    assert.deepEqual(
      two.provider.requests.map((r) =>
        r.messages.at(-1)?.role === 'user' ? plainText((r.messages.at(-1) as { content: ContentInput }).content) : '',
      ),
      ['c', 'd'],
    );
  });
});
