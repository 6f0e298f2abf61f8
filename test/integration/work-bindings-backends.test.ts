// Work execution bindings are Store records on every durable backend: a binding whose run is held in
// flight survives a graceful restart, reattaches to the run the mob runtime resumes, and completes with
// its evidence; its chain and idempotency key survive too (an exact replay answers the same binding).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call } from '../helpers/app.ts';
import { bindingScript, createItem, createMob, mcpClient } from '../helpers/binding-driver.ts';
import { deferred } from '../helpers/gates.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

describe('work bindings across a restart', () => {
  for (const backend of ['lmdb', 'sqlite', 'jsonl'] as const) {
    it(`a running binding reattaches and completes after a restart (${backend})`, { timeout: SLOW_TEST_MS }, async (t) => {
      const dir = await tmpDir('warren-wb-');
      t.after(() => dir.cleanup());
      const start = (script: ReturnType<typeof bindingScript>) => {
        const provider = createScriptedProvider(script);
        return createApp({
          host: '127.0.0.1',
          port: 0,
          stateRoot: dir.path,
          contextRoot: dir.path,
          realm: 'wb',
          realmBackend: backend,
          logger: pino({ level: 'silent' }),
          providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
        });
      };
      const entered = deferred();
      let app = await start(bindingScript({ text: 'HOLD', entered: () => entered.resolve() }));
      await createMob(app.url);
      const item = await createItem(app.url, `restart on ${backend}`);
      const args = {
        item_id: item.id,
        expected_item_revision: item.revision,
        mob_id: 'crew',
        flow_id: 'review',
        idempotency_key: 'r1',
        activation: { input: 'HOLD' },
      };
      let mcp = await mcpClient({ after: () => undefined }, app.url);
      const b = (await mcp.ok('warren_workgraph_flow_launch', args)).binding;
      await entered.promise;
      await mcp.client.close();
      await app.close();

      app = await start(bindingScript());
      t.after(() => app.close());
      mcp = await mcpClient(t, app.url);
      const done = await mcp.settle(b.binding_id);
      assert.equal(done.machine_state, 'completed', JSON.stringify(done));
      const after = (await call(app.url, 'GET', `/workgraph/items/${item.id}`)).body;
      assert.equal(after.status, 'completed');
      assert.equal(after.evidence_refs[0].id, `work_execution:${b.binding_id}`);
      assert.equal((await mcp.ok('warren_workgraph_flow_launch', args)).binding.binding_id, b.binding_id, 'the key survived');
    });
  }
});
