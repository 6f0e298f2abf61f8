// test/integration/inbound-auth-mode.test.ts: the start-up decision of inbound auth (no server): the auth
// mode each listener and `[rest] auth` give, the one-line refusals, and --insecure-no-auth.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideAuthMode, isLoopbackHost } from '../../http/inbound-auth.ts';

describe('inbound auth mode at start', () => {
  it('knows loopback listeners', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', '::1', '[::1]', 'localhost', 'LOCALHOST', '::ffff:127.0.0.1'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'example.com', '128.0.0.1', 'localhost.example.com'])
      assert.ok(!isLoopbackHost(h), h);
  });

  it('is off on loopback and required elsewhere; refuses a keyless or auth-off start beyond loopback', () => {
    assert.deepEqual(decideAuthMode({ host: '127.0.0.1', configured: undefined, insecureNoAuth: false, usableKeys: 0 }), { mode: 'off' });
    assert.deepEqual(decideAuthMode({ host: '0.0.0.0', configured: undefined, insecureNoAuth: false, usableKeys: 1 }), {
      mode: 'required',
    });
    assert.throws(
      () => decideAuthMode({ host: '0.0.0.0', configured: undefined, insecureNoAuth: false, usableKeys: 0 }),
      /^Error: refusing to listen on 0\.0\.0\.0 without API keys: create one with 'warren keys create' \(or pass --insecure-no-auth\)$/,
    );
    assert.throws(
      () => decideAuthMode({ host: '10.0.0.5', configured: 'off', insecureNoAuth: false, usableKeys: 3 }),
      /refusing to listen on 10\.0\.0\.5 with \[rest\] auth = "off"/,
    );
    const lonely = decideAuthMode({ host: '127.0.0.1', configured: 'required', insecureNoAuth: false, usableKeys: 0 });
    assert.equal(lonely.mode, 'required');
    assert.match(lonely.warning ?? '', /no API key exists yet/);
  });

  it('--insecure-no-auth turns auth off anywhere, always with a warning', () => {
    const open = decideAuthMode({ host: '0.0.0.0', configured: 'required', insecureNoAuth: true, usableKeys: 0 });
    assert.equal(open.mode, 'off');
    assert.match(open.warning ?? '', /inbound authentication is OFF on 0\.0\.0\.0/);
    assert.match(decideAuthMode({ host: '127.0.0.1', configured: undefined, insecureNoAuth: true, usableKeys: 0 }).warning ?? '', /OFF/);
  });
});
