// test/integration/cluster-secret-sealed.test.ts: the realm's cluster secret (what a node presents to its
// peers when API keys are on) is stored sealed with the realm key, never in the clear; a secret an older
// Warren stored in the clear keeps working and is resealed on the first start; a start whose realm key
// cannot open the stored secret is refused with the key file named. One lmdb node (a cluster of one).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { openRealmKey, REALM_KEY_FILE } from '../../actors/auth/realm-key.ts';
import { call, startApp } from '../helpers/app.ts';
import { filesUnder } from '../helpers/files-under.ts';
import { withRealmStore } from '../helpers/realm-store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REALM = 'test-realm';
const config = { rest: { auth: 'required' } };
const peerAuth = (secret: Buffer) => createHmac('sha256', secret).update('warren-cluster-peer-v1').digest('base64url');

async function storedSecret(root: string): Promise<Record<string, unknown> | undefined> {
  return withRealmStore(root, REALM, (store) => store.getRecord<Record<string, unknown>>('inbound.cluster', 'secret'));
}

describe('the realm cluster secret at rest', () => {
  it('is sealed with the realm key and never written in the clear', async (t) => {
    const root = await tmpDir('warren-cs-');
    t.after(() => root.cleanup());
    const app = await startApp(t, [], { stateRoot: root.path, config });
    await app.close();
    const rec = await storedSecret(root.path);
    assert.ok(rec, 'a cluster secret record exists');
    assert.equal(rec.secret, undefined, 'no secret in the clear');
    const sealed = rec.sealed as { v: 1; iv: string; tag: string; data: string };
    assert.equal(typeof sealed?.data, 'string');
    const cipher = await openRealmKey(join(root.path, REALM, REALM_KEY_FILE));
    const secret = cipher.open('inbound.cluster/secret', sealed)?.secret;
    assert.ok(secret, 'the sealed secret opens with the realm key');
    const plain = Buffer.from(secret, 'base64');
    assert.equal(plain.length, 32);
    for (const file of await filesUnder(root.path)) {
      const bytes = await readFile(file);
      assert.equal(bytes.includes(plain), false, `${file} holds the secret's bytes`);
      assert.equal(bytes.includes(Buffer.from(secret)), false, `${file} holds the secret in base64`);
    }
    // The same secret is used on the next start: a peer presenting it is admitted, a guess is not.
    const again = await startApp(t, [], { stateRoot: root.path, config });
    const peer = { 'x-warren-forwarded-by': 'peer', 'x-warren-cluster-auth': peerAuth(plain) };
    assert.equal((await call(again.url, 'GET', '/sessions', undefined, peer)).status, 200);
    const guess = { 'x-warren-forwarded-by': 'peer', 'x-warren-cluster-auth': peerAuth(randomBytes(32)) };
    assert.equal((await call(again.url, 'GET', '/sessions', undefined, guess)).status, 401);
  });

  it('reseals a secret stored in the clear by an older version, keeping its value', async (t) => {
    const root = await tmpDir('warren-cs-');
    t.after(() => root.cleanup());
    // A first start creates the realm (its key file and store); then the record is replaced by an old-style one.
    const first = await startApp(t, [], { stateRoot: root.path });
    await first.close();
    const legacy = randomBytes(32);
    await withRealmStore(root.path, REALM, (store) =>
      store.commit([{ op: 'putRecord', ns: 'inbound.cluster', key: 'secret', value: { v: 1, rev: 1, secret: legacy.toString('base64') } }]),
    );
    const app = await startApp(t, [], { stateRoot: root.path, config });
    const peer = { 'x-warren-forwarded-by': 'peer', 'x-warren-cluster-auth': peerAuth(legacy) };
    assert.equal((await call(app.url, 'GET', '/sessions', undefined, peer)).status, 200);
    await app.close();
    const rec = await storedSecret(root.path);
    assert.equal(rec?.secret, undefined, 'the clear secret is gone');
    assert.equal(rec?.rev, 2);
    const cipher = await openRealmKey(join(root.path, REALM, REALM_KEY_FILE));
    assert.equal(cipher.open('inbound.cluster/secret', rec?.sealed as never)?.secret, legacy.toString('base64'));
  });

  it('refuses a start whose realm key does not open the stored secret, naming the key file', async (t) => {
    const root = await tmpDir('warren-cs-');
    t.after(() => root.cleanup());
    const first = await startApp(t, [], { stateRoot: root.path, config });
    await first.close();
    const keyFile = join(root.path, REALM, REALM_KEY_FILE);
    await writeFile(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    await assert.rejects(
      startApp(t, [], { stateRoot: root.path, config }),
      (err: Error) => err.message.includes("does not open with this node's realm key") && err.message.includes(keyFile),
    );
    // Nothing of the refused start stays open: the store opens again at once.
    assert.ok(await storedSecret(root.path));
  });
});
