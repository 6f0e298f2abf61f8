// Helpers run where they are told, or where their source runs: spawn-helper honours `provider`, and
// fork-helper from a member on the scripted provider inherits it (no vendor key is configured here, so a
// helper that fell back to the default provider would fail with 502 naming the missing variables).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createScriptedProvider, echoReply } from '../../providers/scripted.ts';
import { call, startApp } from '../helpers/app.ts';
import { rpcOk } from '../helpers/mob-driver.ts';

describe('mob helper providers', () => {
  it('spawn-helper honours provider; fork-helper inherits its source member provider', async (t) => {
    const scripted = createScriptedProvider((req) => echoReply(req));
    const app = await startApp(t, [], { env: {}, providerOverrides: { scripted } });
    await rpcOk(app.url, 'mob/create', { mob_id: 'm1', definition: { members: [{ agent_identity: 'lead', provider: 'scripted' }] } });
    const kicked = await call(app.url, 'POST', '/mob/m1/wait-kickoff', {});
    assert.equal(kicked.body.members[0].kickoff, 'completed', JSON.stringify(kicked.body));

    const helper = { result_label: 'r', max_text_bytes: 100 };
    const bare = await call(app.url, 'POST', '/mob/m1/spawn-helper', { ...helper, prompt: 'hi', agent_identity: 'h0' });
    assert.equal(bare.status, 502, 'no provider configured and none named: the default has no key');
    assert.match(bare.body.error, /ANTHROPIC_API_KEY/);

    const named = await call(app.url, 'POST', '/mob/m1/spawn-helper', {
      ...helper,
      prompt: 'one',
      agent_identity: 'h1',
      provider: 'scripted',
    });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.equal(named.body.output, 'echo: one');

    const forked = await call(app.url, 'POST', '/mob/m1/fork-helper', {
      ...helper,
      prompt: 'two',
      agent_identity: 'h2',
      source_member_id: 'lead',
    });
    assert.equal(forked.status, 200, JSON.stringify(forked.body));
    assert.equal(forked.body.output, 'echo: two');

    const viaRpc = await rpcOk(app.url, 'mob/spawn_helper', {
      ...helper,
      mob_id: 'm1',
      prompt: 'three',
      agent_identity: 'h3',
      provider: 'scripted',
    });
    assert.equal(viaRpc.output, 'echo: three');
  });
});
