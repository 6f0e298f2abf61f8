// test/actors/auth/sealed-binding.test.ts: every sealed secret is bound to the record it lives in (AES-GCM
// associated data). A sealed blob copied into another record (another auth profile, another session's MCP
// record, another name) does not open there, while it still opens in its own record. Real LMDB, real key file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { CredentialStore, NS } from '../../../actors/auth/credential-store.ts';
import { openRealmKey } from '../../../actors/auth/realm-key.ts';
import { openMcpRecord, sealMcpRecord } from '../../../actors/mcp-sealing.ts';
import { SUBSCRIPTION_NS, WebhookSubscriptions } from '../../../actors/webhooks/webhook-subscriptions.ts';
import type { AuthProfileRecord, SealedSecret } from '../../../contracts/auth.ts';
import type { McpPersistedRecord } from '../../../contracts/mcp.ts';
import { defaultConfig } from '../../../config/toml.ts';
import { openLmdbStore } from '../../../storage/lmdb-store.ts';
import { tmpDir } from '../../helpers/tmp-dir.ts';

describe('sealed secrets are bound to their records', () => {
  it('the realm cipher opens a blob only under the associated data it was sealed with', async (t) => {
    const dir = await tmpDir('warren-seal-');
    t.after(() => dir.cleanup());
    const cipher = await openRealmKey(join(dir.path, 'credentials.key'));
    const sealed = cipher.seal('ns:record-a', { secret: 's3cret' });
    assert.deepEqual(cipher.open('ns:record-a', sealed), { secret: 's3cret' });
    assert.equal(cipher.open('ns:record-b', sealed), undefined, 'a blob moved to another record does not open');
    assert.equal(cipher.open('other:record-a', sealed), undefined, 'nor under another namespace');
  });

  it("an auth profile's sealed secret copied into another profile's record fails to open (real LMDB)", async (t) => {
    const dir = await tmpDir('warren-seal-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(join(dir.path, 'db'));
    t.after(() => store.close());
    const creds = new CredentialStore(store, openRealmKey(join(dir.path, 'credentials.key')), 'realm1', defaultConfig);
    await creds.putProfile({ id: 'alice' } as AuthProfileRecord, { secret: 'alice-key' });
    await creds.putProfile({ id: 'bob' } as AuthProfileRecord, { secret: 'bob-key' });
    assert.deepEqual(await creds.readSecret('alice'), { material: { secret: 'alice-key' }, readable: true });
    const alices = await store.getRecord<SealedSecret>(NS.secrets, 'alice');
    assert.ok(alices, "alice's sealed record is stored");
    await store.commit([{ op: 'putRecord', ns: NS.secrets, key: 'bob', value: alices }]);
    assert.deepEqual(await creds.readSecret('bob'), { readable: false }, "alice's secret does not open as bob's");
    const other = new CredentialStore(store, openRealmKey(join(dir.path, 'credentials.key')), 'realm2', defaultConfig);
    assert.deepEqual(await other.readSecret('alice'), { readable: false }, 'nor in another realm');
  });

  it("an MCP server's sealed headers/env copied into another session or server fail to open", async (t) => {
    const dir = await tmpDir('warren-seal-');
    t.after(() => dir.cleanup());
    const cipher = await openRealmKey(join(dir.path, 'credentials.key'));
    const record = {
      added: [{ name: 'srv', url: 'http://127.0.0.1:1/mcp', headers: { authorization: 'Bearer x' } }],
    } as unknown as McpPersistedRecord;
    const sealed = sealMcpRecord(cipher, 'sess-a', record);
    assert.ok(!JSON.stringify(sealed).includes('Bearer x'), 'the header is sealed at rest');
    const own = openMcpRecord(cipher, 'sess-a', sealed).added[0] as { headers?: Record<string, string> };
    assert.deepEqual(own.headers, { authorization: 'Bearer x' });
    const moved = openMcpRecord(cipher, 'sess-b', sealed).added[0] as { headers?: Record<string, string> };
    assert.equal(moved.headers, undefined, 'copied into another session it does not open');
    const renamed = { ...sealed, added: sealed.added.map((c) => ({ ...c, name: 'other' })) } as McpPersistedRecord;
    assert.equal((openMcpRecord(cipher, 'sess-a', renamed).added[0] as { headers?: unknown }).headers, undefined, 'nor under another name');
  });

  it("a webhook subscription's sealed signing secret copied into another subscription fails to open (real LMDB)", async (t) => {
    const dir = await tmpDir('warren-seal-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(join(dir.path, 'db'));
    t.after(() => store.close());
    const key = join(dir.path, 'credentials.key');
    const cipher = await openRealmKey(key);
    const rec = (id: string) => ({ v: 1, id, url: 'http://127.0.0.1:1/hook', events: ['run_completed'], created_ms: 1 });
    const sealedA = cipher.seal('webhook_subscription:wh-a', { secret: 'sign-a' });
    await store.commit([
      { op: 'putRecord', ns: SUBSCRIPTION_NS, key: 'wh-a', value: { ...rec('wh-a'), sealed_secret: sealedA } },
      { op: 'putRecord', ns: SUBSCRIPTION_NS, key: 'wh-b', value: { ...rec('wh-b'), sealed_secret: sealedA } },
    ]);
    const subs = new WebhookSubscriptions(
      store,
      defaultConfig,
      () => 1,
      () => openRealmKey(key),
    );
    await subs.load();
    assert.equal(subs.get('wh-a')?.secret, 'sign-a');
    assert.equal(subs.get('wh-b')?.secret, undefined, "wh-a's secret does not open as wh-b's");
  });
});
