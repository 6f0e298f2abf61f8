// test/integration/mob-restart.test.ts: a mob across a restart on every persistent backend (lmdb,
// sqlite, jsonl): the mob record, its members (same sessions), flow runs and the structural ledger come
// back; members take turns after the restart; a memory realm serves mobs for the life of the process.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp, type App } from '../../app.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call } from '../helpers/app.ts';
import { rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { SseClient } from '../helpers/sse-client.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

async function boot(t: TestContext, root: string, backend: 'lmdb' | 'sqlite' | 'jsonl' | 'memory'): Promise<App> {
  const provider = createScriptedProvider([]);
  const app = await createApp({
    host: '127.0.0.1',
    port: 0,
    stateRoot: root,
    contextRoot: root,
    realm: `mob-${backend}`,
    realmBackend: backend,
    logger: pino({ level: 'silent' }),
    providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
  });
  t.after(() => app.close());
  return app;
}

for (const backend of ['lmdb', 'sqlite', 'jsonl'] as const) {
  describe(`mobs across a restart (${backend})`, () => {
    it('restores the mob, its members, its runs and its ledger', async (t) => {
      const dir = await tmpDir(`warren-mob-${backend}-`);
      t.after(() => dir.cleanup());
      const first = await boot(t, dir.path, backend);
      const tail = await SseClient.open(first.url, '/toolkit/mob_events/stream?kinds=flow_completed');
      await rpcOk(first.url, 'mob/create', { mob_id: 'r', labels: { k: 'v' }, definition: TEAM });
      const before = (await call(first.url, 'POST', '/mob/r/wait-kickoff')).body.members;
      await rpcOk(first.url, 'mob/start_flow', { mob_id: 'r', flow_id: 'draft', run_id: 'x', activation: { input: 'a' } });
      await tail.untilEvent('flow_completed');
      tail.close();
      const events = (await rpcOk(first.url, 'toolkit/mob_events/query', { limit: 1000 })).events;
      await first.close();

      const second = await boot(t, dir.path, backend);
      const mob = await rpcOk(second.url, 'mob/get', { mob_id: 'r' });
      assert.equal(mob.state, 'running');
      assert.deepEqual(mob.labels, { k: 'v' });
      assert.deepEqual(
        mob.members.map((m: { session_id: string; state: string }) => [m.session_id, m.state]),
        before.map((m: { session_id: string }) => [m.session_id, 'active']),
      );
      assert.equal((await rpcOk(second.url, 'mob/flow_status', { mob_id: 'r', run_id: 'x' })).status, 'completed');
      const again = (await rpcOk(second.url, 'toolkit/mob_events/query', { limit: 1000 })).events;
      assert.deepEqual(again, events);
      const reply = await rpcOk(second.url, 'mob/send_message', { mob_id: 'r', agent_identity: 'writer', prompt: 'still here?' });
      assert.equal(reply.text, 'echo: still here?');
      const more = (await rpcOk(second.url, 'toolkit/mob_events/query', { after_cursor: events.at(-1).cursor })).events;
      assert.equal(more.length, 0, 'a plain member turn adds no structural event');
      const hist = await call(second.url, 'GET', '/mob/r/members/writer/history');
      assert.ok(JSON.stringify(hist.body.page.messages).includes('still here?'));
      await second.close();
    });
  });
}

describe('mobs on a memory realm', () => {
  it('serves a mob for the life of the process', async (t) => {
    const dir = await tmpDir('warren-mob-memory-');
    t.after(() => dir.cleanup());
    const app = await boot(t, dir.path, 'memory');
    await rpcOk(app.url, 'mob/create', { mob_id: 'm', definition: TEAM });
    const kicked = (await call(app.url, 'POST', '/mob/m/wait-kickoff')).body.members;
    assert.deepEqual(
      kicked.map((m: { kickoff: string }) => m.kickoff),
      ['completed', 'completed', 'completed'],
    );
    const q = await rpcOk(app.url, 'toolkit/mob_events/query', { filter: { kinds: ['member_spawned'] } });
    assert.equal(q.events.length, 3);
  });
});
