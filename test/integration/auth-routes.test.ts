// test/integration/auth-routes.test.ts: the /auth binding routes through the real server (SPEC.md "Auth
// routes"; wire-notes §2.9): store (201), list, resolve, test (200 / 422), status, logout (released),
// delete (absent), `{error}`-only error bodies, the 0600 realm key file and missing_credential after the
// key is replaced.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { call, startApp } from '../helpers/app.ts';

const R = 'test-realm';
const SECRET = 'sk-stored-secret-0123456789';
const store = (url: string, extra: Record<string, unknown> = {}) =>
  call(url, 'POST', '/auth/profiles', {
    realm_id: R,
    binding_id: 'main',
    provider: 'anthropic',
    auth_method: 'api_key',
    secret: SECRET,
    ...extra,
  });

function assertErrorOnly(res: { status: number; body: unknown }, status: number): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body as object), ['error']);
  assert.equal(typeof (res.body as { error: unknown }).error, 'string');
}

describe('auth binding routes', () => {
  it('stores a credential (201) and lists, resolves, tests and reports it without ever returning the secret', async (t) => {
    const app = await startApp(t);
    const stored = await store(app.url);
    assert.equal(stored.status, 201);
    assert.deepEqual(stored.body, {
      realm_id: R,
      binding_id: 'main',
      auth_binding: { realm: R, binding: 'main' },
      profile_id: 'main',
      provider: 'anthropic',
      auth_method: 'api_key',
      stored: true,
    });
    const list = await call(app.url, 'GET', `/auth/profiles?realm_id=${R}`);
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, {
      realm_id: R,
      auth_profiles: [{ id: 'main', provider: 'anthropic', auth_method: 'api_key', source_kind: 'managed_store' }],
      backend_profiles: [{ id: 'anthropic', provider: 'anthropic', backend_kind: 'default' }],
      bindings: [{ id: 'main', backend_profile: 'anthropic', auth_profile: 'main' }],
    });
    const got = await call(app.url, 'GET', `/auth/bindings/main?realm_id=${R}`);
    assert.deepEqual(got.body, {
      auth_binding: { realm: R, binding: 'main' },
      binding_id: 'main',
      profile_id: 'main',
      auth_profile: { id: 'main', provider: 'anthropic', auth_method: 'api_key', source_kind: 'managed_store' },
    });
    const tested = await call(app.url, 'POST', '/auth/bindings/main/test', { realm_id: R });
    assert.deepEqual(tested, { ...tested, status: 200 });
    assert.deepEqual(tested.body, {
      state: 'valid',
      auth_binding: { realm: R, binding: 'main' },
      binding_id: 'main',
      profile_id: 'main',
      provider: 'anthropic',
      backend_profile_id: 'anthropic',
      has_credential: true,
    });
    const status = await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`);
    assert.deepEqual(status.body, {
      realm_id: R,
      binding_id: 'main',
      auth_binding: { realm: R, binding: 'main' },
      profile_id: 'main',
      provider: 'anthropic',
      auth_method: 'api_key',
      state: 'valid',
      has_refresh_token: false,
    });
    for (const r of [stored, list, got, tested, status]) assert.ok(!JSON.stringify(r.body).includes(SECRET));
  });

  it('a profile_id override stores under that profile and is echoed in auth_binding', async (t) => {
    const app = await startApp(t);
    const stored = await store(app.url, { profile_id: 'alt', auth_method: 'static_bearer' });
    assert.equal(stored.status, 201);
    assert.deepEqual(stored.body.auth_binding, { realm: R, binding: 'main', profile: 'alt' });
    assert.equal(stored.body.profile_id, 'alt');
    const status = await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}&profile_id=alt`);
    assert.equal(status.body.state, 'valid');
    assert.equal(status.body.auth_method, 'static_bearer');
  });

  it('logout releases the binding (state released); delete clears it (state absent); both are idempotent', async (t) => {
    const app = await startApp(t);
    await store(app.url);
    const out = await call(app.url, 'POST', `/auth/bindings/main/logout?realm_id=${R}`);
    assert.deepEqual(out.body, {
      realm_id: R,
      binding_id: 'main',
      auth_binding: { realm: R, binding: 'main' },
      profile_id: 'main',
      cleared: true,
    });
    assert.equal((await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`)).body.state, 'released');
    const tested = await call(app.url, 'POST', '/auth/bindings/main/test', { realm_id: R });
    assert.equal(tested.body.has_credential, false);
    assert.equal((await call(app.url, 'POST', `/auth/bindings/main/logout?realm_id=${R}`)).body.cleared, false);
    assert.equal((await store(app.url)).status, 201);
    const del = await call(app.url, 'DELETE', `/auth/bindings/main?realm_id=${R}`);
    assert.equal(del.status, 200);
    assert.equal(del.body.cleared, true);
    const afterDelete = await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`);
    assert.equal(afterDelete.body.state, 'absent');
    // The reference's status keeps the binding's identity after a delete, auth_method included.
    assert.equal(afterDelete.body.auth_method, 'api_key');
    assert.equal(afterDelete.body.provider, 'anthropic');
    assert.equal((await call(app.url, 'DELETE', `/auth/bindings/main?realm_id=${R}`)).body.cleared, false);
    // After a delete the profile may change its method.
    assert.equal((await store(app.url, { auth_method: 'static_bearer' })).status, 201);
  });

  it('answers bad input, unknown realms and unknown bindings with {error} only', async (t) => {
    const app = await startApp(t);
    assertErrorOnly(await call(app.url, 'GET', '/auth/profiles'), 400);
    assertErrorOnly(await call(app.url, 'GET', '/auth/profiles?realm_id=other'), 404);
    assertErrorOnly(await call(app.url, 'POST', '/auth/profiles', '{"realm_id":', { 'content-type': 'application/json' }), 400);
    assertErrorOnly(await store(app.url, { auth_method: 'oauth' }), 400);
    assertErrorOnly(await store(app.url, { provider: 'nope' }), 400);
    assertErrorOnly(await store(app.url, { realm_id: 'other' }), 404);
    assertErrorOnly(await call(app.url, 'GET', `/auth/bindings/ghost?realm_id=${R}`), 404);
    assertErrorOnly(await call(app.url, 'GET', `/auth/bindings/ghost/status?realm_id=${R}`), 404);
    assertErrorOnly(await call(app.url, 'DELETE', `/auth/bindings/ghost?realm_id=${R}`), 404);
    assertErrorOnly(await call(app.url, 'POST', `/auth/bindings/ghost/logout?realm_id=${R}`), 404);
    assertErrorOnly(await call(app.url, 'POST', '/auth/bindings/main/test', { realm_id: 'other' }), 404);
    assertErrorOnly(
      // No built-in OAuth preset and no [auth.oauth.other] section.
      await call(app.url, 'POST', '/auth/login/start', {
        provider: 'other',
        realm_id: R,
        binding_id: 'b',
        redirect_uri: 'http://127.0.0.1:1/cb',
      }),
      400,
    );
    await store(app.url);
    // A stored profile keeps its method and provider.
    assertErrorOnly(await store(app.url, { auth_method: 'static_bearer' }), 400);
    assertErrorOnly(await store(app.url, { provider: 'openai' }), 400);
    const failed = await call(app.url, 'POST', '/auth/bindings/ghost/test', { realm_id: R });
    assert.equal(failed.status, 422);
    assert.equal(failed.body.state, 'error');
    assert.match(failed.body.error, /^Binding resolution failed: /);
  });

  it('refuses an invalid [auth] config section', async (t) => {
    const app = await startApp(t);
    const bad = await call(app.url, 'PATCH', '/config', { auth: { refresh_skew_secs: -1 } });
    assert.equal(bad.status, 400);
    // A section may leave fields to the built-in preset, but what it sets must have the right type.
    const badType = await call(app.url, 'PATCH', '/config', { auth: { oauth: { anthropic: { client_id: 5 } } } });
    assert.equal(badType.status, 400);
    const badParams = await call(app.url, 'PATCH', '/config', { auth: { oauth: { openai: { authorize_params: { a: 1 } } } } });
    assert.equal(badParams.status, 400);
  });

  it('config bindings join a configured backend profile; env-sourced profiles report missing_credential when unset', async (t) => {
    const app = await startApp(t, [], { env: { TEAM_KEY: 'from-env' } });
    const patch = await call(app.url, 'PATCH', '/config', {
      realm: {
        [R]: {
          backend: { local: { provider: 'openai', base_url: 'http://127.0.0.1:9/v1' } },
          auth: {
            envkey: { provider: 'openai', auth_method: 'api_key', source_kind: 'env', env: 'TEAM_KEY' },
            nokey: { provider: 'openai', source_kind: 'env', env: 'UNSET_KEY' },
          },
          binding: {
            team: { backend_profile: 'local', auth_profile: 'envkey' },
            broken: { backend_profile: 'local', auth_profile: 'nokey' },
          },
        },
      },
    });
    assert.equal(patch.status, 200, JSON.stringify(patch.body));
    const list = await call(app.url, 'GET', `/auth/profiles?realm_id=${R}`);
    assert.deepEqual(list.body.backend_profiles, [
      { id: 'local', provider: 'openai', backend_kind: 'default', base_url: 'http://127.0.0.1:9/v1' },
    ]);
    assert.equal((await call(app.url, 'GET', `/auth/bindings/team/status?realm_id=${R}`)).body.state, 'valid');
    assert.equal((await call(app.url, 'GET', `/auth/bindings/broken/status?realm_id=${R}`)).body.state, 'missing_credential');
    // An env-sourced profile is not the managed store's to write.
    const refused = await call(app.url, 'POST', '/auth/profiles', {
      realm_id: R,
      binding_id: 'team',
      provider: 'openai',
      auth_method: 'api_key',
      secret: 'x',
    });
    assertErrorOnly(refused, 400);
  });

  it('keeps the realm key in a 0600 file, never stores the secret in plain text, and reports missing_credential when the key is replaced', async (t) => {
    const first = await startApp(t);
    assert.equal((await store(first.url)).status, 201);
    await first.close();
    const keyPath = join(first.stateRoot, R, 'credentials.key');
    assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
    const { readdir } = await import('node:fs/promises');
    const files = await readdir(first.stateRoot, { recursive: true, withFileTypes: true });
    for (const f of files.filter((e) => e.isFile())) {
      const bytes = await readFile(join(f.parentPath, f.name));
      assert.ok(!bytes.includes(SECRET), `plain secret found in ${f.name}`);
    }
    // Same realm, same key: the credential is still valid after a restart.
    const reopen = async () => {
      const app = await createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: first.stateRoot,
        contextRoot: first.stateRoot,
        realm: R,
        logger: pino({ level: 'silent' }),
      });
      t.after(() => app.close());
      return app;
    };
    const second = await reopen();
    assert.equal((await call(second.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`)).body.state, 'valid');
    await second.close();
    await writeFile(keyPath, `${randomBytes(32).toString('base64')}\n`, { mode: 0o644 });
    const third = await reopen();
    assert.equal((await stat(keyPath)).mode & 0o777, 0o600);
    assert.equal((await call(third.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`)).body.state, 'missing_credential');
    assert.equal((await call(third.url, 'POST', '/auth/bindings/main/test', { realm_id: R })).body.has_credential, false);
  });
});
