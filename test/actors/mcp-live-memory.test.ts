// actors/mcp-live.ts remembers which sessions have no MCP servers (so a turn does not read the store for
// them), but only up to a bound: every session that ever ran a turn would otherwise keep an entry forever.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { McpLive } from '../../actors/mcp-live.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { openTestRuntime } from '../helpers/runtime.ts';

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('MCP live: sessions without servers', () => {
  it('remembers at most noneKeptMax of them and reloads a forgotten one on its next turn', async (t) => {
    const { sessions, store, deps, dir } = await openTestRuntime(t, { provider: createScriptedProvider([]) });
    const live = new McpLive({
      sessions,
      store,
      log: deps.log,
      config: deps.config,
      contextRoot: dir,
      clientInfo: { name: 't', version: '0' },
      noneKeptMax: 3,
    });
    t.after(() => live.close());
    // The first boundary of each session starts the load in the background and gives no tools.
    for (let i = 0; i < 3; i++) assert.deepEqual(live.toolsFor(`s${i}`), []);
    await settle();
    assert.equal(live.knownWithoutServers, 3);
    for (let i = 3; i < 10; i++) {
      live.toolsFor(`s${i}`);
      await settle();
      assert.ok(live.knownWithoutServers <= 3, `at most 3 remembered after s${i}: ${live.knownWithoutServers}`);
    }
    // A forgotten session is loaded again and still has no tools.
    assert.deepEqual(live.toolsFor('s0'), []);
    await settle();
    assert.deepEqual(live.toolsFor('s0'), []);
  });
});
