// Reconnect with Last-Event-ID or ?after_seq=: persistent realms (lmdb, sqlite, jsonl) replay exactly the missed
// events from the ledger and continue live with no gap and no duplicate, also while a turn is streaming;
// memory realms replay from their 256-entry ring and say `replay_unavailable` beyond it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { kindsOf, openEvents, range, seqsOf, type Envelope, type SseClient } from '../helpers/sse-client.ts';

/** These tests check a delta-by-delta replay: the lossless ledger mode keeps committed deltas. */
const LOSSLESS = { ledger: { keep_text_deltas: true } };

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Every ledger entry of a session, through the ledger route. */
async function ledger(base: string, id: string): Promise<Envelope[]> {
  const page = await call(base, 'GET', `/sessions/${id}/ledger?limit=1000`);
  assert.equal(page.status, 200, JSON.stringify(page.body));
  assert.equal(page.body.has_more, false);
  return page.body.events as Envelope[];
}

const PERSISTENT = [
  ['lmdb', 'uws'],
  ['lmdb', 'node'],
  ['sqlite', 'uws'],
  ['sqlite', 'node'],
  ['jsonl', 'uws'],
  ['jsonl', 'node'],
] as const;

for (const [backend, transport] of PERSISTENT) {
  describe(`reconnect replay (${backend}, ${transport})`, () => {
    it('replays exactly the missed events after Last-Event-ID, then continues live', async (t) => {
      const gate = deferred();
      const app = await startApp(
        t,
        [
          { text: 'ready' },
          { chunks: ['a', 'b', 'c', 'd'], tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' } }] },
          { chunks: ['e', 'f'], waitFor: gate.promise },
        ],
        { httpTransport: transport, realmBackend: backend, config: LOSSLESS },
      );
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi', enable_builtins: true })).body.session_id as string;
      const a = await openEvents(app.url, id);
      const watcher = await openEvents(app.url, id);
      t.after(() => watcher.close());
      const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
      // A goes away after the second delta; more events follow before B reconnects.
      await a.until((x) => x.envelopes().filter((e) => e.payload.type === 'text_delta').length >= 2, 'two deltas');
      a.close();
      const seen = a.envelopes();
      const lastSeen = seen.at(-1)!.seq;
      await watcher.until(
        (x) => x.envelopes().some((e) => e.payload.type === 'turn_started' && e.payload.turn_number === 2),
        'the gated call',
      );

      const b = await openEvents(app.url, id, { 'Last-Event-ID': String(lastSeen) });
      t.after(() => b.close());
      gate.resolve();
      assert.equal((await turn).status, 200);
      await b.untilEvent('run_completed');
      const all = await ledger(app.url, id);
      const last = all.at(-1)!.seq;
      assert.deepEqual(seqsOf(all), range(1, last), 'the ledger is contiguous');
      assert.deepEqual(seqsOf(b.envelopes()), range(lastSeen + 1, last), 'no gap, no duplicate');
      assert.deepEqual(b.envelopes(), all.slice(lastSeen), 'replayed and live events equal the ledger');
      assert.equal(b.frames.filter((f) => f.event === 'stream_truncated').length, 0);
      assert.deepEqual([...seen, ...b.envelopes()], all.slice(seen[0].seq - 1));
    });

    it('replays from ?after_seq= while a turn streams, without gap or duplicate', async (t) => {
      const chunks = Array.from({ length: 600 }, (_, i) => `t${i} `);
      const app = await startApp(t, [{ text: 'ready' }, { chunks }, { chunks: ['x', 'y'] }], {
        httpTransport: transport,
        realmBackend: backend,
        config: LOSSLESS,
      });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const watcher = await openEvents(app.url, id);
      t.after(() => watcher.close());
      const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
      await watcher.until((x) => x.envelopes().length >= 100, 'the turn is streaming');
      const full = await openEvents(app.url, id, {}, '?after_seq=0');
      const late = await openEvents(app.url, id, {}, '?after_seq=3');
      t.after(() => {
        full.close();
        late.close();
      });
      assert.equal((await turn).status, 200);
      const runs = (n: number) => (x: SseClient) => x.envelopes().filter((e) => e.payload.type === 'run_completed').length === n;
      // Both replays start before the first turn's run_completed: wait for the second one.
      await Promise.all([full.until(runs(2), 'second run_completed'), late.until(runs(2), 'second run_completed')]);
      const all = await ledger(app.url, id);
      const last = all.at(-1)!.seq;
      assert.deepEqual(full.envelopes(), all, 'after_seq=0 replays the whole ledger, then goes live');
      assert.deepEqual(seqsOf(late.envelopes()), range(4, last));
      assert.equal(full.frames.filter((f) => f.event === 'stream_truncated').length, 0);

      // Later turns keep flowing on the replayed streams.
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'more' })).status, 200);
      await full.until(runs(3), 'third run_completed');
      const after = await ledger(app.url, id);
      assert.deepEqual(full.envelopes(), after);
    });

    it('answers a Last-Event-ID it never delivered with replay_unavailable, then goes live', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport, realmBackend: backend, config: LOSSLESS });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const last = (await ledger(app.url, id)).at(-1)!.seq;
      const c = await openEvents(app.url, id, { 'Last-Event-ID': String(last + 50) });
      t.after(() => c.close());
      const marker = await c.untilEvent('stream_truncated');
      assert.deepEqual(JSON.parse(marker.data).reason, { kind: 'replay_unavailable', requested_after_seq: last + 50, last_seq: last });
      await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
      await c.untilEvent('run_completed');
      assert.equal(c.envelopes()[0].seq, last + 1);
    });
  });
}

describe('reconnect replay (memory realm)', () => {
  it('replays within the 256-entry ring and reports replay_unavailable beyond it', async (t) => {
    const app = await startApp(t, [{ text: 'ready' }, { chunks: Array.from({ length: 300 }, (_, i) => `m${i}`) }], {
      realmBackend: 'memory',
      config: LOSSLESS,
    });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
    const watcher = await openEvents(app.url, id);
    t.after(() => watcher.close());
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' })).status, 200);
    await watcher.untilEvent('run_completed');
    const live = watcher.envelopes();
    const last = live.at(-1)!.seq;
    assert.ok(last > 300);

    const within = await openEvents(app.url, id, { 'Last-Event-ID': String(last - 256) });
    t.after(() => within.close());
    await within.until((x) => x.envelopes().length === 256, 'the ring replay');
    assert.deepEqual(within.envelopes(), live.slice(-256), 'exactly the retained tail');
    assert.equal(within.frames.filter((f) => f.event === 'stream_truncated').length, 0);

    const beyond = await openEvents(app.url, id, { 'Last-Event-ID': String(last - 257) });
    t.after(() => beyond.close());
    const marker = await beyond.untilEvent('stream_truncated');
    assert.equal(JSON.parse(marker.data).reason.kind, 'replay_unavailable');
    assert.equal(JSON.parse(marker.data).reason.requested_after_seq, last - 257);

    // Both continue live with the next turn.
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'more' })).status, 200);
    await Promise.all([within.untilEvent('run_completed'), beyond.untilEvent('run_completed')]);
    await within.until((x) => x.envelopes().at(-1)!.seq > last && x.envelopes().at(-1)!.payload.type === 'run_completed', 'next turn');
    const next = range(last + 1, within.envelopes().at(-1)!.seq);
    assert.deepEqual(seqsOf(within.envelopes()).slice(256), next);
    await beyond.until((x) => x.envelopes().at(-1)?.seq === next.at(-1), 'next turn on the truncated stream');
    assert.deepEqual(seqsOf(beyond.envelopes()), next);
    assert.deepEqual(kindsOf(beyond.envelopes()).slice(0, 2), ['run_started', 'turn_started']);
  });
});
