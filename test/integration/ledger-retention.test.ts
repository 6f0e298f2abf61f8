// The ledger does not grow without bound (default `[ledger]`): a committed turn's text deltas leave the
// ledger (its text_complete carries the text), so a Last-Event-ID replay gives the same text and the same
// final events with fewer bytes; retention prunes the oldest seqs beyond max_entries_per_session, and a
// replay asking for a pruned range gets stream_truncated naming the pruning and the first retained seq,
// then continues. Every persistent backend; the store op is in the store conformance suite too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { retentionCut } from '../../actors/ledger-retention.ts';
import { validateConfig } from '../../config/toml.ts';
import { createMemoryStore } from '../../storage/memory-store.ts';
import { call, startApp } from '../helpers/app.ts';
import { openEvents, type Envelope } from '../helpers/sse-client.ts';

async function ledgerOf(url: string, id: string): Promise<Envelope[]> {
  const all: Envelope[] = [];
  for (;;) {
    const page = await call(url, 'GET', `/sessions/${id}/ledger?after_seq=${all.at(-1)?.seq ?? 0}&limit=1000`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    all.push(...(page.body.events as Envelope[]));
    if (!page.body.has_more) return all;
  }
}

const withoutDeltas = (envs: Envelope[]): Envelope[] => envs.filter((e) => e.payload.type !== 'text_delta');

for (const backend of ['lmdb', 'jsonl', 'sqlite'] as const) {
  describe(`ledger retention (${backend})`, () => {
    it("drops a committed turn's deltas; a replay still gives the same text and final events", async (t) => {
      const chunks = Array.from({ length: 200 }, (_, i) => `w${i} `);
      const app = await startApp(t, [{ text: 'ready' }, { chunks }], { realmBackend: backend });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id as string;
      const live = await openEvents(app.url, id, {}, '?after_seq=0');
      t.after(() => live.close());
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' })).status, 200);
      await live.until((c) => c.envelopes().filter((e) => e.payload.type === 'run_completed').length === 2, 'both turns live');
      const seen = live.envelopes();
      // The first turn was replayed (its delta already gone); the second came live, every delta of it.
      assert.equal(seen.filter((e) => e.payload.type === 'text_delta').length, 200, 'the live subscriber got every delta');

      const stored = await ledgerOf(app.url, id);
      assert.deepEqual(
        stored.filter((e) => e.payload.type === 'text_delta'),
        [],
        'no delta left in the ledger',
      );
      assert.deepEqual(stored, withoutDeltas(seen), 'every other event kept, same seqs');
      const complete = stored.filter((e) => e.payload.type === 'text_complete').at(-1)!;
      assert.equal(JSON.stringify(complete.payload).includes(chunks.join('')), true, 'text_complete carries the whole text');

      // A reconnect from inside the dropped deltas of the second turn: the same text and final events.
      const midDelta = seen.filter((e) => e.payload.type === 'text_delta')[50].seq;
      const again = await openEvents(app.url, id, { 'Last-Event-ID': String(midDelta) });
      t.after(() => again.close());
      const rest = withoutDeltas(seen).filter((e) => e.seq > midDelta);
      await again.until((c) => c.envelopes().length === rest.length, 'the replay');
      assert.deepEqual(again.envelopes(), rest);
      assert.equal(again.frames.filter((f) => f.event === 'stream_truncated').length, 0);
    });

    it('prunes seqs beyond max_entries_per_session; a replay of a pruned range gets stream_truncated, then the rest', async (t) => {
      const app = await startApp(t, [], { realmBackend: backend, config: { ledger: { max_entries_per_session: 12 } } });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'p0' })).body.session_id as string;
      for (let i = 1; i <= 4; i++)
        assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `p${i}` })).status, 200);
      const stored = await ledgerOf(app.url, id);
      const first = stored[0].seq;
      const last = stored.at(-1)!.seq;
      assert.ok(first > 1, 'the oldest seqs were pruned');
      assert.ok(last - first < 12 + 3, `at most about 12 seqs kept (${first}..${last})`);
      assert.equal(stored.at(-1)!.payload.type, 'run_completed');

      const replay = await openEvents(app.url, id, { 'Last-Event-ID': '0' });
      t.after(() => replay.close());
      await replay.until((c) => c.envelopes().length === stored.length, 'the retained tail');
      const marker = replay.frames.find((f) => f.event === 'stream_truncated');
      assert.ok(marker, 'a stream_truncated marker');
      assert.deepEqual(JSON.parse(marker.data).reason, { kind: 'ledger_pruned', requested_after_seq: 0, first_retained_seq: first });
      assert.ok(replay.frames.indexOf(marker) < replay.frames.findIndex((f) => f.id !== undefined), 'the marker comes first');
      assert.deepEqual(replay.envelopes(), stored);
      // The session keeps working and history is untouched by ledger retention.
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 10);
    });
  });
}

describe('ledger age retention', () => {
  it('cuts at the newest entry older than max_age_days, never at the last seq', async () => {
    const store = createMemoryStore();
    const day = 86_400_000;
    const now = 100 * day;
    const entries = [1, 2, 3, 4, 5].map((seq) => ({ seq, kind: 'turn_completed', timestamp_ms: now - (6 - seq) * day, payload: {} }));
    await store.commit([{ op: 'appendLedger', sessionId: 's', entries }]);
    const cfg = (over: object) => ({ ...validateConfig({}).ledger, max_entries_per_session: 0, ...over });
    assert.equal(await retentionCut(store, 's', 5, cfg({ max_age_days: 3.5 }), now), 2, 'seqs 1-2 are older than 3.5 days');
    assert.equal(await retentionCut(store, 's', 5, cfg({ max_age_days: 0.5 }), now), 4, 'never the last seq');
    assert.equal(await retentionCut(store, 's', 5, cfg({ max_age_days: 10 }), now), undefined);
    assert.equal(await retentionCut(store, 's', 5, cfg({ max_age_days: 0 }), now), undefined, '0 disables');
    assert.equal(await retentionCut(store, 's', 5, cfg({ max_entries_per_session: 2 }), now), 3);
  });
});
