// test/integration/cluster-mcp-ws.test.ts: Warren's MCP endpoint and JSON-RPC over WebSocket on a cluster
// of two Warren nodes sharing one embedded PostgreSQL realm. Node A hosts a mob; every call below reaches
// node B, which does not host it: an MCP `warren_workgraph_flow_launch`, `warren_mob_flow_status` and
// `warren_workgraph_flow_reconcile` run on A (the member turns are A's; B's model is never asked) with the
// results, idempotency and errors of one node; a WebSocket JSON-RPC call (and each call of a batch) naming
// the mob is answered by A through B's socket. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, startClusterNode, type TestApp } from '../helpers/app.ts';
import { bindingScript, createItem, createMob, mcpClient } from '../helpers/binding-driver.ts';
import { deferred } from '../helpers/gates.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { connectRpcSocket } from '../helpers/rpc-socket.ts';

const pgServer = await testPostgres();

async function node(t: TestContext, url: string, script = bindingScript()): Promise<TestApp> {
  return startClusterNode(t, url, { script });
}

/** A WebSocket JSON-RPC client on /rpc (closed when the test ends). */
async function socket(t: TestContext, url: string) {
  const c = await connectRpcSocket(url);
  t.after(() => c.ws.close());
  return {
    /** Sends a notification (no reply is due). */
    tell(v: unknown): void {
      c.send(v);
    },
    ask(v: unknown): Promise<any> {
      c.send(v);
      return c.next();
    },
  };
}

/** Provider requests whose transcript mentions `text`. */
function asked(app: TestApp, text: string): number {
  return app.provider.requests.filter((r) => JSON.stringify(r.messages).includes(text)).length;
}

if (!pgServer.ok) {
  describe('cluster MCP and WebSocket JSON-RPC', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('MCP tools and WebSocket JSON-RPC reaching a node that does not host the mob', () => {
    it('runs MCP flow launch, status and reconcile on the node hosting the mob', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const entered = deferred();
      const release = deferred();
      const a = await node(t, url, bindingScript({ text: 'slow', entered: () => entered.resolve(), release: release.promise }));
      const b = await node(t, url);
      await createMob(a.url, 'crew-a');
      const item = await createItem(a.url, 'remote launch');
      const mb = await mcpClient(t, b.url);
      const args = {
        item_id: item.id,
        expected_item_revision: item.revision,
        mob_id: 'crew-a',
        flow_id: 'review',
        idempotency_key: 'via-b',
        activation: { input: 'slow job' },
      };
      const launched = (await mb.ok('warren_workgraph_flow_launch', args)).binding;
      assert.equal(launched.target.mob_id, 'crew-a');
      await entered.promise;
      // The flow's first step runs on A, the node hosting the mob.
      assert.equal(asked(a, 'Draft: slow job'), 1);
      assert.equal(b.provider.requests.length, 0);
      // The same key and request through B again answers the same binding (idempotency on the owner).
      assert.equal((await mb.ok('warren_workgraph_flow_launch', args)).binding.binding_id, launched.binding_id);
      // A run's status and a binding's reconcile through B, while it runs on A.
      const status = (await mb.ok('warren_mob_flow_status', { mob_id: 'crew-a', run_id: launched.target.run_id })).run;
      assert.equal(status.run_id, launched.target.run_id);
      assert.equal(status.status, 'running');
      assert.equal(status.activation, undefined);
      const reconciled = (await mb.ok('warren_workgraph_flow_reconcile', { binding_id: launched.binding_id })).binding;
      assert.equal(reconciled.machine_state, 'running');
      // Errors are the owner's, as on one node.
      const missingRun = await mb.tool('warren_mob_flow_status', { mob_id: 'crew-a', run_id: 'nope' });
      assert.equal(missingRun.isError, true);
      assert.equal(missingRun.structured.code, 'NOT_FOUND', missingRun.text);
      const refused = await mb.tool('warren_workgraph_flow_abandon_uncertain', {
        binding_id: launched.binding_id,
        expected_binding_revision: reconciled.binding_revision,
      });
      assert.equal(refused.isError, true);
      assert.equal(refused.structured.code, 'CONFLICT', refused.text);
      release.resolve();
      assert.equal((await mb.settle(launched.binding_id)).machine_state, 'completed');
      assert.equal(asked(a, 'Check: '), 1);
      assert.equal(b.provider.requests.length, 0);
      assert.equal((await call(b.url, 'GET', `/workgraph/items/${item.id}`)).body.status, 'completed');
      assert.equal((await mb.ok('warren_mob_flow_status', { mob_id: 'crew-a', run_id: launched.target.run_id })).run.status, 'completed');
      // The mob never left A: B forwarded (the MCP calls went to A as internal calls).
      const info = await call(b.url, 'GET', '/runtime/host_info');
      assert.ok(info.body.cluster.forwarded_requests >= 5, JSON.stringify(info.body.cluster));
    });

    it('answers WebSocket JSON-RPC calls naming a mob from the node hosting it', { timeout: 240_000 }, async (t) => {
      const url = await server.createDatabase();
      const a = await node(t, url);
      const b = await node(t, url);
      await createMob(a.url, 'crew-a');
      const ws = await socket(t, b.url);
      const sent = await ws.ask({
        jsonrpc: '2.0',
        id: 1,
        method: 'mob/send_message',
        params: { mob_id: 'crew-a', agent_identity: 'writer', prompt: 'over the socket' },
      });
      assert.equal(sent.id, 1);
      assert.equal(sent.error, undefined, JSON.stringify(sent.error));
      assert.equal(sent.result.text, 'echo: over the socket');
      assert.equal(asked(a, 'over the socket'), 1);
      assert.equal(b.provider.requests.length, 0);
      // A batch mixing a forwarded call, a local listing and an unknown method; a notification gets no reply.
      ws.tell({
        jsonrpc: '2.0',
        method: 'mob/send_message',
        params: { mob_id: 'crew-a', agent_identity: 'reviewer', prompt: 'a notification' },
      });
      const batch = await ws.ask([
        { jsonrpc: '2.0', id: 'g', method: 'mob/get', params: { mob_id: 'crew-a' } },
        { jsonrpc: '2.0', id: 'l', method: 'mob/list' },
        { jsonrpc: '2.0', id: 'x', method: 'nope' },
      ]);
      const byId = new Map<string, { result?: { mob_id?: string; mobs?: Array<{ mob_id: string }> }; error?: { code: number } }>(
        batch.map((r: { id: string }) => [r.id, r]),
      );
      assert.equal(byId.size, 3, JSON.stringify(batch));
      assert.equal(byId.get('g')?.result?.mob_id, 'crew-a', JSON.stringify(batch));
      assert.deepEqual(
        byId.get('l')?.result?.mobs?.map((m) => m.mob_id),
        ['crew-a'],
      );
      assert.equal(byId.get('x')?.error?.code, -32601);
      // Errors keep their JSON-RPC codes: an unknown mob, and a mob's own refusal on its node.
      const missing = await ws.ask({ jsonrpc: '2.0', id: 2, method: 'mob/get', params: { mob_id: 'nope' } });
      assert.equal(missing.error?.data?.code, 'NOT_FOUND', JSON.stringify(missing));
      const noMember = await ws.ask({
        jsonrpc: '2.0',
        id: 3,
        method: 'mob/send_message',
        params: { mob_id: 'crew-a', agent_identity: 'ghost', prompt: 'x' },
      });
      assert.ok(noMember.error, JSON.stringify(noMember));
      assert.notEqual(noMember.error.data?.code, 'SERVICE_UNAVAILABLE', JSON.stringify(noMember));
      const info = await call(b.url, 'GET', '/runtime/host_info');
      assert.ok(info.body.cluster.forwarded_requests >= 3, JSON.stringify(info.body.cluster));
    });
  });
}
