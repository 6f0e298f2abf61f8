// test/integration/cluster.test.ts: two Warren nodes (in-process apps) on one embedded PostgreSQL realm.
// A session lives on one node at a time: requests reaching the other node are forwarded to its owner (turns,
// reads); SSE on the other node (with Last-Event-ID replay) streams the shared ledger; host_info and health report node, peers and database, /metrics
// counts forwards; a node that leaves hands its sessions over; a commit from a node whose lease was taken
// over is refused by its fencing token. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, createSession, startClusterNode, type TestApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type Script, type ScriptedReply } from '../../providers/scripted.ts';
import { openEvents, kindsOf } from '../helpers/sse-client.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import type { TestContext } from 'node:test';

const pgServer = await testPostgres();

/** A script whose calls numbered in `at` hang until their turn is interrupted or cancelled. */
function stuckAt(...at: number[]) {
  const entered = at.map(() => deferred());
  const never = new Promise<void>(() => {});
  const script = (req: ProviderRequest, i: number): ScriptedReply => {
    const k = at.indexOf(i);
    if (k < 0) return echoReply(req);
    entered[k].resolve();
    return { text: 'never sent', waitFor: never };
  };
  return { entered, script };
}

async function node(t: TestContext, url: string, config: Record<string, unknown> = {}, script: Script = []): Promise<TestApp> {
  return startClusterNode(t, url, { script, config });
}

if (!pgServer.ok) {
  describe('cluster', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('cluster of two nodes on one postgres realm', () => {
    it("forwards a session's turns, reads and events to its owner and reports the cluster", async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url);
      const b = await node(t, url);
      const id = await createSession(a.url, { prompt: 'first' });
      // B does not own the session: the turn runs on A, the answer comes back through B.
      const turn = await call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'second' });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(turn.body.text, 'echo: second');
      assert.equal(a.provider.requests.length, 2);
      assert.equal(b.provider.requests.length, 0);
      const history = await call(b.url, 'GET', `/sessions/${id}/history`);
      assert.equal(history.status, 200);
      assert.equal(history.body.messages.length, 4);
      // Listing reads the database on any node.
      const listed = await call(b.url, 'GET', '/sessions');
      assert.deepEqual(
        listed.body.sessions.map((s: { session_id: string }) => s.session_id),
        [id],
      );

      // SSE on B sees a turn running on A, and a reconnect with Last-Event-ID replays from B.
      const sse = await openEvents(b.url, id);
      t.after(() => sse.close());
      await call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'third' });
      await sse.until((c) => kindsOf(c.envelopes()).includes('run_completed'), 'run_completed through B');
      const envs = sse.envelopes();
      const mid = envs[Math.floor(envs.length / 2)].seq;
      const replay = await openEvents(b.url, id, { 'last-event-id': String(mid) });
      t.after(() => replay.close());
      await replay.until((c) => c.envelopes().some((e) => e.seq === envs.at(-1)!.seq), 'replay up to the last seq');
      // The ledger keeps a committed turn's text_complete, not its deltas: the replay is the live stream's durable part.
      const replayed = replay
        .envelopes()
        .map((e) => e.seq)
        .filter((s) => s <= envs.at(-1)!.seq);
      assert.ok(
        replayed.every((s, i) => s > mid && (i === 0 || s > replayed[i - 1]) && envs.some((e) => e.seq === s)),
        `replayed ${replayed}`,
      );
      assert.equal(replayed.at(-1), envs.at(-1)!.seq);

      const info = await call(b.url, 'GET', '/runtime/host_info');
      assert.equal(info.status, 200);
      assert.equal(info.body.realm.backend, 'postgres');
      assert.equal(info.body.cluster.database.state, 'ok');
      // The turn and the history read were forwarded; the event streams were served from the ledger on B.
      assert.ok(info.body.cluster.forwarded_requests >= 2);
      assert.doesNotMatch(info.body.cluster.database.url, /warren-test-pw/);
      const health = await call(a.url, 'GET', '/runtime/health');
      assert.equal(health.body.checks.cluster_database, 'ok');
      assert.ok(health.body.cluster.leases_held >= 1);
      const metrics = await fetch(`${b.url}/metrics`).then((r) => r.text());
      assert.match(metrics, /warren_cluster_forwarded_requests_total [1-9]/);
      assert.match(metrics, /warren_cluster_lease_takeovers_total 0/);
    });

    it('forwards an interrupt and a request cancel to the node running the turn', async (t) => {
      const url = await server.createDatabase();
      const g = stuckAt(1, 2);
      const a = await node(t, url, {}, g.script);
      const b = await node(t, url);
      const id = await createSession(a.url);
      // Cancel by request id through B: B does not know the id and asks its peers.
      const turn = call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x' }, { 'x-warren-request-id': 'job-c1' });
      await g.entered[0].promise;
      const cancel = await call(b.url, 'POST', '/requests/job-c1/cancel');
      assert.equal(cancel.status, 200, JSON.stringify(cancel.body));
      assert.equal(cancel.body.cancelled, true);
      assert.equal((await turn).status, 499);
      assert.equal((await call(b.url, 'POST', '/requests/never-seen/cancel')).status, 404);

      // Interrupt through B of a turn running on A (started through B as well).
      const turn2 = call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'y' });
      await g.entered[1].promise;
      assert.equal((await call(b.url, 'GET', `/sessions/${id}/status`)).body.state, 'running');
      const interrupt = await call(b.url, 'POST', `/sessions/${id}/interrupt`);
      assert.equal(interrupt.status, 200, JSON.stringify(interrupt.body));
      assert.equal((await turn2).status, 499);
      assert.equal((await call(b.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    });

    it('hands sessions over when their node leaves, and redacts the database URL in GET /config', async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url, { storage: { postgres_url: 'postgres://warren:s3cret@db.example:5432/w' } });
      const b = await node(t, url);
      const id = await createSession(a.url, { prompt: 'one' });
      const cfg = await call(a.url, 'GET', '/config');
      assert.equal(cfg.body.config.storage.postgres_url, 'postgres://warren:***@db.example:5432/w');
      assert.equal(cfg.body.backend, 'postgres');
      // Writing back what GET /config showed keeps the stored URL, not the redacted one.
      const put = await call(a.url, 'PUT', '/config', { config: cfg.body.config, expected_generation: cfg.body.generation });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      assert.equal(put.body.config.storage.postgres_url, 'postgres://warren:***@db.example:5432/w');
      assert.match(await readFile(join(a.stateRoot, 'test-realm', 'config.toml'), 'utf8'), /warren:s3cret@db\.example/);
      await a.close();
      const turn = await call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(b.provider.requests.length, 1);
      const history = await call(b.url, 'GET', `/sessions/${id}/history`);
      assert.equal(history.body.messages.length, 4);
    });
  });
}
