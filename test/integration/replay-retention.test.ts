// Turn recordings follow the ledger's retention (`[ledger]` max_entries_per_session and max_age_days):
// a turn's recording goes in the commit that prunes its run_completed event, and the session's marker
// counts the turns that lost theirs. A replay then starts at the oldest recording kept (the history
// before it carried, unchecked, and reported as pruned_turns); a session with no recording left answers
// 409 CONFLICT saying the recordings were pruned (or never made).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ledgerTrimOps } from '../../actors/ledger-retention.ts';
import { RECORDING_PRUNED_NS, recordingNs } from '../../contracts/replay.ts';
import { validateConfig } from '../../config/toml.ts';
import { createMemoryStore } from '../../storage/memory-store.ts';
import type { Store } from '../../storage/store.ts';
import { call, startApp, type TestApp } from '../helpers/app.ts';

async function lines(app: TestApp, id: string): Promise<Array<{ type: string; key?: string; value?: any; entry?: any }>> {
  const text = await (await fetch(`${app.url}/sessions/${id}/export`)).text();
  return text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

async function turns(app: TestApp, id: string, from: number, to: number): Promise<void> {
  for (let i = from; i <= to; i++) {
    const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `p${i}` });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
}

describe('recordings follow the ledger retention', () => {
  for (const backend of ['lmdb', 'sqlite'] as const) {
    it(`${backend}: max_entries_per_session prunes the recordings of turns without events; the replay starts at the oldest kept`, async (t) => {
      const app = await startApp(t, [], { realmBackend: backend, config: { ledger: { max_entries_per_session: 12 } } });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: 'p0', system_prompt: 'S' })).body.session_id as string;
      await turns(app, id, 1, 6);
      const file = await lines(app, id);
      const recordings = file.filter((l) => l.type === 'recording');
      const marker = file.find((l) => l.type === 'recording_pruned')?.value;
      assert.ok(recordings.length < 7 && recordings.length > 0, `some recordings pruned (${recordings.length} of 7 kept)`);
      assert.equal(marker?.turns, 7 - recordings.length, 'the marker counts them');
      // Every turn whose run_completed is kept keeps its recording; those kept are the newest turns.
      const kept = recordings.map((r) => r.value.input.prompt as string);
      const completed = file.filter((l) => l.type === 'ledger' && l.entry.payload.type === 'run_completed').length;
      assert.ok(kept.length >= completed, `${kept.length} recordings kept, ${completed} turns with run_completed kept`);
      assert.deepEqual(kept, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6'].slice(7 - kept.length), 'the oldest went first');

      const calls = app.provider.requests.length;
      const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.status, 'identical', JSON.stringify(res.body));
      assert.equal(res.body.turns, kept.length);
      assert.equal(res.body.unrecorded_turns, marker.turns);
      assert.equal(res.body.pruned_turns, marker.turns);
      assert.equal(app.provider.requests.length, calls, 'no model call');
      const history = async (s: string) =>
        ((await call(app.url, 'GET', `/sessions/${s}/history?limit=1000`)).body.messages as object[]).map((m) => ({
          ...m,
          created_at: undefined,
        }));
      assert.deepEqual(await history(res.body.replay_session_id), await history(id), 'the pruned turns carried as history');

      // A fork keeps the marker of the turns it holds, and the export carries it to another realm.
      const f = await call(app.url, 'POST', `/sessions/${id}/fork`, { at_turn: 7 });
      const forked = (await lines(app, f.body.session_id)).find((l) => l.type === 'recording_pruned');
      assert.deepEqual(forked?.value, marker);
    });
  }

  it('a session whose recordings are all gone answers 409 CONFLICT naming the retention', async (t) => {
    const app = await startApp(t, [], { config: { ledger: { max_entries_per_session: 8 } } });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'p0' })).body.session_id as string;
    await turns(app, id, 1, 2);
    // Recording switched off: later turns record nothing while retention keeps pruning the old ones.
    assert.equal((await call(app.url, 'PATCH', '/config', { record: { enabled: false } })).status, 200);
    await turns(app, id, 3, 8);
    const file = await lines(app, id);
    assert.equal(file.filter((l) => l.type === 'recording').length, 0, 'no recording left');
    assert.equal(file.find((l) => l.type === 'recording_pruned')?.value.turns, 3);
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(res.status, 409, JSON.stringify(res.body));
    assert.equal(res.body.code, 'CONFLICT');
    assert.match(
      res.body.error,
      /cannot be replayed: none of its 9 turns has a recording left \(\[ledger\] retention removed the recordings of its 3 oldest turns/,
    );
    assert.deepEqual(res.body.details, { session_id: id, reason: 'recording_pruned', turns: 9, recorded_turns: 0, pruned_turns: 3 });
    const async = await call(app.url, 'POST', `/sessions/${id}/replay`, undefined, { prefer: 'respond-async' });
    assert.equal(async.status, 409, 'also before a detached replay starts');

    const never = (await call(app.url, 'POST', '/sessions', { prompt: 'q' })).body.session_id as string;
    const res2 = await call(app.url, 'POST', `/sessions/${never}/replay`);
    assert.equal(res2.status, 409, JSON.stringify(res2.body));
    assert.equal(res2.body.details.reason, 'not_recorded');
    assert.match(res2.body.error, /\[record\] was off/);
  });
});

describe('recording age retention', () => {
  it('max_age_days: the commit that prunes a turn’s run_completed removes its recording; a memo skips the listing after', async () => {
    const store = createMemoryStore();
    // A store that says it is persistent (the memory store prunes nothing otherwise) and counts listings.
    let listings = 0;
    const counted: Store = {
      ...store,
      persistent: true,
      backend: store.backend,
      listRecords: (ns) => {
        listings++;
        return store.listRecords(ns);
      },
      readLedger: (...a) => store.readLedger(...a),
      getRecord: (...a) => store.getRecord(...a),
    };
    const day = 86_400_000;
    const now = 100 * day;
    // Five turns a day apart (two events each), each with its recording.
    const ops: Parameters<Store['commit']>[0] = [];
    for (let i = 0; i < 5; i++) {
      const start = now - (5 - i) * day;
      ops.push({
        op: 'appendLedger',
        sessionId: 's',
        entries: [
          { seq: 2 * i + 1, kind: 'run_started', timestamp_ms: start, payload: {} },
          { seq: 2 * i + 2, kind: 'run_completed', timestamp_ms: start + 1000, payload: {} },
        ],
      });
      const value = {
        v: 1,
        started_at_ms: start,
        request_id: `r${i}`,
        at_row: 2 * i,
        rows: 2,
        input: { prompt: `p${i}` },
        calls: [],
        tools: [],
      };
      ops.push({ op: 'putRecord', ns: recordingNs('s'), key: `${String(start).padStart(15, '0')}-r${i}`, value });
    }
    await store.commit(ops);
    const cfg = { ...validateConfig({}).ledger, max_entries_per_session: 0, max_age_days: 2.5 };
    const memo = { oldestMs: -Infinity };
    const trim = await ledgerTrimOps(counted, 's', [], 10, cfg, now, memo);
    // Turns 0-2 (5, 4 and 3 days old) lose their events, and their recordings go in the same ops.
    assert.deepEqual(trim[0], { op: 'dropLedger', sessionId: 's', ranges: [[1, 6]] });
    const deleted = trim.filter((o) => o.op === 'deleteRecord').map((o) => (o as { key: string }).key.split('-')[1]);
    assert.deepEqual(deleted, ['r0', 'r1', 'r2']);
    const marker = trim.find((o) => o.op === 'putRecord' && o.ns === RECORDING_PRUNED_NS) as { value: { turns: number } } | undefined;
    assert.equal(marker?.value.turns, 3);
    await store.commit(trim);
    assert.equal(listings, 1);
    // By count: a cut at turn 3's run_started prunes no run_completed (nothing to do); one at its
    // run_completed removes its recording, found from the memo of the first listing (no second listing).
    const byCount = (n: number) => ({ ...cfg, max_age_days: 0, max_entries_per_session: n });
    const trimAt = (n: number) => ledgerTrimOps(counted, 's', [], 10, byCount(n), now, memo);
    assert.deepEqual(await trimAt(3), [{ op: 'dropLedger', sessionId: 's', ranges: [[1, 7]] }]);
    const third = await trimAt(2);
    assert.deepEqual(
      third.filter((o) => o.op === 'deleteRecord').map((o) => (o as { key: string }).key.split('-')[1]),
      ['r3'],
    );
    await store.commit(third);
    assert.equal((await store.getRecord<{ turns: number }>(RECORDING_PRUNED_NS, 's'))?.turns, 4);
    assert.equal(listings, 1, 'the memo of the first listing answered');
    assert.deepEqual(
      (await store.listRecords(recordingNs('s'))).map((r) => r.key.split('-')[1]),
      ['r4'],
    );
  });
});
