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
import { poll } from '../helpers/wait.ts';

const pgServer = await testPostgres();

async function node(t: TestContext, url: string, idleEvictMs?: number): Promise<TestApp> {
  return startClusterNode(t, url, idleEvictMs ? { idleEvictMs } : {});
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!pgServer.ok) {
  describe('mob hosts on a cluster', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('mob hosts on a cluster', () => {
    it('lists each node holding member sessions, from the session leases', async (t) => {
      const url = await server.createDatabase();
      // B first: A's first heartbeat then already lists B among its peers. B evicts sessions idle for 1.5 s
      // (long enough that the lease count below is read before either member session can go).
      const b = await node(t, url, 1500);
      const a = await node(t, url);
      const bInfo = (await call(b.url, 'GET', '/runtime/host_info')).body;
      const aNode = (await call(a.url, 'GET', '/runtime/host_info')).body.cluster.node_id;

      await rpcOk(b.url, 'mob/create', { mob_id: 'x', definition: { members: [{ agent_identity: 'on-b' }, { agent_identity: 'moved' }] } });
      await call(b.url, 'POST', '/mob/x/wait-kickoff');
      // B's leases with both member sessions still resident (read first thing after the kickoffs).
      const sessionLeases = async (): Promise<number> =>
        (await call(b.url, 'GET', '/runtime/host_info')).body.cluster.leases_held as number;
      const before = await sessionLeases();
      const sessionOf = async (member: string): Promise<string> => {
        const st = await call(b.url, 'GET', `/mob/x/members/${member}/status`);
        assert.equal(st.status, 200, JSON.stringify(st.body));
        return st.body.session_id as string;
      };
      const moved = await sessionOf('moved');
      const onB = await sessionOf('on-b');
      assert.equal(a.provider.requests.length, 0, "both kickoffs ran on B, the mob's node");

      // Wait until B evicted both idle member sessions (their leases released), without touching them.
      const deadline = Date.now() + 60_000;
      while ((await sessionLeases()) > before - 2) {
        assert.ok(Date.now() < deadline, 'B never evicted the idle member sessions');
        await sleep(200);
      }
      // A serves `moved` (taking its free lease); B serves `on-b` again.
      assert.equal((await call(a.url, 'GET', `/sessions/${moved}/status`)).status, 200);
      assert.equal((await call(b.url, 'GET', `/sessions/${onB}/status`)).status, 200);

      // The list follows the leases and the nodes' heartbeats, which a loaded machine may deliver late: asked
      // until both hosts appear (bounded; the last answer is the failure's detail).
      let last: unknown;
      const hosts = await poll(
        'B to list both nodes as mob hosts',
        async () => {
          const res = await call(b.url, 'GET', '/mob/x/hosts');
          last = res.body;
          assert.equal(res.status, 200, JSON.stringify(res.body));
          return res.body.hosts.length === 2 && res;
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
