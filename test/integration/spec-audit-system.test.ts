// test/integration/spec-audit-system.test.ts: clauses of the system, config and auth routes that the other
// suites do not pin (SPEC.md "Auth routes", "Observation and system routes", "Model catalog", "Versioning";
// wire-notes §2.8, §2.9): malformed binding/profile ids and login states are bad input (400 {error}, never a
// store fault), a wrapped config body from a newer client keeps its compare-and-set, every catalog model
// profile carries the capability booleans, the client decodes host feature flags an older server leaves
// out as false, GET /config never shows an OAuth client secret, and only the webhook admissions take a secret.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WarrenClient } from '../../client/src/client.ts';
import { call, startApp, type JsonReply } from '../helpers/app.ts';
import { authorize, startFakeOAuth } from '../helpers/fake-oauth.ts';

const R = 'test-realm';

function assertBadRequest(res: JsonReply, label: string): void {
  assert.equal(res.status, 400, `${label}: ${res.status} ${JSON.stringify(res.body)?.slice(0, 200)}`);
  assert.deepEqual(Object.keys(res.body), ['error'], `${label}: auth routes answer {error} only`);
}

describe('auth routes: malformed ids and login states are bad input', () => {
  it('a binding or profile id with control characters, or longer than 128 characters, answers 400 on every binding route', async (t) => {
    const app = await startApp(t);
    const store = (over: Record<string, unknown>) =>
      call(app.url, 'POST', '/auth/profiles', {
        realm_id: R,
        binding_id: 'main',
        provider: 'openai',
        auth_method: 'api_key',
        secret: 'sk-1',
        ...over,
      });
    assert.equal((await store({})).status, 201);
    assertBadRequest(await store({ binding_id: 'a\nb' }), 'store: control character in binding_id');
    assertBadRequest(await store({ binding_id: 'x', profile_id: 'p\u0001' }), 'store: control character in profile_id');

    for (const bad of [encodeURIComponent('a\nb'), 'b'.repeat(200), 'b'.repeat(8000)]) {
      const label = `binding ${bad.slice(0, 12)}… (${bad.length})`;
      assertBadRequest(await call(app.url, 'GET', `/auth/bindings/${bad}?realm_id=${R}`), `GET ${label}`);
      assertBadRequest(await call(app.url, 'GET', `/auth/bindings/${bad}/status?realm_id=${R}`), `status ${label}`);
      assertBadRequest(await call(app.url, 'DELETE', `/auth/bindings/${bad}?realm_id=${R}`), `DELETE ${label}`);
      assertBadRequest(await call(app.url, 'POST', `/auth/bindings/${bad}/logout?realm_id=${R}`), `logout ${label}`);
      assertBadRequest(await call(app.url, 'POST', `/auth/bindings/${bad}/test`, { realm_id: R }), `test ${label}`);
    }
    for (const bad of [encodeURIComponent('p\u0001'), 'p'.repeat(600), 'p'.repeat(8000)]) {
      const label = `profile_id ${bad.slice(0, 12)}… (${bad.length})`;
      assertBadRequest(await call(app.url, 'GET', `/auth/bindings/main?realm_id=${R}&profile_id=${bad}`), `GET ${label}`);
      assertBadRequest(await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}&profile_id=${bad}`), `status ${label}`);
      assertBadRequest(await call(app.url, 'DELETE', `/auth/bindings/main?realm_id=${R}&profile_id=${bad}`), `DELETE ${label}`);
      assertBadRequest(await call(app.url, 'POST', `/auth/bindings/main/logout?realm_id=${R}&profile_id=${bad}`), `logout ${label}`);
    }

    // Nothing was cleared or released along the way: the stored credential is intact.
    const status = await call(app.url, 'GET', `/auth/bindings/main/status?realm_id=${R}`);
    assert.equal(status.body.state, 'valid');
    // An unknown but well-formed binding is still 404, and a resolution failure still 422.
    assert.equal((await call(app.url, 'GET', `/auth/bindings/ghost?realm_id=${R}`)).status, 404);
    assert.equal((await call(app.url, 'POST', '/auth/bindings/ghost/test', { realm_id: R })).status, 422);
  });

  it('request members this server does not know are ignored (SPEC.md "Versioning")', async (t) => {
    const app = await startApp(t);
    const stored = await call(app.url, 'POST', '/auth/profiles', {
      realm_id: R,
      binding_id: 'main',
      provider: 'openai',
      auth_method: 'api_key',
      secret: 'sk-1',
      label: 'future',
    });
    assert.equal(stored.status, 201, JSON.stringify(stored.body));
    assert.equal('label' in stored.body, false);
    const tested = await call(app.url, 'POST', '/auth/bindings/main/test', { realm_id: R, deep: true });
    assert.equal(tested.status, 200, JSON.stringify(tested.body));
    assert.equal(tested.body.has_credential, true);
    const listed = await call(app.url, 'GET', `/auth/profiles?realm_id=${R}&page_token=x`);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
  });

  it('a login/complete with an absurdly long state answers 400, like any unknown state', async (t) => {
    const app = await startApp(t);
    const complete = (state: string) =>
      call(app.url, 'POST', '/auth/login/complete', {
        provider: 'openai',
        realm_id: R,
        binding_id: 'b',
        code: 'c',
        state,
        redirect_uri: 'http://127.0.0.1:9/cb',
      });
    assertBadRequest(await complete('unknown-state'), 'unknown state');
    assertBadRequest(await complete('s'.repeat(8000)), 'state of 8000 characters');
  });

  it('a session selector naming a malformed binding is refused with 400 before any turn', async (t) => {
    const app = await startApp(t, [{ text: 'never' }]);
    for (const binding of ['a\u0000b', 'b'.repeat(8000)]) {
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'openai', auth_binding: { realm: R, binding } });
      assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 200));
      assert.equal(res.body.code, 'BAD_REQUEST');
    }
    assert.equal(app.provider.requests.length, 0);
  });
});

describe('config: a wrapped body from a newer client', () => {
  it('PUT and PATCH {config|patch, expected_generation, <unknown member>} stay the wrapped form: checked, applied, the member ignored', async (t) => {
    const app = await startApp(t);
    const before = (await call(app.url, 'GET', '/config')).body;

    const stalePatch = await call(app.url, 'PATCH', '/config', {
      patch: { agent: { model: 'stale' } },
      expected_generation: 5,
      dry_run: false,
    });
    assert.equal(stalePatch.status, 400, JSON.stringify(stalePatch.body).slice(0, 200));
    assert.equal(stalePatch.body.error, 'Generation conflict: expected 5, current 0');
    const stalePut = await call(app.url, 'PUT', '/config', { config: before.config, expected_generation: 5, reason: 'x' });
    assert.equal(stalePut.status, 400, JSON.stringify(stalePut.body).slice(0, 200));
    assert.deepEqual((await call(app.url, 'GET', '/config')).body, before, 'a refused write changes nothing');

    const patched = await call(app.url, 'PATCH', '/config', {
      patch: { agent: { model: 'gpt-5.5' } },
      expected_generation: 0,
      dry_run: false,
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body).slice(0, 200));
    assert.equal(patched.body.generation, 1);
    assert.equal(patched.body.config.agent.model, 'gpt-5.5');
    for (const key of ['patch', 'expected_generation', 'dry_run']) assert.equal(key in patched.body.config, false, `${key} is not stored`);

    const config = { ...structuredClone(before.config), agent: { ...before.config.agent, model: 'claude-opus-5' } };
    const put = await call(app.url, 'PUT', '/config', { config, expected_generation: 1, reason: 'rotate' });
    assert.equal(put.status, 200, JSON.stringify(put.body).slice(0, 200));
    assert.equal(put.body.generation, 2);
    assert.deepEqual(put.body.config, config, 'the wrapped config is stored as it is, without the wrapper members');
  });
});

describe('model catalog profile', () => {
  it('every model profile carries the capability booleans vision, image_tool_results, inline_video, realtime, supports_web_search', async (t) => {
    const app = await startApp(t);
    const { status, body } = await call(app.url, 'GET', '/models/catalog');
    assert.equal(status, 200);
    let models = 0;
    for (const provider of body.providers) {
      for (const model of provider.models) {
        models++;
        for (const flag of ['vision', 'image_tool_results', 'inline_video', 'realtime', 'supports_web_search']) {
          assert.equal(typeof model.profile[flag], 'boolean', `${provider.provider}/${model.id} profile.${flag}`);
        }
      }
    }
    assert.ok(models > 0);
  });
});

describe('host feature flags in older payloads', () => {
  it('the client decodes flags an older server leaves out (multi_host_mobs, durable_jobs) as false, and passes present ones through', async (t) => {
    const app = await startApp(t);
    const current = await new WarrenClient(app.url).runtimeCapabilities();
    assert.deepEqual(current, (await call(app.url, 'GET', '/runtime/capabilities')).body, 'a current payload is unchanged');

    // An older server: same payloads without the two later flags, mobs on.
    const features: Record<string, boolean> = { ...current.features, mobs: true };
    delete features.multi_host_mobs;
    delete features.durable_jobs;
    const caps = { contract_version: current.contract_version, features };
    const info = { ...(await call(app.url, 'GET', '/runtime/host_info')).body, capabilities: caps };
    const old = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/runtime/host_info' ? info : caps));
    });
    await new Promise<void>((resolve) => old.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => old.close(() => resolve())));
    const client = new WarrenClient(`http://127.0.0.1:${(old.address() as AddressInfo).port}`);
    for (const decoded of [await client.runtimeCapabilities(), (await client.hostInfo()).capabilities]) {
      assert.equal(decoded.features.multi_host_mobs, false);
      assert.equal(decoded.features.durable_jobs, false);
      assert.equal(decoded.features.mobs, true);
      assert.deepEqual(Object.keys(decoded.features).sort(), Object.keys(current.features).sort());
    }
  });
});

describe('inbound authentication', () => {
  it('with WARREN_WEBHOOK_SECRET set, only the two webhook admissions need X-Webhook-Secret: /auth, /config, /comms/send and the system reads do not', async (t) => {
    const app = await startApp(t, [], { env: { WARREN_WEBHOOK_SECRET: 'hook-secret' } });
    for (const path of [
      '/health',
      '/config',
      '/capabilities',
      '/runtime/capabilities',
      '/runtime/health',
      '/runtime/host_info',
      '/models/catalog',
      '/realms',
      `/auth/profiles?realm_id=${R}`,
    ]) {
      assert.equal((await call(app.url, 'GET', path)).status, 200, path);
    }
    assert.equal((await call(app.url, 'PATCH', '/config', { agent: { model: 'gpt-5.5' } })).status, 200);
    const stored = await call(app.url, 'POST', '/auth/profiles', {
      realm_id: R,
      binding_id: 'main',
      provider: 'openai',
      auth_method: 'api_key',
      secret: 'sk-1',
    });
    assert.equal(stored.status, 201);
    // SPEC.md "Authentication" 3: comms send is unauthenticated; an unknown session is 404, not 401.
    const send = await call(app.url, 'POST', '/comms/send', {
      kind: 'peer_message',
      session_id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b',
      to: 'x',
      body: 'x',
    });
    assert.equal(send.status, 404, JSON.stringify(send.body));
    // The webhook admissions do need it.
    const hook = await call(app.url, 'POST', '/sessions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/external-events', {
      kind: 'generic_json',
      event_type: 'x',
      payload: {},
    });
    assert.equal(hook.status, 401);
  });
});

describe('config: no route returns a secret', () => {
  it('GET /config shows an OAuth client_secret as ***; writing that back keeps the real one, which the token request still sends', async (t) => {
    const oauth = await startFakeOAuth();
    t.after(() => oauth.close());
    const app = await startApp(t);
    const provider = { ...oauth.config(), client_secret: 'cs-real-secret' };
    const patched = await call(app.url, 'PATCH', '/config', { auth: { oauth: { anthropic: provider, openai: oauth.config() } } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body).slice(0, 200));
    const read = await call(app.url, 'GET', '/config');
    for (const body of [patched.body, read.body]) {
      assert.equal(body.config.auth.oauth.anthropic.client_secret, '***');
      assert.equal('client_secret' in body.config.auth.oauth.openai, false, 'a provider without a secret shows none');
      assert.ok(!JSON.stringify(body).includes('cs-real-secret'));
    }
    // A client that reads, edits and writes the config back (with the *** it was shown) keeps the secret.
    const edited = { ...read.body.config, agent: { ...read.body.config.agent, model: 'claude-opus-5' } };
    const put = await call(app.url, 'PUT', '/config', { config: edited, expected_generation: read.body.generation });
    assert.equal(put.status, 200, JSON.stringify(put.body).slice(0, 200));
    assert.equal(put.body.config.auth.oauth.anthropic.client_secret, '***');

    const redirect = 'http://127.0.0.1:53682/callback';
    const target = { provider: 'anthropic', realm_id: R, binding_id: 'claude' };
    const start = await call(app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: redirect });
    assert.equal(start.status, 200, JSON.stringify(start.body));
    const { code, state } = await authorize(start.body.authorize_url);
    const done = await call(app.url, 'POST', '/auth/login/complete', { ...target, code, state, redirect_uri: redirect });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(oauth.tokenRequests.at(-1)?.client_secret, 'cs-real-secret');
  });
});
