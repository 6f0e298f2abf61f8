// test/integration/auth-login.test.ts: OAuth logins through the real server against a loopback OAuth
// provider (test/helpers/fake-oauth.ts): PKCE S256 loopback login, device-code outcomes (202 / 429 / 400 /
// 200), token states (valid, expiring, expired, refresh_failed, reauth_required), refresh before expiry
// by timer and on use, and a failed refresh. Time moves through the injected auth clock; no sleeps.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { authorize, startFakeOAuth, type FakeOAuth } from '../helpers/fake-oauth.ts';

const R = 'test-realm';
const REDIRECT = 'http://127.0.0.1:53682/callback';
const target = { provider: 'anthropic', realm_id: R, binding_id: 'claude' };

interface Rig {
  app: TestApp;
  oauth: FakeOAuth;
  clock: { now: number };
}

async function rig(t: TestContext, auth: Record<string, unknown> = {}): Promise<Rig> {
  const oauth = await startFakeOAuth();
  t.after(() => oauth.close());
  const clock = { now: Date.parse('2030-01-01T00:00:00Z') };
  const app = await startApp(t, [], { clocks: { auth: () => clock.now } });
  const patch = await call(app.url, 'PATCH', '/config', {
    auth: { refresh_skew_secs: 300, ...auth, oauth: { anthropic: oauth.config() } },
  });
  assert.equal(patch.status, 200, JSON.stringify(patch.body));
  return { app, oauth, clock };
}

async function login(r: Rig, extra: Record<string, unknown> = {}) {
  const start = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: REDIRECT, ...extra });
  assert.equal(start.status, 200, JSON.stringify(start.body));
  const { code, state } = await authorize(start.body.authorize_url);
  assert.equal(state, start.body.state);
  return call(r.app.url, 'POST', '/auth/login/complete', { ...target, code, state, redirect_uri: REDIRECT, ...extra });
}

const status = async (r: Rig) => (await call(r.app.url, 'GET', `/auth/bindings/claude/status?realm_id=${R}`)).body;

describe('OAuth loopback login (PKCE S256)', () => {
  it('start answers an authorize URL with server-owned state and an S256 challenge; complete stores the tokens', async (t) => {
    const r = await rig(t);
    const start = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: REDIRECT });
    assert.deepEqual(Object.keys(start.body).sort(), ['authorize_url', 'provider', 'redirect_uri', 'state']);
    const url = new URL(start.body.authorize_url);
    assert.equal(url.origin + url.pathname, `${r.oauth.url}/authorize`);
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    assert.match(url.searchParams.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(url.searchParams.get('state'), start.body.state);
    assert.equal(url.searchParams.get('client_id'), 'warren-test');
    const { code, state } = await authorize(start.body.authorize_url);
    const done = await call(r.app.url, 'POST', '/auth/login/complete', { ...target, code, state, redirect_uri: REDIRECT });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual(done.body, {
      realm_id: R,
      binding_id: 'claude',
      auth_binding: { realm: R, binding: 'claude' },
      profile_id: 'claude',
      provider: 'anthropic',
      scopes: ['inference', 'profile'],
      has_refresh_token: true,
      expires_at: new Date(r.clock.now + 3600_000).toISOString(),
    });
    // The fake provider verified the verifier against the challenge (it answers invalid_grant otherwise).
    assert.match(r.oauth.tokenRequests[0].code_verifier, /^[A-Za-z0-9_-]{43}$/);
    const s = await status(r);
    assert.equal(s.state, 'valid');
    assert.equal(s.auth_method, 'oauth');
    assert.equal(s.account_id, 'acct-1');
    assert.equal(s.has_refresh_token, true);
    assert.ok(!JSON.stringify([start.body, done.body, s]).includes(r.oauth.issued[0]));
    // The state is single use.
    const again = await call(r.app.url, 'POST', '/auth/login/complete', { ...target, code, state, redirect_uri: REDIRECT });
    assert.equal(again.status, 400);
    assert.deepEqual(Object.keys(again.body), ['error']);
  });

  it('refuses a complete naming another binding, profile or realm, a non-loopback redirect and an unconfigured provider', async (t) => {
    const r = await rig(t);
    const start = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: REDIRECT });
    const { code, state } = await authorize(start.body.authorize_url);
    const base = { ...target, code, state, redirect_uri: REDIRECT };
    assert.equal((await call(r.app.url, 'POST', '/auth/login/complete', { ...base, binding_id: 'other' })).status, 400);
    assert.equal((await call(r.app.url, 'POST', '/auth/login/complete', { ...base, profile_id: 'p2' })).status, 400);
    const realm = await call(r.app.url, 'POST', '/auth/login/complete', { ...base, realm_id: 'elsewhere' });
    assert.equal(realm.status, 404);
    assert.deepEqual(Object.keys(realm.body), ['error']);
    const remote = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: 'https://evil.example/cb' });
    assert.equal(remote.status, 400);
    // A provider with no built-in preset (docs/oauth.md) and no [auth.oauth.<provider>] section.
    const unconfigured = await call(r.app.url, 'POST', '/auth/login/start', { ...target, provider: 'self_hosted', redirect_uri: REDIRECT });
    assert.equal(unconfigured.status, 400);
    assert.match(unconfigured.body.error, /auth\.oauth\.self_hosted/);
    // A wrong code: the provider refuses the grant (400), and the state is consumed.
    const start2 = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: REDIRECT });
    const bad = await call(r.app.url, 'POST', '/auth/login/complete', {
      ...target,
      code: 'forged',
      state: start2.body.state,
      redirect_uri: REDIRECT,
    });
    assert.equal(bad.status, 400);
    assert.match(bad.body.error, /invalid_grant/);
    // Nothing was stored: the binding does not exist.
    assert.equal((await call(r.app.url, 'GET', `/auth/bindings/claude/status?realm_id=${R}`)).status, 404);
  });

  it('an expired login state is refused', async (t) => {
    const r = await rig(t, { login_ttl_secs: 60 });
    const start = await call(r.app.url, 'POST', '/auth/login/start', { ...target, redirect_uri: REDIRECT });
    const { code, state } = await authorize(start.body.authorize_url);
    r.clock.now += 61_000;
    const late = await call(r.app.url, 'POST', '/auth/login/complete', { ...target, code, state, redirect_uri: REDIRECT });
    assert.equal(late.status, 400);
    assert.match(late.body.error, /expired/);
  });
});

describe('device-code login', () => {
  const start = (r: Rig) => call(r.app.url, 'POST', '/auth/login/device/start', target);
  const poll = (r: Rig, device_code: string, extra: Record<string, unknown> = {}) =>
    call(r.app.url, 'POST', '/auth/login/device/complete', { ...target, device_code, ...extra });

  it('answers 202 pending, 429 slow_down (provider and interval), then 200 ready with the tokens stored', async (t) => {
    const r = await rig(t);
    r.oauth.deviceInterval = 5;
    r.oauth.deviceScript.push('authorization_pending', 'slow_down', { ok: true });
    const s = await start(r);
    assert.equal(s.status, 200);
    assert.equal(s.body.provider, 'anthropic');
    assert.equal(s.body.user_code, 'ABCD-EFGH');
    assert.equal(s.body.interval, 5);
    assert.equal(s.body.expires_in, 600);
    assert.ok(s.body.verification_uri_complete);
    const code = s.body.device_code;
    assert.deepEqual(await poll(r, code).then((x) => [x.status, x.body]), [202, { state: 'pending' }]);
    // Polled again inside the interval: refused here, the provider never sees it.
    const polls = r.oauth.tokenRequests.length;
    assert.deepEqual(await poll(r, code).then((x) => [x.status, x.body]), [429, { state: 'slow_down' }]);
    assert.equal(r.oauth.tokenRequests.length, polls);
    r.clock.now += 5_000;
    assert.deepEqual(await poll(r, code).then((x) => [x.status, x.body]), [429, { state: 'slow_down' }]);
    assert.equal(r.oauth.tokenRequests.length, polls + 1);
    // The provider's slow_down added 5 s to the interval: 5 s later is still too soon.
    r.clock.now += 5_000;
    assert.equal((await poll(r, code)).status, 429);
    assert.equal(r.oauth.tokenRequests.length, polls + 1);
    r.clock.now += 5_000;
    const ready = await poll(r, code);
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.state, 'ready');
    assert.equal(ready.body.binding_id, 'claude');
    assert.equal(ready.body.has_refresh_token, true);
    assert.equal((await status(r)).state, 'valid');
    // The device code is spent.
    assert.equal((await poll(r, code)).status, 400);
  });

  it('answers 400 access_denied and 400 expired (provider expired_token and local expiry)', async (t) => {
    const r = await rig(t);
    r.oauth.deviceScript.push('access_denied', 'expired_token');
    const denied = await start(r);
    assert.deepEqual(await poll(r, denied.body.device_code).then((x) => [x.status, x.body]), [400, { state: 'access_denied' }]);
    const expired = await start(r);
    assert.deepEqual(await poll(r, expired.body.device_code).then((x) => [x.status, x.body]), [400, { state: 'expired' }]);
    const late = await start(r);
    r.clock.now += 601_000;
    assert.deepEqual(await poll(r, late.body.device_code).then((x) => [x.status, x.body]), [400, { state: 'expired' }]);
    assert.equal((await call(r.app.url, 'GET', `/auth/bindings/claude/status?realm_id=${R}`)).status, 404);
  });

  it('refuses a complete naming another binding or profile, and a provider fault is 502', async (t) => {
    const r = await rig(t);
    const s = await start(r);
    assert.equal((await poll(r, s.body.device_code, { binding_id: 'other' })).status, 400);
    assert.equal((await poll(r, s.body.device_code, { profile_id: 'p' })).status, 400);
    r.oauth.deviceScript.push({ ok: false, status: 503, error: 'temporarily_unavailable' });
    const fault = await poll(r, s.body.device_code);
    assert.equal(fault.status, 502);
    assert.deepEqual(Object.keys(fault.body), ['error']);
  });
});

describe('token lifetime and refresh', () => {
  it('reports expiring inside the refresh window and expired past expiry (no refresh token)', async (t) => {
    const r = await rig(t);
    r.oauth.deviceScript.push({ ok: true, noRefreshToken: true });
    const s = await call(r.app.url, 'POST', '/auth/login/device/start', target);
    assert.equal(
      (await call(r.app.url, 'POST', '/auth/login/device/complete', { ...target, device_code: s.body.device_code })).status,
      200,
    );
    assert.equal((await status(r)).state, 'valid');
    r.clock.now += 3_400_000;
    const expiring = await status(r);
    assert.equal(expiring.state, 'expiring');
    assert.equal(expiring.has_refresh_token, false);
    r.clock.now += 200_001;
    assert.equal((await status(r)).state, 'expired');
  });

  it('refreshes before expiry on its own timer (a token issued inside the window is refreshed at once)', async (t) => {
    const r = await rig(t);
    r.oauth.expiresIn = 60;
    const refreshed = r.oauth.nextGrant('refresh_token');
    assert.equal((await login(r)).status, 200);
    const form = await refreshed;
    assert.equal(form.refresh_token, 'fake-refresh-2');
    const s = await status(r);
    assert.equal(s.state, 'valid');
    assert.equal(s.last_refresh_at, new Date(r.clock.now).toISOString());
    assert.equal(s.expires_at, new Date(r.clock.now + 3600_000).toISOString());
    assert.equal(r.oauth.tokenRequests.filter((f) => f.grant_type === 'refresh_token').length, 1);
  });

  it('a failed refresh reports refresh_failed; a rejected refresh grant reports reauth_required', async (t) => {
    const r = await rig(t);
    r.oauth.expiresIn = 60;
    r.oauth.refreshScript.push({ ok: false, status: 503, error: 'temporarily_unavailable' });
    const refreshed = r.oauth.nextGrant('refresh_token');
    assert.equal((await login(r)).status, 200);
    await refreshed;
    assert.equal((await status(r)).state, 'refresh_failed');
    // The next use retries the refresh; this time the provider rejects the grant.
    r.oauth.refreshScript.push({ ok: false, status: 400, error: 'invalid_grant' });
    const test = await call(r.app.url, 'POST', '/auth/bindings/claude/test', { realm_id: R });
    assert.equal(test.body.has_credential, true);
    const again = await call(r.app.url, 'POST', '/sessions', { prompt: 'hi', auth_binding: { realm: R, binding: 'claude' } });
    // The scripted provider stands in for anthropic here; the unexpired token still serves the turn.
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal((await status(r)).state, 'reauth_required');
    r.clock.now += 61_000;
    const refused = await call(r.app.url, 'POST', '/sessions', { prompt: 'hi', auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(refused.status, 502);
    assert.equal(refused.body.code, 'PROVIDER_ERROR');
  });

  it('logout after an OAuth login releases the tokens', async (t) => {
    const r = await rig(t);
    await login(r);
    const out = await call(r.app.url, 'POST', `/auth/bindings/claude/logout?realm_id=${R}`);
    assert.equal(out.body.cleared, true);
    const s = await status(r);
    assert.equal(s.state, 'released');
    assert.equal(s.has_refresh_token, false);
  });
});
