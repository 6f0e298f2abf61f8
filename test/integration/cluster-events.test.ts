// test/integration/cluster-events.test.ts: event streams of a session hosted by another node, served from
// the shared ledger (actors/cluster/ledger-tail.ts), on one embedded PostgreSQL realm. In-process nodes:
// the stream on a non-owner starts with session_loaded, carries every committed event of turns running on
// the owner in seq order (run_started ... run_completed), a Last-Event-ID reconnect there during a turn
// replays without gap or duplicate, heartbeats flow, an archive ends it, and the node's shutdown sends
// `done`; a stalled subscriber there gets stream_truncated (stream_lagged) with the exact count it missed
// and keeps the last 256 entries, while a reading one gets every event. Real processes: the node hosting
// the session is killed with SIGKILL mid-turn, another node takes the session over, and a subscriber on a
// third node keeps receiving the new owner's events on the same connection. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, createSession, startApp, startClusterNode, type TestApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { request } from '../helpers/durability-tools.ts';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { openEvents, kindsOf, seqsOf, walkLagged, type SseClient } from '../helpers/sse-client.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { SUBSCRIBER_BUFFER, sseDefaults } from '../../http/sse.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { Script, ScriptedReply } from '../../providers/scripted.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const pgServer = await testPostgres();
const LEASE_MS = 1500;

async function node(t: TestContext, url: string, script: Script = []): Promise<TestApp> {
  return startClusterNode(t, url, { script, cluster: { lease_ms: LEASE_MS, tail_poll_ms: 50 } });
}

/** Strictly increasing, hence no duplicate. */
function increasing(seqs: number[]): boolean {
  return seqs.every((s, i) => i === 0 || s > seqs[i - 1]);
}

const completions = (c: SseClient): number => kindsOf(c.envelopes()).filter((k) => k === 'run_completed').length;

if (!pgServer.ok) {
  describe('cluster events', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('event streams of a session hosted by another node', () => {
    it('come from the shared ledger: session_loaded first, committed events in order, gap-free replay, heartbeats, archive and shutdown', async (t) => {
      const savedHeartbeat = sseDefaults.heartbeatMs;
      sseDefaults.heartbeatMs = 100;
      t.after(() => {
        sseDefaults.heartbeatMs = savedHeartbeat;
      });
      const url = await server.createDatabase();
      const gate = deferred();
      const entered = deferred();
      // Call 2 (the second turn) waits for the gate; every reply streams three deltas.
      const script = (req: ProviderRequest, i: number): ScriptedReply => {
        const last = [...req.messages].reverse().find((m) => m.role === 'user');
        const text = typeof last?.content === 'string' ? last.content : 'x';
        if (i === 2) {
          entered.resolve();
          return { chunks: ['held ', 'then ', text], waitFor: gate.promise };
        }
        return { chunks: ['one ', 'two ', text] };
      };
      const a = await node(t, url, script);
      const b = await node(t, url);
      const id = await createSession(a.url, { prompt: 'first' });
      const ledgerBefore = await call(a.url, 'GET', `/sessions/${id}/ledger`);
      assert.equal(ledgerBefore.status, 200);

      const sse = await openEvents(b.url, id);
      t.after(() => sse.close());
      assert.equal(sse.status, 200);
      await sse.until((c) => c.frames.length >= 1, 'session_loaded');
      assert.equal(sse.frames[0].event, 'session_loaded');
      const loaded = JSON.parse(sse.frames[0].data);
      assert.equal(loaded.session_id, id);
      assert.equal(loaded.message_count, 2);
      assert.equal(loaded.last_seq, ledgerBefore.body.last_seq);
      await sse.until((c) => c.comments.some((x) => x.includes('heartbeat')), 'a heartbeat on the remote stream');

      // Turn 1 runs on A: B's stream carries its committed events, in order, after session_loaded.
      const one = await call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'second' });
      assert.equal(one.status, 200, JSON.stringify(one.body));
      await sse.until((c) => completions(c) === 1, 'run_completed of turn 1 on B');
      const kinds = kindsOf(sse.envelopes());
      for (const k of ['run_started', 'turn_started', 'text_complete', 'turn_completed', 'run_completed'])
        assert.ok(kinds.includes(k), `${k} in ${kinds}`);
      assert.ok(kinds.indexOf('run_started') < kinds.indexOf('run_completed'));
      assert.ok(increasing(seqsOf(sse.envelopes())));
      assert.ok(sse.envelopes()[0].seq > loaded.last_seq);
      const mid = sse.envelopes().at(-1)!.seq;

      // Turn 2 is held mid-way; a reconnect on B from the middle of turn 1 replays, then goes live.
      const two = call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'third' });
      await entered.promise;
      await sse.until((c) => kindsOf(c.envelopes()).filter((k) => k === 'run_started').length === 2, 'run_started of turn 2 on B');
      const from = sse.envelopes()[Math.floor(sse.envelopes().length / 2)].seq;
      const replay = await openEvents(b.url, id, { 'last-event-id': String(from) });
      t.after(() => replay.close());
      await replay.until((c) => kindsOf(c.envelopes()).includes('run_started'), 'the replayed run_started of turn 2');
      gate.resolve();
      assert.equal((await two).status, 200);
      await sse.until((c) => completions(c) === 2, 'run_completed of turn 2 on B');
      const end = sse.envelopes().at(-1)!.seq;
      await replay.until((c) => c.envelopes().some((e) => e.seq === end), 'run_completed of turn 2 on the replayed stream');
      const replayed = seqsOf(replay.envelopes());
      assert.ok(increasing(replayed), `replayed ${replayed}`);
      assert.ok(replayed[0] > from);
      const ledger = await call(b.url, 'GET', `/sessions/${id}/ledger?after_seq=${from}`);
      assert.equal(ledger.status, 200);
      // Every committed event after the reconnect point arrived (deltas the commit dropped may come too).
      const committed = (ledger.body.events as Array<{ seq: number }>).map((e) => e.seq);
      for (const s of committed) assert.ok(replayed.includes(s), `seq ${s} missing from the replayed stream ${replayed}`);
      for (const s of committed.filter((x) => x > mid))
        assert.ok(seqsOf(sse.envelopes()).includes(s), `seq ${s} missing from the live stream`);
      assert.equal(sse.frames.filter((f) => f.event === 'session_loaded').length, 1);

      // Archiving (on the owner) ends the remote stream with done.
      const archived = await call(b.url, 'DELETE', `/sessions/${id}`);
      assert.equal(archived.status, 200, JSON.stringify(archived.body));
      await replay.until((c) => c.ended, "the archived session's stream to end");
      assert.equal(replay.frames.at(-1)!.event, 'done');
      assert.equal((await call(b.url, 'GET', `/sessions/${id}/events`)).status, 404);

      // B's shutdown ends its remote streams with done.
      const id2 = await createSession(a.url, { prompt: 'another' });
      const last = await openEvents(b.url, id2);
      t.after(() => last.close());
      await last.until((c) => c.frames.length >= 1, 'session_loaded of the second session');
      await b.close();
      await last.until((c) => c.ended, 'the stream to end at shutdown');
      assert.equal(last.frames.at(-1)!.event, 'done');
    });
  });

  describe('a stalled subscriber of a session hosted by another node', () => {
    it(
      'gets stream_truncated with the exact count it missed and the last 256 entries; a reading one gets everything',
      { timeout: SLOW_TEST_MS },
      async (t) => {
        const url = await server.createDatabase();
        // ~4 KB per event, ~12 MB per turn: far more than the loopback buffers of a reader that stopped.
        // The deltas stay in the ledger (keep_text_deltas), so the tail reads every one of them.
        const chunks = Array.from({ length: 3000 }, (_, i) => `${i}:${'x'.repeat(4096)}`);
        const env = { ...process.env, WARREN_DATABASE_URL: url };
        const config = { cluster: { lease_ms: LEASE_MS, tail_poll_ms: 50 }, ledger: { keep_text_deltas: true } };
        const a = await startApp(t, [{ text: 'ready' }, { chunks }], { realmBackend: 'postgres', env, config });
        const b = await startApp(t, [], { realmBackend: 'postgres', env, config });
        const id = await createSession(a.url, { prompt: 'hi' });
        const reader = await openEvents(b.url, id);
        const stalled = await openEvents(b.url, id);
        t.after(() => {
          reader.close();
          stalled.close();
        });
        stalled.pause();
        await reader.until((c) => c.frames.length >= 1, 'session_loaded');
        const first = JSON.parse(reader.frames[0].data).last_seq + 1;
        assert.equal((await call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flood' })).status, 200);
        await reader.untilEvent('run_completed', 120_000);
        const total = chunks.length + 5;
        const rw = walkLagged(reader, first);
        assert.equal(rw.dropped, 0, `the reading subscriber lagged: ${rw.markers} marker(s), ${rw.dropped} dropped`);
        assert.equal(rw.received, total, 'the reading subscriber got every event in order');

        const before = stalled.frames.length;
        stalled.resume();
        await stalled.untilEvent('run_completed', 120_000);
        const w = walkLagged(stalled, first);
        assert.ok(before < total, 'the stalled reader had not seen the turn before it resumed');
        assert.ok(w.markers >= 1, 'the stalled subscriber lagged');
        assert.equal(w.received + w.dropped, total, 'dropped + received == committed');
        assert.equal(w.tail, SUBSCRIBER_BUFFER);
        t.diagnostic(`stalled got ${w.received}, dropped ${w.dropped} in ${w.markers} marker(s)`);
      },
    );
  });

  describe('an event stream on a third node across a SIGKILL of the owner', () => {
    it("keeps receiving the new owner's events on the same connection", { timeout: 120_000 }, async (t) => {
      const url = await server.createDatabase('warren_events_kill');
      const dir = await tmpDir('warren-cluster-events-');
      t.after(() => dir.cleanup());
      const realm = 'cluster';
      // Each process answers from the same list: the owner's third model call (the turn in flight when it
      // is killed) never answers; every other reply is immediate.
      const replies = Array.from({ length: 50 }, (_, i) =>
        i === 2 ? { chunks: ['never ', 'sent'], delay_ms: 600_000 } : { chunks: [`r${i} `, 'done'] },
      );
      await writeRealmConfig(dir.path, realm, { cluster: { lease_ms: LEASE_MS, tail_poll_ms: 50 }, providers: { scripted: { replies } } });
      const env = { ...process.env, WARREN_DATABASE_URL: url };
      const start = (): Promise<ServerProcess> => startServerProcess({ stateRoot: dir.path, realm, backend: 'postgres', env, t });
      const [owner, taker, watcher] = [await start(), await start(), await start()];

      const created = await request(owner.url, 'POST', '/sessions', { prompt: 'p0', provider: 'scripted' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id: string = created.body.session_id;
      const sse = await openEvents(watcher.url, id);
      t.after(() => sse.close());
      await sse.until((c) => c.frames.length >= 1, 'session_loaded');
      const before = await request(owner.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'p1' });
      assert.equal(before.status, 200, JSON.stringify(before.body));
      await sse.until((c) => completions(c) === 1, "the owner's run_completed on the watcher", 30_000);

      // A turn in flight on the owner (the watcher has its run_started), then the owner is killed.
      const inflight = request(owner.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'p-lost' }).catch(
        () => 'down' as const,
      );
      await sse.until(
        (c) => kindsOf(c.envelopes()).filter((k) => k === 'run_started').length === 2,
        "the in-flight turn's run_started",
        30_000,
      );
      await owner.kill('SIGKILL');
      assert.equal(await inflight, 'down');
      // The survivor reached first takes the session over once the dead owner's lease expired.
      const after = await request(taker.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'p2' });
      assert.equal(after.status, 200, JSON.stringify(after.body));
      const info = await request(taker.url, 'GET', '/runtime/host_info');
      assert.ok(info.body.cluster.lease_takeovers >= 1, JSON.stringify(info.body.cluster));
      await sse.until((c) => completions(c) === 2, "the new owner's run_completed on the same connection", 30_000);
      assert.equal(sse.ended, false);
      assert.equal(sse.frames.filter((f) => f.event === 'session_loaded').length, 1);
      const seqs = seqsOf(sse.envelopes());
      assert.ok(increasing(seqs), `seqs ${seqs}`);
      const kinds = kindsOf(sse.envelopes());
      assert.equal(kinds.filter((k) => k === 'run_started').length, 3, `kinds ${kinds}`);
      // The lost turn never committed: the history holds p0, p1 and p2 only.
      const history = await request(watcher.url, 'GET', `/sessions/${id}/history`);
      assert.equal(history.status, 200);
      const users = (history.body.messages as Array<{ role: string; content: unknown }>)
        .filter((m) => m.role === 'user')
        .map((m) => m.content);
      assert.deepEqual(users, ['p0', 'p1', 'p2']);
    });
  });
}
