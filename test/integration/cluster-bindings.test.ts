// test/integration/cluster-bindings.test.ts: work execution bindings and the WorkGraph on two Warren nodes
// sharing one embedded PostgreSQL realm. Each node hosts its own mob; both launch a binding on the same
// work items at once (through their own MCP endpoints): for every item exactly one launch wins and the
// item's chain holds exactly that binding (the binding commit checks the chain, the idempotency key and
// the namespace head in its transaction); a retry launched on the other node supersedes a failed binding
// that ran on the first (a terminal binding leaves its node). Agents on both nodes write one WorkGraph namespace at once and
// no write is lost. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, startClusterNode, type TestApp } from '../helpers/app.ts';
import { bindingScript, createItem, createMob, mcpClient } from '../helpers/binding-driver.ts';
import { deferred } from '../helpers/gates.ts';
import { agentOk } from '../helpers/workgraph-driver.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { openPostgresStore } from '../../storage/postgres-store.ts';

const pgServer = await testPostgres();
const ITEMS = 4;

async function node(t: TestContext, url: string, script = bindingScript()): Promise<TestApp> {
  return startClusterNode(t, url, { script });
}

if (!pgServer.ok) {
  describe('cluster bindings', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('work bindings and the WorkGraph on two nodes sharing one postgres realm', () => {
    it('lets exactly one of two nodes bind each item', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const db = await openPostgresStore({ url });
      t.after(() => db.close());
      const a = await node(t, url);
      const b = await node(t, url);
      await createMob(a.url, 'crew-a');
      await createMob(b.url, 'crew-b');
      const items = [];
      for (let i = 0; i < ITEMS; i++) items.push(await createItem(i % 2 ? b.url : a.url, `job ${i}`));
      const [ma, mb] = [await mcpClient(t, a.url), await mcpClient(t, b.url)];
      // Both nodes launch on every item at once, each on the mob it hosts.
      const outcomes = await Promise.all(
        items.flatMap((item) =>
          [
            [ma, 'crew-a'],
            [mb, 'crew-b'],
          ].map(([mcp, mob]) =>
            (mcp as typeof ma)
              .tool('warren_workgraph_flow_launch', {
                item_id: item.id,
                expected_item_revision: item.revision,
                mob_id: mob,
                flow_id: 'review',
                idempotency_key: `${item.id}-${mob}`,
              })
              .then((r) => ({ item: item.id, r })),
          ),
        ),
      );
      for (const item of items) {
        const mine = outcomes.filter((o) => o.item === item.id);
        const won = mine.filter((o) => o.r.isError !== true);
        assert.equal(won.length, 1, `item ${item.id}: ${mine.map((o) => o.r.text).join(' | ')}`);
        const lost = mine.find((o) => o.r.isError === true)!;
        // The loser saw the winner: a live binding, the item moved on, or the item already closed by it.
        assert.ok(['CONFLICT', 'BAD_REQUEST'].includes(lost.r.structured.code), lost.r.text);
        const chain = await db.getRecord<{ binding_ids: string[] }>('work.binding_chains', `default/${item.id}`);
        assert.deepEqual(chain?.binding_ids, [won[0].r.structured.binding.binding_id]);
      }
      // Every winning binding settles (on the node hosting its mob) and closes its item.
      for (const o of outcomes.filter((x) => x.r.isError !== true)) {
        const onA = o.r.structured.binding.target.mob_id === 'crew-a';
        const done = await (onA ? ma : mb).settle(o.r.structured.binding.binding_id);
        assert.equal(done.machine_state, 'completed', JSON.stringify(done));
        const item = await call(onA ? b.url : a.url, 'GET', `/workgraph/items/${o.item}`);
        assert.equal(item.body.status, 'completed');
      }
    });

    it('supersedes a failed binding that ran on one node with a retry launched on the other', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url);
      const b = await node(t, url);
      await createMob(a.url, 'crew-a');
      await createMob(b.url, 'crew-b');
      const item = await createItem(a.url, 'flaky');
      const [ma, mb] = [await mcpClient(t, a.url), await mcpClient(t, b.url)];
      const base = { item_id: item.id, flow_id: 'review' };
      const first = (
        await ma.ok('warren_workgraph_flow_launch', {
          ...base,
          expected_item_revision: item.revision,
          mob_id: 'crew-a',
          idempotency_key: 'a',
          activation: { input: 'FAIL please' },
        })
      ).binding;
      assert.equal((await ma.settle(first.binding_id)).machine_state, 'failed');
      const now = (await call(b.url, 'GET', `/workgraph/items/${item.id}`)).body;
      assert.equal(now.status, 'open');
      const retry = (
        await mb.ok('warren_workgraph_flow_launch', {
          ...base,
          expected_item_revision: now.revision,
          mob_id: 'crew-b',
          idempotency_key: 'b',
          supersedes: first.binding_id,
          activation: { input: 'fine' },
        })
      ).binding;
      assert.equal(retry.supersedes, first.binding_id);
      assert.equal((await mb.settle(retry.binding_id)).machine_state, 'completed');
      const chain = (await ma.ok('warren_workgraph_flow_binding_list', { item_id: item.id })).bindings;
      assert.deepEqual(
        chain.map((x: { binding_id: string }) => x.binding_id),
        [first.binding_id, retry.binding_id],
      );
      assert.equal(chain[0].superseded_by, retry.binding_id);
      assert.equal((await call(a.url, 'GET', `/workgraph/items/${item.id}`)).body.status, 'completed');
    });

    it('answers a binding hosted by another node from the database', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const entered = deferred();
      const release = deferred();
      const a = await node(t, url, bindingScript({ text: 'slow', entered: () => entered.resolve(), release: release.promise }));
      const b = await node(t, url);
      await createMob(a.url, 'crew-a');
      const item = await createItem(a.url, 'slow job');
      const [ma, mb] = [await mcpClient(t, a.url), await mcpClient(t, b.url)];
      const launched = (
        await ma.ok('warren_workgraph_flow_launch', {
          item_id: item.id,
          expected_item_revision: item.revision,
          mob_id: 'crew-a',
          flow_id: 'review',
          idempotency_key: 'k',
          activation: { input: 'slow' },
        })
      ).binding;
      await entered.promise;
      // Running on A: B reads it (and lists it) from the database.
      const onB = (await mb.ok('warren_workgraph_flow_binding_get', { binding_id: launched.binding_id })).binding;
      assert.equal(onB.machine_state, 'running');
      assert.equal(onB.binding_revision, launched.binding_revision);
      assert.deepEqual(
        (await mb.ok('warren_workgraph_flow_binding_list', { item_id: item.id })).bindings.map((x: { binding_id: string }) => x.binding_id),
        [launched.binding_id],
      );
      release.resolve();
      assert.equal((await ma.settle(launched.binding_id)).machine_state, 'completed');
      assert.equal(
        (await mb.ok('warren_workgraph_flow_binding_get', { binding_id: launched.binding_id })).binding.machine_state,
        'completed',
      );
    });

    it('agents on both nodes write one WorkGraph namespace at once without losing a write', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url);
      const b = await node(t, url);
      const PER_NODE = 6;
      const created = await Promise.all(
        [a, b].flatMap((n, k) =>
          Array.from({ length: PER_NODE }, (_, i) => agentOk(n.url, 'workgraph_create', { namespace: 'shared', title: `n${k}-${i}` })),
        ),
      );
      const ids = created.map((c) => c.result.id);
      assert.equal(new Set(ids).size, 2 * PER_NODE);
      for (const n of [a, b]) {
        const listed = await call(n.url, 'GET', '/workgraph/items?namespace=shared');
        assert.equal(listed.status, 200, JSON.stringify(listed.body));
        assert.deepEqual(listed.body.items.map((x: { id: string }) => x.id).sort(), [...ids].sort());
        const events = (await call(n.url, 'GET', '/workgraph/events?namespace=shared')).body.events;
        assert.deepEqual(
          events.map((e: { seq: number }) => e.seq),
          Array.from({ length: 2 * PER_NODE }, (_, i) => i + 1),
        );
      }

      // A claims an item with a short lease and leaves; nobody asks B about the namespace, yet B observes
      // the expiry (its periodic check of namespaces with live leases) and records the release.
      const item = created[0].result as { id: string; revision: number };
      const claim = await agentOk(a.url, 'workgraph_claim', {
        namespace: 'shared',
        item_id: item.id,
        expected_revision: item.revision,
        lease_ms: 300,
      });
      assert.ok(claim.result.claim?.lease_expires_at, JSON.stringify(claim.result));
      await a.close();
      const db = await openPostgresStore({ url });
      t.after(() => db.close());
      const deadline = Date.now() + 60_000;
      const released = async (): Promise<boolean> =>
        (await db.listRecords<{ event: { kind: string; item_id?: string } }>('wg/shared/events')).some(
          (r) => r.value.event.kind === 'released' && r.value.event.item_id === item.id,
        );
      while (!(await released())) {
        assert.ok(Date.now() < deadline, 'the lease expiry was never observed');
        await new Promise((r) => setTimeout(r, 100));
      }
    });
  });
}
