// test/config/realm-config.test.ts: GET/PUT/PATCH /config semantics and the generation CAS
// (config/realm-config.ts) on real realm files.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Compile } from 'typebox/compile';
import { ConfigEnvelope } from '../../contracts/config.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { createLogger } from '../../config/logger.ts';
import { openRealm, type RealmInfo } from '../../config/realm.ts';
import { RealmConfig } from '../../config/realm-config.ts';
import { loadConfigFile } from '../../config/toml.ts';

const logger = createLogger({ level: 'silent' });
const checkEnvelope = Compile(ConfigEnvelope);
let root = '';
let counter = 0;

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'warren-realm-config-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

async function freshRealm(): Promise<RealmInfo> {
  counter += 1;
  return openRealm({ realm: `r${counter}`, stateRoot: root, isolated: false, logger });
}

async function diskGeneration(realm: RealmInfo): Promise<number> {
  return (JSON.parse(await readFile(realm.configStatePath, 'utf8')) as { generation: number }).generation;
}

function isBadRequest(pattern: RegExp) {
  return (err: unknown): boolean => {
    assert.ok(err instanceof ServiceError, 'ServiceError expected');
    assert.equal(err.code, 'BAD_REQUEST');
    assert.equal(err.status, 400);
    assert.match(err.message, pattern);
    return true;
  };
}

describe('RealmConfig', () => {
  it('serves an envelope without resolved_paths by default', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    const envelope = rc.envelope();
    assert.equal(envelope.generation, 0);
    assert.equal(envelope.realm_id, realm.realmId);
    assert.equal(envelope.instance_id, null);
    assert.equal(envelope.backend, 'lmdb');
    assert.equal('resolved_paths' in envelope, false);
    assert.ok(checkEnvelope.Check(envelope));
    assert.equal(rc.current().rest.port, 8080);
    assert.ok(Object.isFrozen(rc.current().rest));
  });

  it('adds resolved_paths and instance_id when asked', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: true, instanceId: 'node-1', logger });
    const envelope = rc.envelope();
    assert.equal(envelope.instance_id, 'node-1');
    assert.deepEqual(envelope.resolved_paths, {
      root: realm.dir,
      manifest_path: realm.manifestPath,
      config_path: realm.configPath,
      config_state_path: realm.configStatePath,
      store_dir: realm.storeDir,
    });
    assert.ok(checkEnvelope.Check(envelope));
  });

  it('replaces with a direct or wrapped body, bumping the generation', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    const seen: number[] = [];
    rc.onChange((cfg) => seen.push(cfg.rest.port));

    const direct = await rc.replace({ rest: { port: 9001 }, max_tokens: 2048 });
    assert.equal(direct.generation, 1);
    assert.equal(direct.config.rest.port, 9001);
    assert.equal(direct.config.max_tokens, 2048);
    assert.equal(direct.config.agent.max_tokens_per_turn, 16384, 'defaults filled');

    const wrapped = await rc.replace({ config: { rest: { port: 9002 } }, expected_generation: 1 });
    assert.equal(wrapped.generation, 2);
    assert.equal(wrapped.config.rest.port, 9002);
    assert.equal(wrapped.config.max_tokens, undefined, 'PUT replaces the whole document');

    const nullGuard = await rc.replace({ config: { rest: { port: 9003 } }, expected_generation: null });
    assert.equal(nullGuard.generation, 3);
    assert.deepEqual(seen, [9001, 9002, 9003]);
    assert.equal(await diskGeneration(realm), 3);
    assert.equal((await loadConfigFile(realm.configPath)).rest.port, 9003);
  });

  it('treats a body with a `config` member as the wrapped form and ignores its other members', async () => {
    const rc = await RealmConfig.open(await freshRealm(), { exposePaths: false, logger });
    const envelope = await rc.replace({ config: { note: 'kept' }, rest: { port: 1234 } });
    assert.equal(envelope.config.rest.port, 8080);
    assert.equal((envelope.config as Record<string, unknown>).note, 'kept');
    assert.equal('config' in envelope.config, false);
  });

  it('patches with a direct or wrapped RFC 7396 body', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    await rc.patch({ max_tokens: 2048, agent: { system_prompt: 'hi' } });
    const second = await rc.patch({ patch: { max_tokens: 3072, agent: { system_prompt: null } }, expected_generation: 1 });
    assert.equal(second.generation, 2);
    assert.equal(second.config.max_tokens, 3072);
    assert.equal('system_prompt' in second.config.agent, false);
    assert.equal(second.config.agent.max_tokens_per_turn, 16384);
  });

  it('persists config and generation across reopen', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    await rc.patch({ tools: { shell_enabled: true } });
    await rc.patch({ rest: { port: 7777 } });
    const reopened = await RealmConfig.open(realm, { exposePaths: false, logger });
    assert.equal(reopened.generation(), 2);
    assert.equal(reopened.current().tools.shell_enabled, true);
    assert.equal(reopened.current().rest.port, 7777);
  });

  it('rejects a stale expected_generation with Generation conflict and writes nothing', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    await rc.patch({ rest: { port: 1111 } });
    const before = await readFile(realm.configPath, 'utf8');
    await assert.rejects(
      rc.patch({ patch: { rest: { port: 2222 } }, expected_generation: 0 }),
      isBadRequest(/^Generation conflict: expected 0, current 1$/),
    );
    await assert.rejects(rc.replace({ config: {}, expected_generation: 5 }), isBadRequest(/^Generation conflict: expected 5, current 1$/));
    assert.equal(await readFile(realm.configPath, 'utf8'), before);
    assert.equal(await diskGeneration(realm), 1);
    assert.equal(rc.generation(), 1);
  });

  it('rejects invalid configs and patches and writes nothing', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    const before = await readFile(realm.configPath, 'utf8');
    await assert.rejects(rc.replace({ max_tokens: 0 }), isBadRequest(/^Invalid config: \/max_tokens: /));
    await assert.rejects(rc.replace({ config: { rest: { port: -1 } } }), isBadRequest(/^Invalid config: \/rest\/port/));
    await assert.rejects(rc.replace('nope'), isBadRequest(/^Invalid config: expected a JSON object/));
    await assert.rejects(rc.patch({ agent: { max_tokens_per_turn: 0 } }), isBadRequest(/^Invalid patch: \/agent\/max_tokens_per_turn/));
    await assert.rejects(rc.patch({ patch: [1] }), isBadRequest(/^Invalid patch: 'patch' must be a JSON object/));
    await assert.rejects(rc.patch({ patch: {}, expected_generation: -1 }), isBadRequest(/expected_generation/));
    await assert.rejects(rc.patch(null), isBadRequest(/^Invalid patch/));
    assert.equal(await readFile(realm.configPath, 'utf8'), before);
    assert.equal(await diskGeneration(realm), 0);
    assert.equal(rc.generation(), 0);
    assert.equal((await readdir(realm.dir)).filter((f) => f.endsWith('.tmp') || f.endsWith('.lock')).length, 0);
  });

  it('lets exactly one of 20 concurrent patches with the same expected generation win', async () => {
    const realm = await freshRealm();
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => rc.patch({ patch: { rest: { port: 5000 + i } }, expected_generation: 0 })),
    );
    const won = results.filter((r) => r.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const r of results) {
      if (r.status === 'rejected') assert.ok(isBadRequest(/^Generation conflict: expected 0, current 1$/)(r.reason));
    }
    assert.equal(await diskGeneration(realm), 1);
  });

  it('lets exactly one writer win across two instances sharing the realm files (two-process case)', async () => {
    const realm = await freshRealm();
    const a = await RealmConfig.open(realm, { exposePaths: false, logger });
    const b = await RealmConfig.open(realm, { exposePaths: false, logger });
    const attempts = Array.from({ length: 10 }, (_, i) => [
      a.patch({ patch: { rest: { port: 6000 + i } }, expected_generation: 0 }),
      b.patch({ patch: { rest: { port: 6100 + i } }, expected_generation: 0 }),
    ]).flat();
    const results = await Promise.allSettled(attempts);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    assert.equal(await diskGeneration(realm), 1);

    // b's next patch merges onto the file a (or b) wrote, not onto a stale cache.
    await a.patch({ agent: { model: 'from-a' } });
    const fromB = await b.patch({ tools: { builtins_enabled: true } });
    assert.equal(fromB.generation, 3);
    assert.equal(fromB.config.agent.model, 'from-a');
    const reloaded = await a.reload();
    assert.equal(reloaded.generation, 3);
    assert.equal(reloaded.config.tools.builtins_enabled, true);
  });

  it('breaks a stale lock file left by a crashed writer', async () => {
    const realm = await freshRealm();
    const lockPath = `${realm.configStatePath}.lock`;
    await writeFile(lockPath, '{"pid":1}\n');
    const old = new Date(Date.now() - 60_000);
    await utimes(lockPath, old, old);
    const rc = await RealmConfig.open(realm, { exposePaths: false, logger });
    const envelope = await rc.patch({ rest: { port: 4242 } });
    assert.equal(envelope.generation, 1);
    await assert.rejects(readFile(lockPath), { code: 'ENOENT' });
  });
});
