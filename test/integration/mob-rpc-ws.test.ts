// test/integration/mob-rpc-ws.test.ts: JSON-RPC 2.0 over WebSocket at /rpc on both HTTP transports:
// requests, batches, notifications (no reply), parse errors, and the upgrade request's principal.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { uwsSkip } from '../helpers/absent.ts';
import { startApp } from '../helpers/app.ts';
import { connectRpcSocket as connect } from '../helpers/rpc-socket.ts';

const UWS_SKIP = uwsSkip();

for (const transport of ['uws', 'node'] as const) {
  describe(`JSON-RPC over WebSocket (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    it('serves mob methods, batches, notifications and errors on one socket', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const c = await connect(app.url);
      t.after(() => c.ws.close());
      c.send({ jsonrpc: '2.0', id: 1, method: 'mob/create', params: { mob_id: 'w1', definition: { members: [{ agent_identity: 'a' }] } } });
      const created = await c.next();
      assert.equal(created.id, 1);
      assert.equal(created.result.mob_id, 'w1');
      c.send({ jsonrpc: '2.0', method: 'mob/list' }); // a notification: no reply
      c.send([
        { jsonrpc: '2.0', id: 'x', method: 'mob/get', params: { mob_id: 'w1' } },
        { jsonrpc: '2.0', id: 'y', method: 'nope' },
      ]);
      const batch = await c.next();
      assert.equal(batch[0].result.mob_id, 'w1');
      assert.equal(batch[1].error.code, -32601);
      c.send('{broken');
      assert.equal((await c.next()).error.code, -32700);
      c.send({ jsonrpc: '2.0', id: 2, method: 'toolkit/mob_events/query', params: { filter: { mob_id: 'w1', kinds: ['mob_created'] } } });
      assert.equal((await c.next()).result.events[0].kind, 'mob_created');

      const eve = await connect(app.url, { 'x-warren-principal': 'eve' });
      t.after(() => eve.ws.close());
      eve.send({ jsonrpc: '2.0', id: 3, method: 'mob/get', params: { mob_id: 'w1' } });
      const denied = await eve.next();
      assert.equal(denied.error.code, -32025);
      assert.deepEqual(denied.error.data.details.effective, []);
    });
  });
}
