// test/integration/auth-sessions.test.ts: the credential selector `auth_binding` on create and continue,
// through the real server and a loopback vendor speaking the Anthropic Messages wire: a stored binding's
// secret (and backend base URL) reaches the provider instead of the environment key; realm default
// bindings; an unknown binding is refused before anything is created; a hot swap on continue; a token
// refreshed on use; and no secret in logs, history, ledger, responses or the realm's files.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pino } from 'pino';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { startFakeOAuth } from '../helpers/fake-oauth.ts';
import { frame, sseReply, startFakeVendor, type FakeVendor } from '../providers/fake-vendor.ts';

const R = 'test-realm';
const ENV_KEY = 'env-key-must-not-be-sent';
const SECRET = 'sk-ant-stored-7f3a9c2e';
const SECRET2 = 'bearer-stored-51d0e8b4';
const MODEL = 'claude-sonnet-4-6';

const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);
const reply = sseReply([
  ev({
    type: 'message_start',
    message: {
      id: 'm',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 3, output_tokens: 1 },
    },
  }),
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'ok' } }),
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }),
  ev({ type: 'message_stop' }),
]);

interface Rig {
  app: TestApp;
  vendor: FakeVendor;
  logs: string[];
  responses: unknown[];
  clock: { now: number };
}

async function rig(t: TestContext, realmSection: Record<string, unknown> = {}, extraConfig: Record<string, unknown> = {}): Promise<Rig> {
  const vendor = await startFakeVendor([reply]);
  t.after(() => vendor.close());
  const logs: string[] = [];
  const clock = { now: Date.now() };
  const app = await startApp(t, [], {
    env: { ANTHROPIC_API_KEY: ENV_KEY },
    providerOverrides: {},
    logger: pino({ level: 'trace' }, { write: (line: string) => void logs.push(line) }),
    clocks: { auth: () => clock.now },
  });
  const patch = await call(app.url, 'PATCH', '/config', {
    providers: { anthropic: { base_url: vendor.url } },
    realm: {
      [R]: {
        backend: { fake: { provider: 'anthropic', base_url: vendor.url } },
        binding: { claude: { backend_profile: 'fake' } },
        ...realmSection,
      },
    },
    ...extraConfig,
  });
  assert.equal(patch.status, 200, JSON.stringify(patch.body));
  return { app, vendor, logs, responses: [], clock };
}

async function req(r: Rig, method: string, path: string, body?: unknown) {
  const res = await call(r.app.url, method, path, body);
  r.responses.push(res.body);
  return res;
}

const storeSecret = (r: Rig, binding: string, secret: string, method = 'api_key') =>
  req(r, 'POST', '/auth/profiles', { realm_id: R, binding_id: binding, provider: 'anthropic', auth_method: method, secret });

const lastHeaders = (r: Rig) => r.vendor.requests[r.vendor.requests.length - 1].headers;

describe('credential selector on create and continue', () => {
  it('a stored binding carries its secret to the provider at its backend URL; without one the environment key is the fallback', async (t) => {
    const r = await rig(t);
    assert.equal((await storeSecret(r, 'claude', SECRET)).status, 201);
    const bound = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(bound.status, 200, JSON.stringify(bound.body));
    assert.equal(bound.body.text, 'ok');
    assert.equal(r.vendor.requests.length, 1);
    assert.equal(r.vendor.requests[0].url, '/v1/messages');
    assert.equal(lastHeaders(r)['x-api-key'], SECRET);
    // The binding's provider is used when the request names neither model nor provider.
    const implied = await req(r, 'POST', '/sessions', { prompt: 'hi', auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(implied.status, 200, JSON.stringify(implied.body));
    assert.equal(lastHeaders(r)['x-api-key'], SECRET);
    const plain = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL });
    assert.equal(plain.status, 200);
    assert.equal(lastHeaders(r)['x-api-key'], ENV_KEY);
    // Only the unbound session ever sent the environment key.
    assert.equal(r.vendor.requests.filter((q) => q.headers['x-api-key'] === ENV_KEY).length, 1);
  });

  it('refuses an unknown binding, another realm and a provider mismatch with 400 before creating anything', async (t) => {
    const r = await rig(t);
    await storeSecret(r, 'claude', SECRET);
    for (const auth_binding of [
      { realm: R, binding: 'ghost' },
      { realm: 'elsewhere', binding: 'claude' },
    ]) {
      const res = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.code, 'BAD_REQUEST');
    }
    const mismatch = await req(r, 'POST', '/sessions', { prompt: 'hi', model: 'gpt-5.5', auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(mismatch.status, 400);
    assert.equal((await call(r.app.url, 'GET', '/sessions')).body.sessions.length, 0);
    assert.equal(r.vendor.requests.length, 0);
    // A known binding without a stored credential is a provider error, also before creation.
    const empty = await req(r, 'POST', '/auth/bindings/claude/logout?realm_id=' + R);
    assert.equal(empty.status, 200);
    const none = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(none.status, 502);
    assert.equal(none.body.code, 'PROVIDER_ERROR');
    assert.equal((await call(r.app.url, 'GET', '/sessions')).body.sessions.length, 0);
  });

  it('applies the realm default binding when no selector is given', async (t) => {
    const r = await rig(t, { default_binding: 'claude' });
    await storeSecret(r, 'claude', SECRET);
    const res = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(lastHeaders(r)['x-api-key'], SECRET);
  });

  it('a selector swapped on continue takes effect at that turn and stays for the next ones', async (t) => {
    const r = await rig(t, { binding: { claude: { backend_profile: 'fake' }, bearer: { backend_profile: 'fake' } } });
    await storeSecret(r, 'claude', SECRET);
    await storeSecret(r, 'bearer', SECRET2, 'static_bearer');
    const created = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'claude' } });
    const id = created.body.session_id;
    assert.equal(lastHeaders(r)['x-api-key'], SECRET);
    const bad = await req(r, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'x',
      auth_binding: { realm: R, binding: 'ghost' },
    });
    assert.equal(bad.status, 400);
    assert.equal(r.vendor.requests.length, 1);
    const swapped = await req(r, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'again',
      auth_binding: { realm: R, binding: 'bearer' },
    });
    assert.equal(swapped.status, 200, JSON.stringify(swapped.body));
    assert.equal(lastHeaders(r).authorization, `Bearer ${SECRET2}`);
    assert.equal(lastHeaders(r)['x-api-key'], undefined);
    const kept = await req(r, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'third' });
    assert.equal(kept.status, 200);
    assert.equal(lastHeaders(r).authorization, `Bearer ${SECRET2}`);
  });

  it('an OAuth binding sends its bearer token and refreshes it on use inside the refresh window', async (t) => {
    const oauth = await startFakeOAuth();
    t.after(() => oauth.close());
    const r = await rig(t, {}, { auth: { refresh_skew_secs: 300, oauth: { anthropic: oauth.config() } } });
    oauth.deviceScript.push({ ok: true });
    const d = await req(r, 'POST', '/auth/login/device/start', { provider: 'anthropic', realm_id: R, binding_id: 'claude' });
    assert.equal(
      (
        await req(r, 'POST', '/auth/login/device/complete', {
          provider: 'anthropic',
          realm_id: R,
          binding_id: 'claude',
          device_code: d.body.device_code,
        })
      ).status,
      200,
    );
    const first = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'claude' } });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(lastHeaders(r).authorization, `Bearer ${oauth.issued[0]}`);
    r.clock.now += 3_400_000; // inside the 300 s window before the 3600 s expiry
    const second = await req(r, 'POST', `/sessions/${first.body.session_id}/messages`, {
      session_id: first.body.session_id,
      prompt: 'again',
    });
    assert.equal(second.status, 200);
    assert.equal(oauth.issued.length, 2);
    assert.equal(lastHeaders(r).authorization, `Bearer ${oauth.issued[1]}`);
    const s = await req(r, 'GET', `/auth/bindings/claude/status?realm_id=${R}`);
    assert.equal(s.body.state, 'valid');
    assert.equal(s.body.last_refresh_at, new Date(r.clock.now).toISOString());
  });

  it('no secret appears in logs, history, ledger, responses or realm files', async (t) => {
    const oauth = await startFakeOAuth();
    t.after(() => oauth.close());
    const r = await rig(
      t,
      { binding: { claude: { backend_profile: 'fake' }, bearer: { backend_profile: 'fake' } } },
      { auth: { oauth: { anthropic: oauth.config() } } },
    );
    await storeSecret(r, 'claude', SECRET);
    await storeSecret(r, 'bearer', SECRET2, 'static_bearer');
    oauth.deviceScript.push({ ok: true });
    const d = await req(r, 'POST', '/auth/login/device/start', { provider: 'anthropic', realm_id: R, binding_id: 'tok' });
    await req(r, 'POST', '/auth/login/device/complete', {
      provider: 'anthropic',
      realm_id: R,
      binding_id: 'tok',
      device_code: d.body.device_code,
    });
    const created = await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'claude' } });
    const id = created.body.session_id;
    await req(r, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x', auth_binding: { realm: R, binding: 'bearer' } });
    await req(r, 'POST', '/sessions', { prompt: 'hi', model: MODEL, auth_binding: { realm: R, binding: 'tok' } });
    await req(r, 'GET', `/sessions/${id}/history`);
    await req(r, 'GET', `/sessions/${id}/ledger`);
    await req(r, 'GET', `/sessions/${id}`);
    await req(r, 'GET', `/auth/profiles?realm_id=${R}`);
    for (const b of ['claude', 'bearer', 'tok']) {
      await req(r, 'GET', `/auth/bindings/${b}?realm_id=${R}`);
      await req(r, 'GET', `/auth/bindings/${b}/status?realm_id=${R}`);
    }
    await req(r, 'GET', '/config');
    // The provider did receive them (so the grep below is meaningful).
    const sent = JSON.stringify(r.vendor.requests.map((q) => q.headers));
    for (const s of [SECRET, SECRET2, oauth.issued[0]]) assert.ok(sent.includes(s));
    const secrets = [SECRET, SECRET2, ENV_KEY, ...oauth.issued, 'fake-refresh-'];
    const haystacks: Array<[string, string]> = [
      ['logs', r.logs.join('\n')],
      ['responses', JSON.stringify(r.responses)],
    ];
    const files = await readdir(r.app.stateRoot, { recursive: true, withFileTypes: true });
    for (const f of files.filter((e) => e.isFile()))
      haystacks.push([f.name, (await readFile(join(f.parentPath, f.name))).toString('latin1')]);
    assert.ok(r.logs.length > 10, 'trace logging captured lines');
    for (const [where, text] of haystacks) {
      for (const s of secrets) assert.ok(!text.includes(s), `${s} found in ${where}`);
    }
  });
});
