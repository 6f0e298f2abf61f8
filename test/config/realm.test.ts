// test/config/realm.test.ts: realm paths, ids and first-open creation (config/realm.ts).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceError } from '../../contracts/errors.ts';
import { createLogger } from '../../config/logger.ts';
import { appDataBase, newRealmId, openRealm, realmsRoot } from '../../config/realm.ts';
import { defaultConfig, loadConfigFile } from '../../config/toml.ts';

let root = '';
before(async () => {
  root = await mkdtemp(join(tmpdir(), 'warren-realm-'));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A logger whose JSON lines are captured for assertions. */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({
    level: 'debug',
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
  return { logger, lines };
}

const UUID_SHAPED = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe('realm paths', () => {
  it('uses the per-OS app data dir', () => {
    assert.equal(appDataBase('linux', {}, '/home/u'), '/home/u/.local/share/warren');
    assert.equal(appDataBase('linux', { XDG_DATA_HOME: '/xdg' }, '/home/u'), '/xdg/warren');
    assert.equal(appDataBase('linux', { XDG_DATA_HOME: 'relative' }, '/home/u'), '/home/u/.local/share/warren');
    assert.equal(appDataBase('darwin', {}, '/Users/u'), '/Users/u/Library/Application Support/warren');
    assert.equal(
      appDataBase('win32', { APPDATA: 'C:\\Users\\u\\AppData\\Roaming' }, 'C:\\Users\\u'),
      'C:\\Users\\u\\AppData\\Roaming\\warren',
    );
    assert.equal(appDataBase('win32', {}, 'C:\\Users\\u'), 'C:\\Users\\u\\AppData\\Roaming\\warren');
  });

  it('puts realms under <base>/warren/realms, or directly under --state-root', () => {
    assert.equal(realmsRoot({ platform: 'linux', env: {}, homedir: '/home/u' }), '/home/u/.local/share/warren/realms');
    assert.equal(realmsRoot({ stateRoot: '/srv/state' }), '/srv/state');
  });

  it('makes opaque, distinct, non-UUID realm ids', () => {
    const ids = new Set(Array.from({ length: 50 }, () => newRealmId()));
    assert.equal(ids.size, 50);
    for (const id of ids) {
      assert.match(id, /^realm-[0-9a-f]{24}$/);
      assert.doesNotMatch(id, UUID_SHAPED);
    }
  });
});

describe('openRealm', () => {
  it('creates a new isolated realm with its three files', async () => {
    const { logger, lines } = capturingLogger();
    const stateRoot = join(root, 'isolated');
    const realm = await openRealm({ stateRoot, isolated: true, logger });
    assert.match(realm.realmId, /^realm-[0-9a-f]{24}$/);
    assert.equal(realm.dir, join(stateRoot, realm.realmId));
    assert.equal(realm.backend, 'lmdb');
    assert.equal(realm.created, true);
    assert.equal(realm.storeDir, join(realm.dir, 'store'));
    assert.deepEqual((await readdir(realm.dir)).sort(), ['config.toml', 'config_state.json', 'realm_manifest.json', 'store']);
    const manifest = JSON.parse(await readFile(realm.manifestPath, 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.realm_id, realm.realmId);
    assert.equal(manifest.backend, 'lmdb');
    assert.equal(manifest.origin, 'generated');
    assert.ok(!Number.isNaN(Date.parse(String(manifest.created_at))));
    assert.deepEqual(JSON.parse(await readFile(realm.configStatePath, 'utf8')), { generation: 0 });
    assert.deepEqual(await loadConfigFile(realm.configPath), defaultConfig());
    assert.ok(lines.some((l) => l.msg === 'realm created' && l.realmId === realm.realmId));
  });

  it('keeps the pinned backend on reopen and warns about a different hint', async () => {
    const stateRoot = join(root, 'pinned');
    const first = await openRealm({ realm: 'team', stateRoot, backendHint: 'jsonl', isolated: false, logger: capturingLogger().logger });
    assert.equal(first.backend, 'jsonl');
    assert.equal(first.created, true);
    const manifest = JSON.parse(await readFile(first.manifestPath, 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.origin, 'explicit');

    const { logger, lines } = capturingLogger();
    const again = await openRealm({ realm: 'team', stateRoot, backendHint: 'memory', isolated: false, logger });
    assert.equal(again.backend, 'jsonl');
    assert.equal(again.created, false);
    const warning = lines.find((l) => l.level === 40);
    assert.ok(warning, 'a warn line');
    assert.equal(warning.requested, 'memory');
    assert.equal(warning.pinned, 'jsonl');

    const quiet = capturingLogger();
    const noHint = await openRealm({ realm: 'team', stateRoot, isolated: false, logger: quiet.logger });
    assert.equal(noHint.backend, 'jsonl');
    assert.equal(quiet.lines.filter((l) => l.level === 40).length, 0);
  });

  it('lets concurrent opens of one new realm all succeed and agree', async () => {
    const stateRoot = join(root, 'race');
    const hints = ['jsonl', 'memory', 'lmdb', 'jsonl', 'memory', 'lmdb', 'jsonl', 'memory'] as const;
    const { logger } = capturingLogger();
    const opened = await Promise.all(
      hints.map((backendHint) => openRealm({ realm: 'shared', stateRoot, backendHint, isolated: false, logger })),
    );
    assert.equal(opened.filter((r) => r.created).length, 1, 'exactly one creator');
    const pinned = opened[0]?.backend;
    for (const realm of opened) assert.equal(realm.backend, pinned);
    const manifest = JSON.parse(await readFile(join(stateRoot, 'shared', 'realm_manifest.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.backend, pinned);
    assert.deepEqual((await readdir(join(stateRoot, 'shared'))).sort(), [
      'config.toml',
      'config_state.json',
      'realm_manifest.json',
      'store',
    ]);
  });

  it('pins a new realm to sqlite when asked', async () => {
    const stateRoot = join(root, 'sqlite');
    const realm = await openRealm({ realm: 'lite', stateRoot, backendHint: 'sqlite', isolated: false, logger: capturingLogger().logger });
    assert.equal(realm.backend, 'sqlite');
    const manifest = JSON.parse(await readFile(join(stateRoot, 'lite', 'realm_manifest.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(manifest.backend, 'sqlite');
  });

  it('refuses to create a realm on a backend this build lacks and writes nothing', async () => {
    const stateRoot = join(root, 'unbuilt');
    const backendHint = 'cassandra' as unknown as 'sqlite';
    await assert.rejects(
      openRealm({ realm: 'pg', stateRoot, backendHint, isolated: false, logger: capturingLogger().logger }),
      (err: unknown) =>
        err instanceof ServiceError && /cassandra.*supported backends: lmdb, sqlite, postgres, jsonl, memory/.test(err.message),
    );
    await assert.rejects(readdir(join(stateRoot, 'pg')), { code: 'ENOENT' });
  });

  it('rejects an invalid realm id and --isolated with a realm', async () => {
    const { logger } = capturingLogger();
    await assert.rejects(openRealm({ realm: '../escape', stateRoot: root, isolated: false, logger }), /Invalid realm id/);
    await assert.rejects(openRealm({ realm: 'r', stateRoot: root, isolated: true, logger }), ServiceError);
  });
});
