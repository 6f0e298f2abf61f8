// test/integration/mob-cluster-hosts.test.ts: GET /mob/{id}/hosts on a cluster of two nodes (in-process
// apps on one embedded PostgreSQL realm). A mob is leased to one node (B here); its members are sessions,
// placed where their sessions' leases are. B evicts idle sessions quickly (releasing their leases), so a
// member's session that node A then serves moves to A while the mob stays on B. B's hosts route lists
// itself (controlling, under its /runtime/host_info host id) with the member whose session it holds, and
// node A (its node id, URL, reachability, heartbeat) with the member whose session A holds. Skips, saying
// why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, startClusterNode, type TestApp } from '../helpers/app.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { poll, SLOW_TEST_MS } from '../helpers/wait.ts';

const pgServer = await testPostgres();

/**
 * No node dies here, so nothing waits for a lease to run out: the production term (5 s) instead of the tests'
 * 1.5 s, which a node stalled on a loaded machine can miss renewing; the other node's orphan sweep then takes
 * the mob over (its create failing CONFLICT on the mob's lease, or B left holding no mob).
 */
const LEASE_MS = 5000;

async function node(t: TestContext, url: string, idleEvictMs?: number): Promise<TestApp> {
  return startClusterNode(t, url, { cluster: { lease_ms: LEASE_MS }, ...(idleEvictMs ? { idleEvictMs } : {}) });
}

if (!pgServer.ok) {
  describe('mob hosts on a cluster', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('mob hosts on a cluster', () => {
    it('lists each node holding member sessions, from the session leases', { timeout: SLOW_TEST_MS }, async (t) => {
      const url = await server.createDatabase();
      // B first: A's first heartbeat then already lists B among its peers. B evicts sessions idle for 1.5 s.
      const b = await node(t, url, 1500);
      const a = await node(t, url);
      const bInfo = (await call(b.url, 'GET', '/runtime/host_info')).body;
      const aNode = (await call(a.url, 'GET', '/runtime/host_info')).body.cluster.node_id;

      // B's leases: the ones it held before the mob (none expected), then the mob's own once it exists.
      const leasesHeld = async (app: TestApp): Promise<number> =>
        (await call(app.url, 'GET', '/runtime/host_info')).body.cluster.leases_held as number;
      const mobOnly = (await leasesHeld(b)) + 1;
      await rpcOk(b.url, 'mob/create', { mob_id: 'x', definition: { members: [{ agent_identity: 'on-b' }, { agent_identity: 'moved' }] } });
      await call(b.url, 'POST', '/mob/x/wait-kickoff');
      const sessionOf = async (member: string): Promise<string> => {
        const st = await call(b.url, 'GET', `/mob/x/members/${member}/status`);
        assert.equal(st.status, 200, JSON.stringify(st.body));
        return st.body.session_id as string;
      };
      const moved = await sessionOf('moved');
      const onB = await sessionOf('on-b');
      assert.equal(a.provider.requests.length, 0, "both kickoffs ran on B, the mob's node");

      // B evicts both idle member sessions (without being touched), releasing their leases: it then holds the
      // mob's lease alone.
      let bCluster: unknown;
      const bLetGo = (): Promise<true> =>
        poll(
          `B to evict the idle member sessions and release their leases (holding ${mobOnly})`,
          async () => {
            bCluster = (await call(b.url, 'GET', '/runtime/host_info')).body.cluster;
            return (bCluster as { leases_held: number }).leases_held === mobOnly;
          },
          { timeoutMs: 20_000, intervalMs: 200, detail: () => JSON.stringify(bCluster) },
        );
      await bLetGo();
      // A serves `moved`, taking its free lease. B's count drops when it lets a lease go, a moment before its
      // release lands in the database: a request A routes in that moment still finds the lease B's and is
      // forwarded to B, which serves it and holds the session again until it idles out once more. So A is
      // asked again, after B let go again, until A holds the lease itself (bounded).
      await poll(
        'A to serve `moved` itself (holding its lease)',
        async () => {
          await bLetGo();
          assert.equal((await call(a.url, 'GET', `/sessions/${moved}/status`)).status, 200);
          return (await leasesHeld(a)) === 1;
        },
        { timeoutMs: 20_000, intervalMs: 0 },
      );
      // B serves `on-b` again.
      assert.equal((await call(b.url, 'GET', `/sessions/${onB}/status`)).status, 200);

      // The list follows the leases and the nodes' heartbeats, which a loaded machine may deliver late: asked
      // until both hosts appear, A among B's live peers (bounded; the last answer is the failure's detail).
      let last: unknown;
      const hosts = await poll(
        'B to list both nodes as mob hosts, A reachable',
        async () => {
          const res = await call(b.url, 'GET', '/mob/x/hosts');
          last = res.body;
          assert.equal(res.status, 200, JSON.stringify(res.body));
          const hosts = res.body.hosts as Array<{ controlling: boolean; control_reachability: string }>;
          return hosts.length === 2 && hosts.every((h) => h.control_reachability === 'reachable') && res;
        },
        { timeoutMs: 20_000, intervalMs: 250, detail: () => JSON.stringify(last) },
      );
      const byId = new Map(hosts.body.hosts.map((h: { host_id: string }) => [h.host_id, h]));
      assert.equal(byId.size, 2, JSON.stringify(hosts.body));
      const here = byId.get(bInfo.host_id) as Record<string, unknown>;
      assert.ok(here, JSON.stringify(hosts.body));
      assert.equal(here.controlling, true);
      assert.equal(here.node_id, bInfo.cluster.node_id);
      assert.deepEqual(here.members, ['on-b']);
      assert.equal(here.materialized_member_count, 1);
      const there = byId.get(`cluster-node:${aNode}`) as Record<string, unknown>;
      assert.ok(there, JSON.stringify(hosts.body));
      assert.equal(there.controlling, false);
      assert.equal(there.node_id, aNode);
      assert.equal(there.endpoint, a.url);
      assert.equal(there.bind_phase, 'bound');
      assert.equal(there.control_reachability, 'reachable');
      assert.equal(typeof there.last_seen_ms, 'number');
      assert.deepEqual(there.members, ['moved']);
      assert.equal(there.materialized_member_count, 1);

      // The same answer through A: the mob's routes are forwarded to B, the node holding its lease.
      const viaA = await call(a.url, 'GET', '/mob/x/hosts');
      assert.equal(viaA.status, 200);
      assert.equal(viaA.body.hosts.length, 2);
    });
  });
}
