// test/integration/auth-presets.test.ts: the built-in OAuth login presets (actors/auth/oauth-presets.ts,
// docs/oauth.md) through the real server. With no `[auth.oauth]` config, login/start answers each preset
// vendor's authorize URL (host, public client id, scopes, PKCE S256, state); a config that points the
// endpoints at the loopback fake OAuth server keeps the preset's client and completes the login, the
// refresh and a turn; GET /auth/oauth/providers shows the effective clients without their secrets; a
// provider with no preset answers 400 naming what to configure. login/start never calls the provider, and
// every token request goes to the loopback fake: no request reaches a real vendor.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { authorize, startFakeOAuth, type FakeOAuth } from '../helpers/fake-oauth.ts';
import { textResponder } from '../helpers/vendor-replies.ts';
import { within } from '../helpers/wait.ts';
import { startFakeVendor } from '../providers/fake-vendor.ts';

const R = 'test-realm';
// The public facts docs/oauth.md lists, spelled out here so a drift in the presets shows up.
const CLAUDE_CLIENT = '9d1c250a-e61b-44d9-88ed-5944d1962f5e';
const CODEX_CLIENT = 'app_EMoamEEZ73f0CkXaXp7hrann';
const GEMINI_CLIENT = '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com';
const GEMINI_SECRET = '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';

const PRESETS = [
  {
    provider: 'anthropic',
    redirect: 'http://localhost:54545/callback',
    authorize: 'https://claude.ai/oauth/authorize',
    client: CLAUDE_CLIENT,
    scope: 'org:create_api_key user:profile user:inference',
    extra: { code: 'true' },
  },
  {
    provider: 'openai',
    redirect: 'http://localhost:1455/auth/callback',
    authorize: 'https://auth.openai.com/oauth/authorize',
    client: CODEX_CLIENT,
    scope: 'openid profile email offline_access',
    extra: { id_token_add_organizations: 'true', codex_cli_simplified_flow: 'true' },
  },
  {
    provider: 'gemini',
    redirect: 'http://127.0.0.1:8085/oauth2callback',
    authorize: 'https://accounts.google.com/o/oauth2/v2/auth',
    client: GEMINI_CLIENT,
    scope:
      'https://www.googleapis.com/auth/cloud-platform https://www.googleapis.com/auth/userinfo.email https://www.googleapis.com/auth/userinfo.profile',
    extra: { access_type: 'offline' },
  },
] as const;

const start = (app: TestApp, provider: string, redirect_uri: string, binding_id = 'b') =>
  call(app.url, 'POST', '/auth/login/start', { provider, realm_id: R, binding_id, redirect_uri });

async function patchConfig(app: TestApp, patch: Record<string, unknown>): Promise<void> {
  const res = await call(app.url, 'PATCH', '/config', patch);
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function fakeOAuth(t: TestContext): Promise<FakeOAuth> {
  const oauth = await startFakeOAuth();
  t.after(() => oauth.close());
  return oauth;
}

describe('built-in OAuth presets with no [auth.oauth] config', () => {
  it('login/start answers each preset vendor its authorize URL: host, public client, scopes, PKCE S256 and state', async (t) => {
    const app = await startApp(t);
    for (const p of PRESETS) {
      const res = await start(app, p.provider, p.redirect);
      assert.equal(res.status, 200, `${p.provider}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body).sort(), ['authorize_url', 'provider', 'redirect_uri', 'state']);
      const url = new URL(res.body.authorize_url);
      assert.equal(url.origin + url.pathname, p.authorize, p.provider);
      const q = url.searchParams;
      assert.equal(q.get('response_type'), 'code');
      assert.equal(q.get('client_id'), p.client, p.provider);
      assert.equal(q.get('redirect_uri'), p.redirect);
      assert.equal(q.get('scope'), p.scope, p.provider);
      assert.equal(q.get('code_challenge_method'), 'S256');
      assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.match(res.body.state, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(q.get('state'), res.body.state);
      for (const [k, v] of Object.entries(p.extra)) assert.equal(q.get(k), v, `${p.provider} ${k}`);
      // An installed app's client secret belongs in the token request, never in a URL or an answer.
      assert.ok(!JSON.stringify(res.body).includes(GEMINI_SECRET), p.provider);
      assert.equal(q.get('client_secret'), null);
    }
    // Each start is its own login: a second one for the same vendor has a new state and challenge.
    const [a, b] = [await start(app, 'anthropic', PRESETS[0].redirect), await start(app, 'anthropic', PRESETS[0].redirect)];
    assert.notEqual(a.body.state, b.body.state);
    assert.notEqual(
      new URL(a.body.authorize_url).searchParams.get('code_challenge'),
      new URL(b.body.authorize_url).searchParams.get('code_challenge'),
    );
  });

  it('GET /auth/oauth/providers shows the presets in effect, never the client secret; GET /config stays the file as written', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'GET', '/auth/oauth/providers');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.realm_id, R);
    assert.deepEqual(
      res.body.providers.map((p: Record<string, unknown>) => [p.provider, p.source, p.client_id, p.has_client_secret, p.flows]),
      [
        ['anthropic', 'preset', CLAUDE_CLIENT, false, ['loopback']],
        ['gemini', 'preset', GEMINI_CLIENT, true, ['loopback']],
        ['openai', 'preset', CODEX_CLIENT, false, ['loopback']],
      ],
    );
    const openai = res.body.providers.find((p: { provider: string }) => p.provider === 'openai');
    assert.equal(openai.token_endpoint, 'https://auth.openai.com/oauth/token');
    assert.deepEqual(openai.redirect_uris, ['http://localhost:1455/auth/callback', 'http://localhost:1457/auth/callback']);
    const anthropic = res.body.providers.find((p: { provider: string }) => p.provider === 'anthropic');
    assert.equal(anthropic.token_endpoint, 'https://platform.claude.com/v1/oauth/token');
    assert.equal(anthropic.exchange_sends_state, true);
    assert.ok(!JSON.stringify(res.body).includes(GEMINI_SECRET));
    const config = await call(app.url, 'GET', '/config');
    assert.equal(config.body.config.auth?.oauth, undefined, 'presets are not written into the config');
    assert.ok(!JSON.stringify(config.body).includes(GEMINI_SECRET));
  });

  it('refuses a redirect the vendor does not allow-list, a device login no preset offers, and a provider with no preset', async (t) => {
    const app = await startApp(t);
    const wrongPort = await start(app, 'openai', 'http://localhost:9999/auth/callback');
    assert.equal(wrongPort.status, 400);
    assert.deepEqual(Object.keys(wrongPort.body), ['error']);
    assert.match(wrongPort.body.error, /http:\/\/localhost:1455\/auth\/callback/);
    assert.equal((await start(app, 'openai', 'http://localhost:1457/auth/callback')).status, 200);
    // Every preset still needs a loopback redirect.
    assert.equal((await start(app, 'anthropic', 'https://console.anthropic.com/oauth/code/callback')).status, 400);

    const device = await call(app.url, 'POST', '/auth/login/device/start', { provider: 'anthropic', realm_id: R, binding_id: 'b' });
    assert.equal(device.status, 400);
    assert.match(device.body.error, /\[auth\.oauth\.anthropic\] has no device_authorization_endpoint/);

    for (const provider of ['self_hosted', 'other']) {
      const none = await start(app, provider, 'http://127.0.0.1:53682/callback');
      assert.equal(none.status, 400);
      assert.deepEqual(Object.keys(none.body), ['error']);
      assert.match(none.body.error, new RegExp(`\\[auth\\.oauth\\.${provider}\\] with client_id, token_endpoint`));
      assert.match(none.body.error, /presets for anthropic, gemini, openai/);
    }
    // A section for a provider with no preset must name the client and the token endpoint itself.
    await patchConfig(app, {
      auth: { oauth: { self_hosted: { client_id: 'mine', authorization_endpoint: 'http://127.0.0.1:9/authorize' } } },
    });
    const partial = await start(app, 'self_hosted', 'http://127.0.0.1:53682/callback');
    assert.equal(partial.status, 400);
    assert.match(partial.body.error, /\[auth\.oauth\.self_hosted\] needs token_endpoint/);
    const listed = await call(app.url, 'GET', '/auth/oauth/providers');
    const selfHosted = listed.body.providers.find((p: { provider: string }) => p.provider === 'self_hosted');
    assert.equal(selfHosted.source, 'config');
    assert.deepEqual(selfHosted.flows, []);
    assert.match(selfHosted.problem, /needs token_endpoint/);
    // Nothing was stored by any refused start.
    assert.equal((await call(app.url, 'GET', `/auth/bindings/b/status?realm_id=${R}`)).status, 404);
  });
});

describe('a config override of a preset', () => {
  it('keeps the preset client and completes the login against the loopback fake: code exchange, stored binding, a turn', async (t) => {
    const oauth = await fakeOAuth(t);
    const vendor = await startFakeVendor([textResponder('anthropic', 'ok')]);
    t.after(() => vendor.close());
    const app = await startApp(t, [], { env: { ANTHROPIC_API_KEY: 'env-key-not-sent' }, providerOverrides: {} });
    await patchConfig(app, {
      auth: { oauth: { anthropic: { authorization_endpoint: `${oauth.url}/authorize`, token_endpoint: `${oauth.url}/token` } } },
      realm: {
        [R]: { backend: { fake: { provider: 'anthropic', base_url: vendor.url } }, binding: { claude: { backend_profile: 'fake' } } },
      },
    });
    const view = (await call(app.url, 'GET', '/auth/oauth/providers')).body.providers.find(
      (p: { provider: string }) => p.provider === 'anthropic',
    );
    assert.equal(view.source, 'preset+config');
    assert.equal(view.token_endpoint, `${oauth.url}/token`);
    assert.equal(view.client_id, CLAUDE_CLIENT);

    const redirect = 'http://localhost:54545/callback';
    const started = await start(app, 'anthropic', redirect, 'claude');
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const url = new URL(started.body.authorize_url);
    assert.equal(url.origin + url.pathname, `${oauth.url}/authorize`);
    assert.equal(url.searchParams.get('client_id'), CLAUDE_CLIENT);
    assert.equal(url.searchParams.get('scope'), 'org:create_api_key user:profile user:inference');
    assert.equal(url.searchParams.get('code'), 'true');
    const { code, state } = await authorize(started.body.authorize_url);
    const done = await call(app.url, 'POST', '/auth/login/complete', {
      provider: 'anthropic',
      realm_id: R,
      binding_id: 'claude',
      code,
      state,
      redirect_uri: redirect,
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.has_refresh_token, true);
    // The fake checked the PKCE verifier against the S256 challenge; the preset's client and the state went along.
    const form = oauth.tokenRequests[0];
    assert.equal(form.grant_type, 'authorization_code');
    assert.equal(form.client_id, CLAUDE_CLIENT);
    assert.equal(form.state, started.body.state);
    assert.equal(form.redirect_uri, redirect);
    assert.equal('client_secret' in form, false);
    const status = await call(app.url, 'GET', `/auth/bindings/claude/status?realm_id=${R}`);
    assert.equal(status.body.state, 'valid');
    assert.equal(status.body.auth_method, 'oauth');

    const turn = await call(app.url, 'POST', '/sessions', {
      prompt: 'hi',
      model: 'claude-sonnet-4-6',
      auth_binding: { realm: R, binding: 'claude' },
    });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(vendor.requests.length, 1);
    assert.equal(vendor.requests[0].headers.authorization, `Bearer ${oauth.issued[0]}`);
    assert.equal(vendor.requests[0].headers['x-api-key'], undefined);
  });

  it('an installed-app preset sends its client secret to the token endpoint on login and refresh, and logs and answers never show it', async (t) => {
    const oauth = await fakeOAuth(t);
    const logs: string[] = [];
    const app = await startApp(t, [], { logger: pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) }) });
    await patchConfig(app, {
      auth: { oauth: { gemini: { authorization_endpoint: `${oauth.url}/authorize`, token_endpoint: `${oauth.url}/token` } } },
    });
    oauth.expiresIn = 60; // inside the refresh window: the refresh timer fires at once
    const refreshed = oauth.nextGrant('refresh_token');
    const redirect = 'http://127.0.0.1:8085/oauth2callback';
    const started = await start(app, 'gemini', redirect, 'g');
    assert.equal(new URL(started.body.authorize_url).searchParams.get('access_type'), 'offline');
    const { code, state } = await authorize(started.body.authorize_url);
    const done = await call(app.url, 'POST', '/auth/login/complete', {
      provider: 'gemini',
      realm_id: R,
      binding_id: 'g',
      code,
      state,
      redirect_uri: redirect,
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(oauth.tokenRequests[0].client_id, GEMINI_CLIENT);
    assert.equal(oauth.tokenRequests[0].client_secret, GEMINI_SECRET);
    assert.equal('state' in oauth.tokenRequests[0], false, 'only a client that asks for it gets the state');
    const refresh = await within('the scheduled refresh grant', refreshed);
    assert.equal(refresh.client_id, GEMINI_CLIENT);
    assert.equal(refresh.client_secret, GEMINI_SECRET);

    const answers = [
      started.body,
      done.body,
      (await call(app.url, 'GET', '/auth/oauth/providers')).body,
      (await call(app.url, 'GET', '/config')).body,
      (await call(app.url, 'GET', `/auth/bindings/g/status?realm_id=${R}`)).body,
    ];
    assert.ok(logs.length > 5, 'trace logging captured lines');
    assert.ok(!JSON.stringify(answers).includes(GEMINI_SECRET), 'an answer shows the client secret');
    assert.ok(!logs.join('\n').includes(GEMINI_SECRET), 'a log line shows the client secret');
  });

  it('a field the config sets replaces the preset field; preset = false drops the preset', async (t) => {
    const oauth = await fakeOAuth(t);
    const app = await startApp(t);
    const redirect = 'http://localhost:1455/auth/callback';
    await patchConfig(app, {
      auth: { oauth: { openai: { client_id: 'my-own-client', scopes: ['openid'], authorize_params: {}, redirect_uris: [redirect] } } },
    });
    const url = new URL((await start(app, 'openai', redirect)).body.authorize_url);
    assert.equal(url.origin + url.pathname, 'https://auth.openai.com/oauth/authorize');
    assert.equal(url.searchParams.get('client_id'), 'my-own-client');
    assert.equal(url.searchParams.get('scope'), 'openid');
    assert.equal(url.searchParams.get('id_token_add_organizations'), null);
    assert.equal((await start(app, 'openai', 'http://localhost:1457/auth/callback')).status, 400);

    // Without the preset, the anthropic section is a plain client: no extra authorize parameter, no state in the exchange.
    await patchConfig(app, { auth: { oauth: { anthropic: { preset: false, ...oauth.config() } } } });
    const listed = (await call(app.url, 'GET', '/auth/oauth/providers')).body.providers;
    assert.deepEqual(
      listed.find((p: { provider: string }) => p.provider === 'anthropic'),
      {
        provider: 'anthropic',
        source: 'config',
        client_id: 'warren-test',
        has_client_secret: false,
        authorization_endpoint: `${oauth.url}/authorize`,
        token_endpoint: `${oauth.url}/token`,
        device_authorization_endpoint: `${oauth.url}/device`,
        scopes: ['inference'],
        exchange_sends_state: false,
        flows: ['loopback', 'device'],
      },
    );
    const cb = 'http://127.0.0.1:53682/callback';
    const started = await start(app, 'anthropic', cb);
    assert.equal(new URL(started.body.authorize_url).searchParams.get('code'), null);
    const { code, state } = await authorize(started.body.authorize_url);
    const done = await call(app.url, 'POST', '/auth/login/complete', {
      provider: 'anthropic',
      realm_id: R,
      binding_id: 'b',
      code,
      state,
      redirect_uri: cb,
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(oauth.tokenRequests[0].client_id, 'warren-test');
    assert.equal('state' in oauth.tokenRequests[0], false);
    // preset = false with nothing else leaves nothing to log in with.
    await patchConfig(app, { auth: { oauth: { anthropic: null } } });
    await patchConfig(app, { auth: { oauth: { anthropic: { preset: false } } } });
    const bare = await start(app, 'anthropic', cb);
    assert.equal(bare.status, 400);
    assert.match(bare.body.error, /\[auth\.oauth\.anthropic\] needs client_id and token_endpoint/);
  });
});
