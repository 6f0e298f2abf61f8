// test/integration/cluster-mobs.test.ts: mobs on a cluster of Warren nodes sharing one embedded PostgreSQL
// realm. A mob is hosted by one node at a time (its lease): JSON-RPC calls and `/mob/{id}/...` routes that
// reach another node are forwarded to the owner, whose members run the turns; operator grants made or
// revoked through one node apply on every node at once. A node holding a mob killed
// with SIGKILL: once its lease ran out, a survivor serves the mob (its record, members and a member turn)
// and reports the takeover; a flow run that was in flight on the dead node is resumed by a survivor without
// any request (the orphan sweep) and completes once; so does one parked by a node that shut down cleanly. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp, startClusterNode, type TestApp } from '../helpers/app.ts';
import { rpc, rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { bindingScript } from '../helpers/binding-driver.ts';
import { deferred } from '../helpers/gates.ts';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { openPostgresStore } from '../../storage/postgres-store.ts';
import type { TestContext } from 'node:test';

const pgServer = await testPostgres();
const LEASE_MS = 1500;
/** Hang guard only (two process starts and member turns can take long on a loaded 2-core machine). */
const GUARD_MS = 90_000;

async function node(t: TestContext, url: string, script: Parameters<typeof startApp>[1] = []): Promise<TestApp> {
  return startClusterNode(t, url, { script, cluster: { lease_ms: LEASE_MS } });
}

if (!pgServer.ok) {
  describe('cluster mobs', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('mobs on a cluster of nodes sharing one postgres realm', () => {
    it("forwards a mob's calls and routes to the node holding its lease", async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url);
      const b = await node(t, url);
      await rpcOk(a.url, 'mob/create', { mob_id: 'team', definition: TEAM });
      const kicked = await call(b.url, 'POST', '/mob/team/wait-kickoff');
      assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
      assert.deepEqual(
        kicked.body.members.map((m: { kickoff: string }) => m.kickoff),
        ['completed', 'completed', 'completed'],
      );
      const before = a.provider.requests.length;
      // Through B: the member turn runs on A (B's provider is never asked), the answer comes back through B.
      const reply = await rpcOk(b.url, 'mob/send_message', { mob_id: 'team', agent_identity: 'writer', prompt: 'via b' });
      assert.equal(reply.text, 'echo: via b');
      assert.equal(a.provider.requests.length, before + 1);
      assert.equal(b.provider.requests.length, 0);
      const got = await rpcOk(b.url, 'mob/get', { mob_id: 'team' });
      assert.equal(got.state, 'running');
      const status = await call(b.url, 'GET', '/mob/team/members/writer/status');
      assert.equal(status.status, 200, JSON.stringify(status.body));
      // A listing and a mob created on B are served on B.
      assert.deepEqual(
        (await rpcOk(b.url, 'mob/list')).mobs.map((m: { mob_id: string }) => m.mob_id),
        ['team'],
      );
      await rpcOk(b.url, 'mob/create', { mob_id: 'other', definition: { members: [{ agent_identity: 'solo' }] } });
      const solo = await rpcOk(a.url, 'mob/send_message', { mob_id: 'other', agent_identity: 'solo', prompt: 'via a' });
      assert.equal(solo.text, 'echo: via a');
      assert.equal(b.provider.requests.filter((r) => JSON.stringify(r.messages).includes('via a')).length, 1);
      // An unknown mob is a NOT_FOUND wherever it is asked.
      const missing = await rpc(b.url, 'mob/get', { mob_id: 'nope' });
      assert.equal(missing.error?.data?.code, 'NOT_FOUND');
      const info = await call(b.url, 'GET', '/runtime/host_info');
      assert.ok(info.body.cluster.forwarded_requests >= 4, JSON.stringify(info.body.cluster));

      // A grant made through A lets the principal read on B; revoked through B, it no longer counts on A.
      await rpcOk(a.url, 'mob/grants/set', { principal: 'ops', scopes: ['MobRead'] });
      assert.deepEqual((await rpcOk(b.url, 'mob/list', {}, 'ops')).mobs.map((m: { mob_id: string }) => m.mob_id).sort(), ['other', 'team']);
      assert.deepEqual(
        (await rpcOk(b.url, 'mob/grants/list')).grants.map((g: { principal: string }) => g.principal),
        ['ops'],
      );
      assert.equal((await call(b.url, 'GET', '/mob/team/hosts', undefined, { 'x-warren-principal': 'ops' })).status, 200);
      assert.equal((await rpcOk(b.url, 'mob/grants/revoke', { principal: 'ops' })).revoked, true);
      const denied = await rpc(a.url, 'mob/list', {}, 'ops');
      assert.equal(denied.error?.data?.code, 'ScopeDenied', JSON.stringify(denied));
      assert.equal((await call(a.url, 'GET', '/mob/team/hosts', undefined, { 'x-warren-principal': 'ops' })).status, 403);
      assert.deepEqual((await rpcOk(a.url, 'mob/grants/list')).grants, []);
    });

    it('serves a mob on a survivor within the lease time after its node is killed', { timeout: 180_000 }, async (t) => {
      const url = await server.createDatabase('warren_mob_kill');
      const dir = await tmpDir('warren-cluster-mob-');
      t.after(() => dir.cleanup());
      const realm = 'cluster';
      await writeRealmConfig(dir.path, realm, { cluster: { lease_ms: LEASE_MS }, providers: { scripted: { mode: 'echo' } } });
      const env = { ...process.env, WARREN_DATABASE_URL: url };
      const start = (): Promise<ServerProcess> => startServerProcess({ stateRoot: dir.path, realm, backend: 'postgres', env, t });
      const [victim, survivor] = [await start(), await start()];
      const def = {
        members: [
          { agent_identity: 'a', provider: 'scripted' },
          { agent_identity: 'b', provider: 'scripted' },
        ],
      };
      await rpcOk(victim.url, 'mob/create', { mob_id: 'k', definition: def });
      const kicked = await call(survivor.url, 'POST', '/mob/k/wait-kickoff');
      assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
      const sessions = kicked.body.members.map((m: { session_id: string }) => m.session_id);
      const first = await rpcOk(survivor.url, 'mob/send_message', { mob_id: 'k', agent_identity: 'a', prompt: 'before the kill' });
      assert.equal(first.text, 'echo: before the kill');
      const before = (await call(survivor.url, 'GET', '/runtime/host_info')).body.cluster;
      assert.equal(before.lease_takeovers, 0);

      await victim.kill('SIGKILL');
      // The first call waits (at most about one lease term) for the dead node's lease to run out, then
      // the survivor takes the mob over and answers.
      const got = await rpcOk(survivor.url, 'mob/get', { mob_id: 'k' });
      assert.equal(got.state, 'running');
      assert.deepEqual(
        got.members.map((m: { session_id: string }) => m.session_id),
        sessions,
      );
      const after = await rpcOk(survivor.url, 'mob/send_message', { mob_id: 'k', agent_identity: 'a', prompt: 'after the kill' });
      assert.equal(after.text, 'echo: after the kill');
      const hist = await call(survivor.url, 'GET', '/mob/k/members/a/history');
      assert.equal(hist.status, 200, JSON.stringify(hist.body));
      const text = JSON.stringify(hist.body.page.messages);
      assert.ok(text.includes('before the kill') && text.includes('after the kill'), text);
      const cluster = (await call(survivor.url, 'GET', '/runtime/host_info')).body.cluster;
      // The mob and the member session it drove moved to the survivor.
      assert.ok(cluster.lease_takeovers >= 2, JSON.stringify(cluster));
    });

    it('resumes a flow run left in flight by a killed node on a survivor, with no request for it', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase('warren_mob_orphan');
      const db = await openPostgresStore({ url });
      t.after(() => db.close());
      const dir = await tmpDir('warren-cluster-flow-');
      t.after(() => dir.cleanup());
      const realm = 'cluster';
      // The first node: two quick kickoffs, then a step turn that never finishes before the kill.
      await writeRealmConfig(dir.path, realm, {
        cluster: { lease_ms: LEASE_MS },
        providers: { scripted: { replies: [{ text: 'k1' }, { text: 'k2' }, { text: 'never', delay_ms: 600_000 }] } },
      });
      const env = { ...process.env, WARREN_DATABASE_URL: url };
      const start = (): Promise<ServerProcess> => startServerProcess({ stateRoot: dir.path, realm, backend: 'postgres', env, t });
      const victim = await start();
      const def = {
        members: [
          { agent_identity: 'a', provider: 'scripted' },
          { agent_identity: 'b', provider: 'scripted' },
        ],
        flows: [
          {
            flow_id: 'f',
            steps: [
              { step_id: 's1', member: 'a', prompt: 'first {{input}}' },
              { step_id: 's2', member: 'b', prompt: 'second {{input}}' },
            ],
          },
        ],
      };
      await rpcOk(victim.url, 'mob/create', { mob_id: 'k', definition: def });
      assert.equal((await call(victim.url, 'POST', '/mob/k/wait-kickoff')).status, 200);
      await rpcOk(victim.url, 'mob/start_flow', { mob_id: 'k', flow_id: 'f', run_id: 'r1', activation: { input: 'x' } });
      const run = (): Promise<{ status: string; output?: string } | undefined> => db.getRecord('mob.runs', 'k/r1');
      const deadline = Date.now() + GUARD_MS;
      while ((await run())?.status !== 'running') {
        assert.ok(Date.now() < deadline, 'the run never started');
        await new Promise((r) => setTimeout(r, 50));
      }
      // A second node joins while the first holds the mob: it leaves the run alone at its start.
      await writeRealmConfig(dir.path, realm, { cluster: { lease_ms: LEASE_MS }, providers: { scripted: { mode: 'echo' } } });
      const survivor = await start();
      assert.equal((await run())?.status, 'running');
      await victim.kill('SIGKILL');

      // Nobody asks the survivor about the mob: its sweep finds the dead node's lease expired and resumes the run.
      while ((await run())?.status !== 'completed') {
        assert.ok(Date.now() < deadline, `the run was not resumed: ${JSON.stringify(await run())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal((await run())?.output, 'echo: second echo: first x');
      const lease = await db.getRecord<{ node_id: string }>('warren.lease', 'mob:k');
      const cluster = (await call(survivor.url, 'GET', '/runtime/host_info')).body.cluster;
      assert.equal(lease?.node_id, cluster.node_id);
      assert.ok(cluster.lease_takeovers >= 1, JSON.stringify(cluster));
      const events = (await db.listRecords<{ mob_id: string; kind: string; run_id: string | null }>('mob.events')).map((r) => r.value);
      assert.equal(events.filter((e) => e.kind === 'flow_completed' && e.run_id === 'r1').length, 1, 'the run completed once');
    });

    it('resumes on another node a flow run parked by a node that shut down cleanly', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const db = await openPostgresStore({ url });
      t.after(() => db.close());
      const entered = deferred();
      // A's member turn for the first step hangs until A shuts down; B answers every turn (echo).
      const a = await node(t, url, bindingScript({ text: 'first', entered: () => entered.resolve() }));
      const b = await node(t, url);
      const def = {
        members: [{ agent_identity: 'a' }, { agent_identity: 'b' }],
        flows: [
          {
            flow_id: 'f',
            steps: [
              { step_id: 's1', member: 'a', prompt: 'first {{input}}' },
              { step_id: 's2', member: 'b', prompt: 'second {{input}}' },
            ],
          },
        ],
      };
      await rpcOk(a.url, 'mob/create', { mob_id: 'p', definition: def });
      assert.equal((await call(a.url, 'POST', '/mob/p/wait-kickoff')).status, 200);
      await rpcOk(b.url, 'mob/start_flow', { mob_id: 'p', flow_id: 'f', run_id: 'r1', activation: { input: 'x' } });
      await entered.promise;
      await a.close();
      // The run was parked (not finished) and the mob's lease left to expire: B takes the mob over unasked.
      const run = (): Promise<{ status: string; output?: string } | undefined> => db.getRecord('mob.runs', 'p/r1');
      const deadline = Date.now() + GUARD_MS;
      while ((await run())?.status !== 'completed') {
        assert.ok(Date.now() < deadline, `the parked run was not resumed: ${JSON.stringify(await run())}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal((await run())?.output, 'echo: second echo: first x');
      assert.equal((await rpcOk(b.url, 'mob/flow_status', { mob_id: 'p', run_id: 'r1' })).status, 'completed');
      const events = (await db.listRecords<{ kind: string; run_id: string | null }>('mob.events')).map((r) => r.value);
      assert.equal(events.filter((e) => e.kind === 'flow_completed' && e.run_id === 'r1').length, 1);
    });
  });
}
