// test/integration/mob-cluster-hosts.test.ts: GET /mob/{id}/hosts on a cluster of two nodes (in-process
// apps on one embedded PostgreSQL realm). Members are placed where their sessions' leases are: a mob
// created on node B holds its first member's session on B; a member spawned through node A (which reads
// the shared mob record) has its session on A. A's hosts route lists itself (controlling, under its
// /runtime/host_info host id) and node B (its node id, URL, reachability, heartbeat), each with its own
// members. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { testPostgres } from '../helpers/postgres.ts';

const pgServer = await testPostgres();

async function node(t: TestContext, url: string): Promise<TestApp> {
  return startApp(t, [], { realmBackend: 'postgres', env: { ...process.env, WARREN_DATABASE_URL: url }, config: { cluster: { lease_ms: 1500 } } });
}

if (!pgServer.ok) {
  describe('mob hosts on a cluster', () => {
    it('needs a PostgreSQL server', { skip: `postgres tests skipped: ${pgServer.reason}` }, () => {});
  });
} else {
  const server = pgServer.server;

  describe('mob hosts on a cluster', () => {
    it('lists each node holding member sessions, from the session leases', async (t) => {
      const url = await server.createDatabase();
      // B first: A's first heartbeat then already lists B among its peers.
      const b = await node(t, url);
      const a = await node(t, url);
      const bInfo = (await call(b.url, 'GET', '/runtime/host_info')).body;
      const aInfo = (await call(a.url, 'GET', '/runtime/host_info')).body;
      const bNode = bInfo.cluster.node_id;

      await rpcOk(b.url, 'mob/create', { mob_id: 'x', definition: { members: [{ agent_identity: 'on-b' }] } });
      await call(b.url, 'POST', '/mob/x/wait-kickoff');
      const spawned = await rpcOk(a.url, 'mob/spawn_member', { mob_id: 'x', member: { agent_identity: 'on-a' }, wait: true });
      assert.equal(spawned.kickoff, 'completed');
      assert.equal(a.provider.requests.length, 1, 'the new member\'s kickoff ran on A');

      const hosts = await call(a.url, 'GET', '/mob/x/hosts');
      assert.equal(hosts.status, 200, JSON.stringify(hosts.body));
      const byId = new Map(hosts.body.hosts.map((h: { host_id: string }) => [h.host_id, h]));
      assert.equal(byId.size, 2, JSON.stringify(hosts.body));
      const here = byId.get(aInfo.host_id) as Record<string, unknown>;
      assert.equal(here.controlling, true);
      assert.equal(here.node_id, aInfo.cluster.node_id);
      assert.deepEqual(here.members, ['on-a']);
      assert.equal(here.materialized_member_count, 1);
      const there = byId.get(`cluster-node:${bNode}`) as Record<string, unknown>;
      assert.ok(there, JSON.stringify(hosts.body));
      assert.equal(there.controlling, false);
      assert.equal(there.node_id, bNode);
      assert.equal(there.endpoint, b.url);
      assert.equal(there.bind_phase, 'bound');
      assert.equal(there.control_reachability, 'reachable');
      assert.equal(typeof there.last_seen_ms, 'number');
      assert.deepEqual(there.members, ['on-b']);
      assert.equal(there.materialized_member_count, 1);
    });
  });
}
