// test/integration/inbound-auth-cluster.test.ts: API keys on a two-node cluster (one embedded PostgreSQL
// realm). A client's key is checked by the node it reaches; the request forwarded to the session's owner
// proves itself with the realm cluster secret (not the client's key) and keeps the key's principal. A request
// claiming to be forwarded without that proof is refused. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { REALM_KEY_FILE } from '../../actors/auth/realm-key.ts';
import { createKey } from '../../actors/inbound-auth/key-store.ts';
import { openStore } from '../../storage/open-store.ts';
import { echoReply } from '../../providers/scripted.ts';
import { call, startClusterNode } from '../helpers/app.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const pgServer = await testPostgres();

if (!pgServer.ok) {
  describe('inbound auth on a cluster', () => {
    it('needs a PostgreSQL server', { skip: `postgres tests skipped: ${pgServer.reason}` }, () => {});
  });
} else {
  const server = pgServer.server;
  describe('inbound auth on a cluster', () => {
    it('forwards a keyed request to the owner with the cluster secret; unproven peers are refused', { timeout: 120_000 }, async (t) => {
      const url = await server.createDatabase();
      const config = { rest: { auth: 'required' } };
      const a = await startClusterNode(t, url, { script: (req) => echoReply(req), config });
      // The cluster secret is sealed with the realm key: a node on another state root needs A's key file.
      const rootB = await tmpDir('warren-node-b-');
      t.after(() => rootB.cleanup());
      await mkdir(join(rootB.path, 'test-realm'), { recursive: true });
      await copyFile(join(a.stateRoot, 'test-realm', REALM_KEY_FILE), join(rootB.path, 'test-realm', REALM_KEY_FILE));
      const b = await startClusterNode(t, url, { script: (req) => echoReply(req), config, stateRoot: rootB.path });
      const store = await openStore('postgres', '', { postgres: { url } });
      const { token } = await createKey(store, { name: 'ci', scopes: ['sessions'] }, Date.now());
      await store.close();
      const auth = { authorization: `Bearer ${token}` };
      const created = await call(a.url, 'POST', '/sessions', { prompt: 'first' }, auth);
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      // B does not own the session: the turn runs on A, reached through B.
      const turn = await call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'second' }, auth);
      assert.equal(turn.status, 200, JSON.stringify(turn.body));
      assert.equal(turn.body.text, 'echo: second');
      assert.equal(b.provider.requests.length, 0);
      const history = await call(b.url, 'GET', `/sessions/${id}/history`, undefined, auth);
      assert.equal(history.status, 200);
      assert.equal((await call(b.url, 'GET', `/sessions/${id}/history`)).status, 401);
      // Pretending to be a peer does not bypass the key check.
      const fake = await call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x' }, { 'x-warren-forwarded-by': 'b' });
      assert.equal(fake.status, 401);
      const fakeCall = await call(
        a.url,
        'POST',
        '/_cluster/call/anything',
        {},
        { ...auth, 'x-warren-forwarded-by': 'b', 'x-warren-cluster-auth': 'guess' },
      );
      assert.equal(fakeCall.status, 401);
    });

    it('refuses to start a node whose realm key cannot open the sealed cluster secret', { timeout: 120_000 }, async (t) => {
      const url = await server.createDatabase();
      const config = { rest: { auth: 'required' } };
      await startClusterNode(t, url, { config });
      await assert.rejects(
        startClusterNode(t, url, { config }),
        /cluster secret does not open with this node's realm key .*credentials\.key/,
      );
    });
  });
}
