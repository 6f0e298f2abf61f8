// Fan-out on both transports: 1,000 concurrent raw-socket subscribers of one session all receive the
// same ordered events of a turn, byte for byte, and all of their subscriptions are released on close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { liveSubscriberTotal } from '../../actors/event-hub.ts';
import { call, startApp } from '../helpers/app.ts';
import { kindsOf, openEvents, range, seqsOf, type SseClient } from '../helpers/sse-client.ts';

const TRANSPORTS = ['uws', 'node'] as const;
const SUBSCRIBERS = 1_000;
// Connections are opened in waves so the listen backlog never overflows (a dropped SYN costs 1 s).
const WAVE = 100;

for (const transport of TRANSPORTS) {
  describe(`fan-out (${transport})`, () => {
    it(`delivers one turn identically to ${SUBSCRIBERS} concurrent subscribers`, async (t) => {
      const app = await startApp(t, [{ text: 'ready' }, { chunks: ['Hel', 'lo', ' world'] }], { httpTransport: transport });
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
      const id = created.body.session_id as string;
      const baseline = liveSubscriberTotal();

      const clients: SseClient[] = [];
      t.after(() => {
        for (const c of clients) c.close();
      });
      for (let i = 0; i < SUBSCRIBERS; i += WAVE) {
        const wave = await Promise.all(Array.from({ length: Math.min(WAVE, SUBSCRIBERS - i) }, () => openEvents(app.url, id)));
        clients.push(...wave);
      }
      assert.equal(liveSubscriberTotal() - baseline, SUBSCRIBERS);
      const first = JSON.parse(clients[0].frames[0].data).last_seq + 1;

      const reply = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
      assert.equal(reply.status, 200);
      await Promise.all(clients.map((c) => c.untilEvent('run_completed')));

      const reference = clients[0].frames.slice(1);
      const envs = clients[0].envelopes();
      assert.deepEqual(kindsOf(envs), [
        'run_started',
        'turn_started',
        'text_delta',
        'text_delta',
        'text_delta',
        'text_complete',
        'turn_completed',
        'run_completed',
      ]);
      assert.deepEqual(seqsOf(envs), range(first, first + 7));
      for (const [i, c] of clients.entries()) {
        assert.equal(JSON.parse(c.frames[0].data).last_seq, first - 1, `subscriber ${i} session_loaded`);
        assert.deepEqual(c.frames.slice(1), reference, `subscriber ${i} got the same frames`);
      }

      for (const c of clients) c.close();
      await Promise.all(clients.map((c) => c.closed));
      await until(() => liveSubscriberTotal() === baseline, 'every subscription released');
    });
  });
}

/** Polls a server-side condition once per event-loop turn (the server notices closes on its own I/O). */
async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}
