// Stream lifecycle on both transports: heartbeat comments on an idle stream, subscriptions released as
// soon as a client goes away (also a stalled one), `done` then end of stream on archive and shutdown.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveSubscriberTotal } from '../../actors/event-hub.ts';
import { sseDefaults } from '../../http/sse.ts';
import { call, startApp } from '../helpers/app.ts';
import { openEvents, SseClient } from '../helpers/sse-client.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const TRANSPORTS = ['uws', 'node'] as const;

/** Polls a server-side condition once per event-loop turn (the server notices closes on its own I/O). */
async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

for (const transport of TRANSPORTS) {
  describe(`stream lifecycle (${transport})`, () => {
    const saved = sseDefaults.heartbeatMs;
    before(() => {
      sseDefaults.heartbeatMs = 30;
    });
    after(() => {
      sseDefaults.heartbeatMs = saved;
    });

    it('sends heartbeat comments on an idle stream', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const c = await openEvents(app.url, id);
      t.after(() => c.close());
      await c.until((x) => x.comments.filter((m) => m === 'heartbeat').length >= 3, 'three heartbeats');
      assert.equal(c.frames.length, 1, 'heartbeats are comments, not events');
    });

    it('releases the subscription as soon as the client closes, also when it stalled mid-turn', { timeout: SLOW_TEST_MS }, async (t) => {
      const app = await startApp(t, [{ text: 'ready' }, { chunks: Array.from({ length: 2_000 }, (_, i) => `${i}:${'y'.repeat(4096)}`) }], {
        httpTransport: transport,
      });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const baseline = liveSubscriberTotal();
      const idle = await openEvents(app.url, id);
      const stalled = await openEvents(app.url, id);
      assert.equal(liveSubscriberTotal(), baseline + 2);

      idle.close();
      await until(() => liveSubscriberTotal() === baseline + 1, 'the idle subscription released');

      stalled.pause();
      const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flood' });
      const watcher = await openEvents(app.url, id);
      t.after(() => watcher.close());
      await watcher.until((x) => x.envelopes().length >= 1_000, 'the turn is well under way');
      stalled.close();
      await until(() => liveSubscriberTotal() === baseline + 1, 'the stalled subscription released');
      assert.equal((await turn).status, 200);
      await watcher.untilEvent('run_completed');
    });

    it('ends streams with `done` on archive, then the session is gone', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const baseline = liveSubscriberTotal();
      const c = await openEvents(app.url, id);
      const archived = await call(app.url, 'DELETE', `/sessions/${id}`);
      assert.equal(archived.status, 200, JSON.stringify(archived.body));
      await c.until((x) => x.ended, 'end of stream');
      c.close();
      assert.equal(c.frames.at(-1)!.event, 'done');
      assert.deepEqual(JSON.parse(c.frames.at(-1)!.data), {});
      assert.equal(liveSubscriberTotal(), baseline);
      const again = await SseClient.open(app.url, `/sessions/${id}/events`);
      await again.until((x) => x.ended, 'end of the error body');
      again.close();
      assert.equal(again.status, 404);
    });

    it('ends streams with `done` on shutdown', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const c = await openEvents(app.url, id);
      await app.close();
      await c.until((x) => x.ended, 'end of stream');
      c.close();
      assert.equal(c.frames.at(-1)!.event, 'done');
    });
  });
}
