// The 256-entry drop policy under real kernel backpressure, on both transports: a subscriber that stops
// reading during a turn of 3,000 large text_delta events gets `stream_truncated` (stream_lagged) with
// the exact number of events it missed and seq continuity around the marker, its buffer stays at 256
// entries, and a subscriber that keeps reading on the same session gets every event.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { openEvents, range, seqsOf, walkLagged } from '../helpers/sse-client.ts';
import { SUBSCRIBER_BUFFER, sseDefaults } from '../../http/sse.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const TRANSPORTS = ['uws', 'node'] as const;
const CHUNKS = 3_000;
// ~4 KB per frame, ~12 MB per turn: far more than the loopback socket buffers of a reader that stopped.
const FILLER = 'x'.repeat(4096);
/** Heartbeat of the long-stall case, and how many a reading subscriber must see: well past uWS's ~10 s. */
const STALL_HEARTBEAT_MS = 500;
const STALL_HEARTBEATS = 26;

for (const transport of TRANSPORTS) {
  describe(`stalled subscriber (${transport})`, () => {
    it(
      'drops exactly what a stalled reader missed, keeps 256, and a reading subscriber gets everything',
      { timeout: SLOW_TEST_MS },
      async (t) => {
        const chunks = Array.from({ length: CHUNKS }, (_, i) => `${i}:${FILLER}`);
        const app = await startApp(t, [{ text: 'ready' }, { chunks }], { httpTransport: transport });
        const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
        const id = created.body.session_id as string;

        const reader = await openEvents(app.url, id);
        const stalled = await openEvents(app.url, id);
        t.after(() => {
          reader.close();
          stalled.close();
        });
        stalled.pause();
        const first = JSON.parse(reader.frames[0].data).last_seq + 1;

        const reply = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flood' });
        assert.equal(reply.status, 200);
        await reader.untilEvent('run_completed', 60_000);
        const all = reader.envelopes();
        // run_started, turn_started, 3,000 deltas, text_complete, turn_completed, run_completed
        const total = CHUNKS + 5;
        const rw = walkLagged(reader, first);
        assert.equal(rw.dropped, 0, `the reading subscriber lagged: ${rw.markers} marker(s), ${rw.dropped} dropped`);
        assert.equal(rw.received, total, 'the reading subscriber got every event in order');
        const deltas = all.filter((e) => e.payload.type === 'text_delta').map((e) => (e.payload.delta as string).split(':')[0]);
        assert.deepEqual(
          deltas,
          chunks.map((_, i) => String(i)),
        );

        const stalledBefore = stalled.frames.length;
        stalled.resume();
        await stalled.untilEvent('run_completed', 60_000);
        const w = walkLagged(stalled, first);
        assert.ok(stalledBefore < total, 'the stalled reader had not seen the turn before it resumed');
        assert.ok(w.markers >= 1, 'the stalled subscriber lagged');
        assert.equal(w.received + w.dropped, total, 'dropped + received == published');
        // The turn finished before the reader resumed, so what followed the last marker is exactly the
        // retained buffer: the observable bound on per-subscriber memory.
        assert.equal(w.tail, SUBSCRIBER_BUFFER);
        assert.equal(stalled.envelopes().at(-1)!.payload.type, 'run_completed');
        t.diagnostic(`${transport}: stalled got ${w.received}, dropped ${w.dropped} in ${w.markers} marker(s)`);
      },
    );

    it('delivers the tail a transport still buffered when a stalled reader resumes and nothing new comes', async (t) => {
      // A few multi-megabyte events: the reader falls behind without dropping anything, and the last
      // bytes sit in the transport's own buffer when the connection drains (uWS keeps them there unless
      // something is written on drain).
      const big = Array.from({ length: 2 }, (_, i) => `${i}${'z'.repeat(3 * 1024 * 1024)}`);
      const app = await startApp(t, [{ text: 'ready' }, { chunks: big }], { httpTransport: transport });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const stalled = await openEvents(app.url, id);
      t.after(() => stalled.close());
      stalled.pause();
      const first = JSON.parse(stalled.frames[0].data).last_seq + 1;
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'big' })).status, 200);
      stalled.resume();
      await stalled.untilEvent('run_completed', 30_000);
      assert.deepEqual(seqsOf(stalled.envelopes()), range(first, first + 6));
      assert.equal(stalled.frames.filter((f) => f.event === 'stream_truncated').length, 0);
    });

    it(
      "keeps a reader stalled for longer than uWS's 10 s no-progress timeout, then sends its marker and the tail",
      { timeout: 120_000 },
      async (t) => {
        // The stall is measured by an observed clock, not a sleep: a reading subscriber's heartbeats.
        const saved = sseDefaults.heartbeatMs;
        sseDefaults.heartbeatMs = STALL_HEARTBEAT_MS;
        t.after(() => {
          sseDefaults.heartbeatMs = saved;
        });
        const chunks = Array.from({ length: CHUNKS }, (_, i) => `${i}:${FILLER}`);
        const app = await startApp(t, [{ text: 'ready' }, { chunks }], { httpTransport: transport });
        const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
        const stalled = await openEvents(app.url, id);
        const clock = await openEvents(app.url, id);
        t.after(() => {
          stalled.close();
          clock.close();
        });
        stalled.pause();
        const first = JSON.parse(stalled.frames[0].data).last_seq + 1;
        assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flood' })).status, 200);
        await clock.untilEvent('run_completed', 60_000);
        const beats = clock.comments.length;
        await clock.until((c) => c.comments.length >= beats + STALL_HEARTBEATS, 'the stall outlasts the transport timeout', 60_000);
        assert.equal(stalled.ended, false, 'the stalled reader is still connected');
        stalled.resume();
        await stalled.untilEvent('run_completed', 30_000);
        const w = walkLagged(stalled, first);
        assert.ok(w.markers >= 1, 'the stalled reader got stream_truncated');
        assert.equal(w.received + w.dropped, chunks.length + 5);
        assert.equal(w.tail, SUBSCRIBER_BUFFER);
      },
    );
  });
}
