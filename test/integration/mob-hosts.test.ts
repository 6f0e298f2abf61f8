// test/integration/mob-hosts.test.ts: GET /mob/{id}/hosts and /route-installs on the real server. The
// hosts route reports this process under the host id /runtime/host_info gives, with the members it holds;
// route-installs lists the wired pairs whose route is not installed yet (a member whose kickoff failed or
// is still running), until a respawn or the kickoff installs them; installed routes survive a restart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { Value } from 'typebox/value';
import { HostCapabilities } from '../../contracts/routes-mob.ts';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';

function lastUser(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

describe('mob hosts and route installs', () => {
  it('reports the host holding the members and the routes still outstanding', async (t) => {
    const slow = deferred();
    const slowEntered = deferred();
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply => {
      const text = lastUser(req);
      if (text === 'fail kickoff') return { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } };
      if (text === 'slow kickoff') {
        slowEntered.resolve();
        return { text: 'late', waitFor: slow.promise };
      }
      return echoReply(req);
    });
    const info = (await call(app.url, 'GET', '/runtime/host_info')).body;
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'h',
      definition: {
        members: [{ agent_identity: 'a' }, { agent_identity: 'b', initial_message: 'fail kickoff' }, { agent_identity: 'c' }],
        wiring: [
          { a: 'a', b: 'b' },
          { a: 'a', b: 'c' },
        ],
      },
    });
    const kicked = (await call(app.url, 'POST', '/mob/h/wait-kickoff')).body.members;
    assert.equal(kicked.find((m: { agent_identity: string }) => m.agent_identity === 'b').kickoff, 'failed');

    const hosts = await call(app.url, 'GET', '/mob/h/hosts');
    assert.equal(hosts.status, 200);
    assert.equal(hosts.body.hosts.length, 1);
    const here = hosts.body.hosts[0];
    assert.equal(here.host_id, info.host_id, 'the host id /runtime/host_info reports');
    assert.equal(here.bind_phase, 'bound');
    assert.equal(here.controlling, true);
    assert.equal(here.control_reachability, 'reachable');
    assert.equal(here.endpoint, app.url);
    assert.equal(typeof here.last_seen_ms, 'number');
    // The reference's host capability flags (decoded against their schema), not the runtime capabilities.
    assert.ok(Value.Check(HostCapabilities, here.capabilities), JSON.stringify(here.capabilities));
    assert.deepEqual(here.capabilities, {
      protocol_min: 1,
      protocol_max: 1,
      engine_version: WARREN_VERSION,
      durable_sessions: true,
      autonomous_members: true,
      hard_cancel_member: true,
      memory_store: here.capabilities.memory_store,
      mcp: here.capabilities.mcp,
      approval_forwarding: info.capabilities.features.approvals,
    });
    // b's kickoff failed but its session exists: three members are materialized here.
    assert.equal(here.materialized_member_count, 3);
    assert.deepEqual(here.members.sort(), ['a', 'b', 'c']);

    // a-c is installed; a-b waits on b, whose kickoff failed.
    const pending = await call(app.url, 'GET', '/mob/h/route-installs');
    assert.equal(pending.status, 200);
    assert.deepEqual(pending.body, {
      complete: false,
      outstanding: [{ host: info.host_id, edge_a: 'a', edge_b: 'b', reason: 'member_not_ready' }],
    });
    // Respawning b (a kickoff that succeeds) tells a and b of each other again: installed.
    const respawned = await call(app.url, 'POST', '/mob/h/members/b/respawn', { initial_message: 'hello' });
    assert.equal(respawned.body.status, 'completed', JSON.stringify(respawned.body));
    assert.deepEqual((await call(app.url, 'GET', '/mob/h/route-installs')).body, { complete: true, outstanding: [] });

    // A member whose kickoff is still running: its new edge is outstanding until the kickoff ends.
    await rpcOk(app.url, 'mob/spawn_member', { mob_id: 'h', member: { agent_identity: 'd', initial_message: 'slow kickoff' } });
    await slowEntered.promise;
    await rpcOk(app.url, 'mob/wire_members', { mob_id: 'h', edges: [{ a: 'c', b: 'd' }] });
    const waiting = (await call(app.url, 'GET', '/mob/h/route-installs')).body;
    assert.deepEqual(waiting, {
      complete: false,
      outstanding: [{ host: info.host_id, edge_a: 'c', edge_b: 'd', reason: 'member_not_ready' }],
    });
    slow.resolve();
    await call(app.url, 'POST', '/mob/h/wait-kickoff');
    assert.deepEqual((await call(app.url, 'GET', '/mob/h/route-installs')).body, { complete: true, outstanding: [] });

    // A retired member leaves the host's count and its routes.
    await rpcOk(app.url, 'mob/retire_member', { mob_id: 'h', agent_identity: 'c' });
    const after = (await call(app.url, 'GET', '/mob/h/hosts')).body.hosts[0];
    assert.equal(after.materialized_member_count, 3);
    assert.deepEqual(after.members.sort(), ['a', 'b', 'd']);

    // Installed routes are part of the mob record: a restart keeps them installed.
    await app.close();
    const again = await startApp(t, [], { stateRoot: app.stateRoot });
    assert.deepEqual((await call(again.url, 'GET', '/mob/h/route-installs')).body, { complete: true, outstanding: [] });
    const hostsAgain = (await call(again.url, 'GET', '/mob/h/hosts')).body.hosts;
    assert.equal(hostsAgain.length, 1);
    assert.equal(hostsAgain[0].host_id, (await call(again.url, 'GET', '/runtime/host_info')).body.host_id);
    assert.equal(hostsAgain[0].materialized_member_count, 3);
  });

  it('keeps a route outstanding while its wiring notice cannot be delivered (comms)', async (t) => {
    const app = await startApp(t, [], { config: { comms: {} } });
    const info = (await call(app.url, 'GET', '/runtime/host_info')).body;
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'n',
      definition: { members: [{ agent_identity: 'a' }, { agent_identity: 'b' }, { agent_identity: 'c' }] },
    });
    const members = (await call(app.url, 'POST', '/mob/n/wait-kickoff')).body.members;
    const bSession = members.find((m: { agent_identity: string }) => m.agent_identity === 'b').session_id;
    // b's session is archived behind the mob's back: it can no longer be told of its peers.
    assert.equal((await call(app.url, 'DELETE', `/sessions/${bSession}`)).status, 200);
    await rpcOk(app.url, 'mob/wire_members', {
      mob_id: 'n',
      edges: [
        { a: 'a', b: 'b' },
        { a: 'a', b: 'c' },
      ],
    });
    await call(app.url, 'POST', '/mob/n/wait-kickoff');
    assert.deepEqual((await call(app.url, 'GET', '/mob/n/route-installs')).body, {
      complete: false,
      outstanding: [{ host: info.host_id, edge_a: 'a', edge_b: 'b', reason: 'notice_pending' }],
    });
    // Respawning b gives it a new session; the notices land and the route is installed.
    const respawned = await call(app.url, 'POST', '/mob/n/members/b/respawn');
    assert.equal(respawned.body.status, 'completed', JSON.stringify(respawned.body));
    assert.deepEqual((await call(app.url, 'GET', '/mob/n/route-installs')).body, { complete: true, outstanding: [] });
  });
});
