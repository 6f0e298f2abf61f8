// test/integration/cluster-race.test.ts: first requests for stored sessions nobody hosts, arriving at the
// same instant on three nodes of one embedded PostgreSQL realm. Each node finds the lease free and claims
// it; one node wins per session and the requests that lost the race are routed to the winner, so the
// client never sees a 503: every status read answers 200, every turn answers 200 and runs once, and each
// session ends up hosted by exactly one node. The same holds for mobs: REST reads of stored mobs nobody
// hosts, on three nodes at once, all answer 200 and each mob ends up on one node. Skips, saying why, where
// PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, createSession, startClusterNode, type TestApp } from '../helpers/app.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';

const pgServer = await testPostgres();
const SESSIONS = 6;
const READS_PER_NODE = 3;
const ROUNDS = 2;

async function node(t: TestContext, url: string): Promise<TestApp> {
  return startClusterNode(t, url, { cluster: { lease_ms: 3000 } });
}

if (!pgServer.ok) {
  describe('cluster claim race', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('concurrent first requests for unowned sessions on three nodes', () => {
    it('route the losers of the lease race to the winner: no 503, one host per session', async (t) => {
      const url = await server.createDatabase();
      for (let round = 0; round < ROUNDS; round++) {
        // A creates the sessions and leaves: they are stored, and nobody holds their leases.
        const creator = await node(t, url);
        const ids: string[] = [];
        for (let i = 0; i < SESSIONS; i++) ids.push(await createSession(creator.url, { prompt: `r${round}-s${i}` }));
        await creator.close();
        const nodes = [await node(t, url), await node(t, url), await node(t, url)];

        const requests: Array<Promise<{ what: string; status: number; body: unknown }>> = [];
        for (const [k, id] of ids.entries()) {
          // One turn per session, through a different node each time, beside the status reads.
          const turnNode = nodes[k % nodes.length];
          requests.push(
            call(turnNode.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `turn-${round}-${k}` }).then((r) => ({
              what: `turn ${id}`,
              status: r.status,
              body: r.body,
            })),
          );
          for (const n of nodes) {
            for (let j = 0; j < READS_PER_NODE; j++) {
              requests.push(
                call(n.url, 'GET', `/sessions/${id}/status`).then((r) => ({ what: `status ${id}`, status: r.status, body: r.body })),
              );
            }
          }
        }
        const replies = await Promise.all(requests);
        const bad = replies.filter((r) => r.status !== 200).map((r) => `${r.what}: ${r.status} ${JSON.stringify(r.body)}`);
        assert.deepEqual(bad, [], `round ${round}`);

        // Each turn ran once, on one node; each session is hosted by exactly one node.
        const provider = nodes.reduce((n, x) => n + x.provider.requests.length, 0);
        assert.equal(provider, SESSIONS);
        const held = await Promise.all(
          nodes.map(async (n) => (await call(n.url, 'GET', '/runtime/host_info')).body.cluster.leases_held as number),
        );
        assert.equal(
          held.reduce((a, b) => a + b, 0),
          SESSIONS,
          `leases held per node: ${held}`,
        );
        for (const id of ids) {
          const history = await call(nodes[0].url, 'GET', `/sessions/${id}/history`);
          assert.equal(history.body.messages.length, 4, JSON.stringify(history.body));
        }
        await Promise.all(nodes.map((n) => n.close()));
      }
    });

    it('route mob requests that lost the race for a free mob lease to the winner: no 503, one host per mob', async (t) => {
      const url = await server.createDatabase();
      // A creates the mobs (no members, so no flow run keeps a lease) and leaves: nobody holds them.
      const creator = await node(t, url);
      const mobs = Array.from({ length: SESSIONS }, (_, i) => `race-${i}`);
      for (const id of mobs) await rpcOk(creator.url, 'mob/create', { mob_id: id });
      await creator.close();
      const nodes = [await node(t, url), await node(t, url), await node(t, url)];
      const requests: Array<Promise<{ what: string; status: number; body: unknown }>> = [];
      for (const id of mobs) {
        for (const n of nodes) {
          for (let j = 0; j < READS_PER_NODE; j++) {
            requests.push(
              call(n.url, 'GET', `/mob/${id}/route-installs`).then((r) => ({
                what: `route-installs ${id}`,
                status: r.status,
                body: r.body,
              })),
            );
          }
        }
      }
      const replies = await Promise.all(requests);
      const bad = replies.filter((r) => r.status !== 200).map((r) => `${r.what}: ${r.status} ${JSON.stringify(r.body)}`);
      assert.deepEqual(bad, []);
      const held = await Promise.all(
        nodes.map(async (n) => (await call(n.url, 'GET', '/runtime/host_info')).body.cluster.leases_held as number),
      );
      assert.equal(
        held.reduce((a, b) => a + b, 0),
        mobs.length,
        `leases held per node: ${held}`,
      );
    });
  });
}
