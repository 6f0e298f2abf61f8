// test/cli/start-banner.test.ts: the banner's variants (cli/start-banner.ts) that a plain start does not
// show: inbound API keys on (the curl sends $WARREN_API_KEY and a note says how to get a key), a bare
// start's isolated realm, and a memory realm. A real start's banner is in test/integration/start-banner.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bannerFields, bannerText, type BannerInfo } from '../../cli/start-banner.ts';

const BASE: BannerInfo = {
  version: '1.2.3',
  url: 'http://127.0.0.1:8080',
  realmId: 'local',
  realmDir: '/data/realms/local',
  backend: 'lmdb',
  isolated: false,
  inboundAuth: 'off',
};

describe('start banner', () => {
  it('with inbound API keys on, the first turn sends $WARREN_API_KEY and a note says how to make a key', () => {
    const text = bannerText({ ...BASE, inboundAuth: 'required' });
    const curl = `curl -s http://127.0.0.1:8080/sessions -H 'content-type: application/json' -H "authorization: Bearer $WARREN_API_KEY" -d '{"prompt":"hello","provider":"scripted"}'`;
    assert.ok(text.includes(`    ${curl}\n`), text);
    assert.match(text, /inbound API keys are on: every request but \/health needs 'authorization: Bearer <key>'/);
    assert.match(text, /warren keys create --realm local --name me --scopes sessions/);
    const fields = bannerFields({ ...BASE, inboundAuth: 'required' });
    assert.equal(fields.inbound_auth, 'required');
    assert.equal(fields.first_turn, curl);
    assert.doesNotMatch(bannerText(BASE), /inbound API keys/);
  });

  it('says that an isolated realm is new on every start, and what a memory realm keeps', () => {
    const text = bannerText({ ...BASE, realmId: 'realm-0123', isolated: true, backend: 'memory' });
    assert.match(
      text,
      /^ {2}realm {5}realm-0123 \(a new isolated realm: a restart opens another; pass --realm <name> to keep sessions\)$/m,
    );
    assert.match(text, /^ {2}backend {3}memory \(in memory: nothing survives a restart\)$/m);
    assert.equal(bannerFields({ ...BASE, isolated: true }).realm_kind, 'isolated');
  });
});
