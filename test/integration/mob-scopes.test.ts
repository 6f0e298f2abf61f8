// test/integration/mob-scopes.test.ts: mob operator scopes on the real server with a manual mob clock:
// the owner (no principal) has every scope, a granted principal exactly its unexpired scopes (expired
// when expires_at_ms <= now, evaluated at each decision), an unknown principal none; denials are 403
// ScopeDenied on REST and -32025 on JSON-RPC, carrying the required scope and the effective set.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import { call, startApp } from '../helpers/app.ts';
import { rpc, rpcOk } from '../helpers/mob-driver.ts';

const T0 = Date.UTC(2026, 0, 1);

describe('mob operator scopes', () => {
  it('grants scopes until they expire, refuses unknown principals, and gates grant administration', async (t) => {
    const clock = new ManualClock(T0);
    const app = await startApp(t, [], { clocks: { mob: () => clock.now() } });
    await rpcOk(app.url, 'mob/create', { mob_id: 'g1', definition: { members: [{ agent_identity: 'a' }] } });
    await call(app.url, 'POST', '/mob/g1/wait-kickoff');
    const alice = { 'x-warren-principal': 'alice' };

    // Unknown principal: nothing.
    const denied = await call(app.url, 'GET', '/mob/g1/members/a/status', undefined, alice);
    assert.equal(denied.status, 403);
    assert.deepEqual(denied.body, {
      error: 'scope MobRead required',
      code: 'ScopeDenied',
      details: { required: 'MobRead', effective: [], presented: [] },
    });

    const grant = await rpcOk(app.url, 'mob/grants/set', {
      principal: 'alice',
      scopes: ['MobRead', 'FlowControl'],
      expires_at_ms: T0 + 1000,
    });
    assert.deepEqual(grant.scopes, ['MobRead', 'FlowControl']);
    assert.equal((await call(app.url, 'GET', '/mob/g1/members/a/status', undefined, alice)).status, 200);
    const sse = await fetch(`${app.url}/mob/g1/events`, { headers: alice });
    assert.equal(sse.status, 200);
    await sse.body?.cancel();

    // Exactly the granted scopes: no helpers, no grant administration.
    const helper = await call(
      app.url,
      'POST',
      '/mob/g1/spawn-helper',
      { prompt: 'x', result_label: 'r', max_text_bytes: 10, agent_identity: 'h' },
      alice,
    );
    assert.equal(helper.status, 403);
    assert.equal(helper.body.code, 'ScopeDenied');
    assert.deepEqual(helper.body.details, {
      required: 'HelperControl',
      effective: ['MobRead', 'FlowControl'],
      presented: ['MobRead', 'FlowControl'],
    });
    const admin = await rpc(app.url, 'mob/grants/set', { principal: 'alice', scopes: ['AdminGrants'] }, 'alice');
    assert.equal(admin.error?.code, -32025);
    assert.equal(admin.error?.data?.code, 'ScopeDenied');
    assert.equal(admin.error?.data?.details?.required, 'AdminGrants');
    assert.equal((await rpc(app.url, 'mob/grants/list', {}, 'alice')).error?.code, -32025);
    assert.equal((await rpc(app.url, 'mob/get', { mob_id: 'g1' }, 'alice')).result.mob_id, 'g1');

    // One millisecond before expiry it still holds; at expires_at_ms it is gone.
    clock.advanceTo(T0 + 999);
    assert.equal((await call(app.url, 'GET', '/mob/g1/hosts', undefined, alice)).status, 200);
    clock.advanceTo(T0 + 1000);
    const expired = await call(app.url, 'GET', '/mob/g1/hosts', undefined, alice);
    assert.equal(expired.status, 403);
    assert.deepEqual(expired.body.details, { required: 'MobRead', effective: [], presented: [] });
    assert.equal((await rpc(app.url, 'mob/get', { mob_id: 'g1' }, 'alice')).error?.code, -32025);
    const list = await rpcOk(app.url, 'mob/grants/list');
    assert.equal(list.grants[0].expired, true);

    // A granted admin administers grants; revocation acts at the next decision.
    await rpcOk(app.url, 'mob/grants/set', { principal: 'root', scopes: ['AdminGrants'] });
    await rpcOk(app.url, 'mob/grants/set', { principal: 'alice', scopes: ['MobRead'] }, 'root');
    assert.equal((await call(app.url, 'GET', '/mob/g1/hosts', undefined, alice)).status, 200);
    assert.deepEqual(await rpcOk(app.url, 'mob/grants/revoke', { principal: 'alice' }, 'root'), { revoked: true });
    assert.equal((await call(app.url, 'GET', '/mob/g1/hosts', undefined, alice)).status, 403);
    const events = await rpcOk(app.url, 'toolkit/mob_events/query', { filter: { kinds: ['scope_granted', 'scope_revoked'] } });
    assert.deepEqual(
      events.events.map((e: { kind: string }) => e.kind),
      ['scope_granted', 'scope_granted', 'scope_granted', 'scope_revoked'],
    );
  });
});
