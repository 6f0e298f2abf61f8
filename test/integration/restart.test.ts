// test/integration/restart.test.ts: what survives a restart of the real server on one state root and
// realm (config, generation, the manifest's backend pin, sessions), and two servers sharing one lmdb
// realm at once (SPEC.md "What the service does", "Limits": a persistent backend is pinned per realm).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { App, AppOptions } from '../../app.ts';
import { uwsSkip } from '../helpers/absent.ts';
import type { Script } from '../../providers/scripted.ts';
import { bootApp, call } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const UWS_SKIP = uwsSkip();
const REALM = 'restart-realm';

interface Fixture {
  root: string;
  /** Starts a server on the fixture's state root; close it at will (close is idempotent). */
  boot(opts: AppOptions, script?: Script): Promise<App>;
}

/** A temp state root; after the test, every server booted on it is closed, then the root is removed. */
async function fixture(t: TestContext): Promise<Fixture> {
  const dir = await tmpDir('warren-restart-');
  const apps: App[] = [];
  t.after(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await dir.cleanup();
  });
  return {
    root: dir.path,
    async boot(opts, script = []) {
      const app = await bootApp({ ...opts, stateRoot: dir.path, realm: REALM, script });
      apps.push(app);
      return app;
    },
  };
}

for (const transport of ['uws', 'node'] as const) {
  describe(`restart (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('keeps config, generation, the jsonl backend pin and sessions across a restart that asks for lmdb', async (t) => {
      const { root, boot } = await fixture(t);
      const first = await boot({ ...opts, realmBackend: 'jsonl' }, [{ text: 'remembered' }]);
      assert.equal((await call(first.url, 'PATCH', '/config', { agent: { max_tokens_per_turn: 2048 } })).status, 200);
      const patched = await call(first.url, 'PATCH', '/config', { patch: { tools: { builtins_enabled: true } }, expected_generation: 1 });
      assert.equal(patched.status, 200);
      assert.equal(patched.body.backend, 'jsonl');
      const created = await call(first.url, 'POST', '/sessions', { prompt: 'remember me', labels: { team: 'a' } });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id: string = created.body.session_id;
      const historyBefore = (await call(first.url, 'GET', `/sessions/${id}/history`)).body;
      await first.close();

      const second = await boot({ ...opts, realmBackend: 'lmdb' });
      const cfg = await call(second.url, 'GET', '/config');
      assert.equal(cfg.body.backend, 'jsonl', 'the manifest pin wins over the requested backend');
      assert.equal(cfg.body.generation, 2);
      assert.deepEqual(cfg.body.config, patched.body.config);
      const manifest = JSON.parse(await readFile(join(root, REALM, 'realm_manifest.json'), 'utf8'));
      assert.equal(manifest.backend, 'jsonl');
      const realms = await call(second.url, 'GET', '/realms');
      assert.equal(realms.body.realms[0].backend, 'jsonl');

      const detail = await call(second.url, 'GET', `/sessions/${id}`);
      assert.equal(detail.status, 200, JSON.stringify(detail.body));
      assert.equal(detail.body.session_id, id);
      assert.equal(detail.body.message_count, 2);
      assert.deepEqual(detail.body.labels, { team: 'a' });
      const history = await call(second.url, 'GET', `/sessions/${id}/history`);
      assert.equal(history.status, 200);
      assert.deepEqual(history.body, historyBefore);
      assert.deepEqual(history.body.messages.at(-1).blocks, [{ block_type: 'text', data: { text: 'remembered' } }]);
      const listed = await call(second.url, 'GET', '/sessions');
      assert.deepEqual(
        listed.body.sessions.map((s: { session_id: string }) => s.session_id),
        [id],
      );
    });

    it('continues a session committed by an earlier process (default lmdb realm)', async (t) => {
      const { boot } = await fixture(t);
      const first = await boot(opts, [{ text: 'one' }]);
      const created = await call(first.url, 'POST', '/sessions', { prompt: 'first' });
      assert.equal(created.status, 200);
      const id: string = created.body.session_id;
      await first.close();

      const second = await boot(opts, [{ text: 'two' }]);
      assert.equal((await call(second.url, 'GET', '/config')).body.backend, 'lmdb');
      const cont = await call(second.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'second' });
      assert.equal(cont.status, 200, JSON.stringify(cont.body));
      assert.equal(cont.body.text, 'two');
      const history = await call(second.url, 'GET', `/sessions/${id}/history`);
      assert.equal(history.body.message_count, 4);
      assert.deepEqual(
        history.body.messages.map((m: { role: string }) => m.role),
        ['user', 'block_assistant', 'user', 'block_assistant'],
      );
    });

    it("two servers on one lmdb realm at once both serve, and see each other's sessions and config", async (t) => {
      const { boot } = await fixture(t);
      const [a, b] = await Promise.all([boot(opts, [{ text: 'from a' }]), boot(opts, [{ text: 'from b' }])]);
      assert.notEqual(a.url, b.url);
      for (const app of [a, b]) {
        const health = await fetch(`${app.url}/health`);
        assert.equal(await health.text(), 'ok');
        const cfg = await call(app.url, 'GET', '/config');
        assert.equal(cfg.status, 200);
        assert.equal(cfg.body.realm_id, REALM);
        assert.equal(cfg.body.backend, 'lmdb');
      }

      const viaA = await call(a.url, 'POST', '/sessions', { prompt: 'hello a' });
      assert.equal(viaA.status, 200, JSON.stringify(viaA.body));
      const idA: string = viaA.body.session_id;
      const readByB = await call(b.url, 'GET', `/sessions/${idA}`);
      assert.equal(readByB.status, 200, JSON.stringify(readByB.body));
      assert.equal(readByB.body.message_count, 2);
      assert.equal((await call(b.url, 'GET', `/sessions/${idA}/history`)).body.message_count, 2);

      const viaB = await call(b.url, 'POST', '/sessions', { prompt: 'hello b' });
      assert.equal(viaB.status, 200);
      assert.equal((await call(a.url, 'GET', `/sessions/${viaB.body.session_id}`)).status, 200);

      // The generation CAS is shared through the realm files: B's write makes A's stale guard fail.
      assert.equal((await call(b.url, 'PATCH', '/config', { patch: { agent: { model: 'b-model' } }, expected_generation: 0 })).status, 200);
      const stale = await call(a.url, 'PATCH', '/config', { patch: { agent: { model: 'a-model' } }, expected_generation: 0 });
      assert.equal(stale.status, 400);
      assert.equal(stale.body.error, 'Generation conflict: expected 0, current 1');
    });
  });
}
