// test/integration/mobs.test.ts: a mob of several member sessions on the real server (scripted provider),
// driven through JSON-RPC (POST /rpc) and the mob REST routes: kickoff, wiring over comms, a flow run,
// spawn and fork helpers with bounded results, member cancel and respawn, member status and history,
// the mob SSE stream and the toolkit stream. Gated on events and replies, never on time.
import { describe, it } from 'node:test';
import { Value } from 'typebox/value';
import { WireBatchResponse } from '../../contracts/routes-mob.ts';
import assert from 'node:assert/strict';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { rpc, rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { SseClient } from '../helpers/sse-client.ts';

function lastUser(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

describe('mobs', () => {
  it('runs a mob of member sessions: kickoff, wiring, a flow, status and history', async (t) => {
    const app = await startApp(t, [], { config: { comms: {} } });
    const flowDone = await SseClient.open(app.url, '/toolkit/mob_events/stream?kinds=flow_completed,flow_failed');
    t.after(() => flowDone.close());
    await flowDone.untilEvent('stream_opened');

    const mob = await rpcOk(app.url, 'mob/create', { mob_id: 'team', labels: { project: 'demo' }, definition: TEAM });
    assert.equal(mob.mob_id, 'team');
    assert.deepEqual(
      mob.members.map((m: { agent_identity: string }) => m.agent_identity),
      ['planner', 'writer', 'reviewer'],
    );
    assert.deepEqual(mob.edges, [
      { a: 'planner', b: 'writer' },
      { a: 'reviewer', b: 'writer' },
    ]);

    const kicked = await call(app.url, 'POST', '/mob/team/wait-kickoff');
    assert.equal(kicked.status, 200);
    assert.equal(kicked.body.members.length, 3);
    for (const m of kicked.body.members) {
      assert.equal(m.kickoff, 'completed', JSON.stringify(m));
      assert.equal(m.state, 'active');
      assert.match(m.session_id, /^[0-9a-f-]{36}$/);
    }
    // Every member is a real session.
    const writer = kicked.body.members.find((m: { agent_identity: string }) => m.agent_identity === 'writer');
    assert.equal((await call(app.url, 'GET', `/sessions/${writer.session_id}`)).status, 200);
    const owned = await call(app.url, 'POST', `/sessions/${writer.session_id}/system_prompt`, {
      key: 'k',
      content: 'be someone else',
      target_message_index: 0,
    });
    assert.equal(owned.status, 400, 'mob-owned system prompts are rejected');
    assert.match(owned.body.error, /owned by mob team/);

    const run = await rpcOk(app.url, 'mob/start_flow', {
      mob_id: 'team',
      flow_id: 'draft',
      run_id: 'run-1',
      activation: { input: 'otters' },
    });
    assert.equal(run.run_id, 'run-1');
    assert.ok(['pending', 'running'].includes(run.status));
    const again = await rpcOk(app.url, 'mob/start_flow', { mob_id: 'team', flow_id: 'draft', run_id: 'run-1' });
    assert.equal(again.run_id, 'run-1', 'idempotent by run id');
    const done = await flowDone.untilEvent('flow_completed');
    assert.equal(JSON.parse(done.data).run_id, 'run-1');
    const status = await rpcOk(app.url, 'mob/flow_status', { mob_id: 'team', run_id: 'run-1' });
    assert.equal(status.status, 'completed');
    assert.equal(status.output, 'echo: review: echo: write about otters');
    assert.deepEqual(
      status.outputs.map((o: { step_id: string }) => o.step_id),
      ['write', 'review'],
    );

    const st = await call(app.url, 'GET', '/mob/team/members/writer/status');
    assert.equal(st.status, 200);
    assert.deepEqual(st.body.wired_to.sort(), ['planner', 'reviewer']);
    const hist = await call(app.url, 'GET', '/mob/team/members/writer/history?from_index=0&limit=2');
    assert.equal(hist.status, 200);
    assert.equal(hist.body.generation, 1);
    assert.equal(hist.body.page.messages.length, 2);
    assert.equal(hist.body.page.next_index, 2);
    assert.equal(hist.body.page.complete, false);
    assert.equal(hist.body.provenance, 'host_claimed');
    const rest = await call(app.url, 'GET', `/mob/team/members/writer/history?from_index=${hist.body.page.next_index}`);
    assert.equal(rest.body.page.complete, true);
    assert.equal(rest.body.page.from_index + rest.body.page.messages.length, rest.body.page.message_count);

    const query = await rpcOk(app.url, 'toolkit/mob_events/query', { filter: { mob_id: 'team' } });
    const kinds = query.events.map((e: { kind: string }) => e.kind);
    for (const k of [
      'mob_created',
      'member_spawned',
      'member_kickoff_completed',
      'members_wired',
      'flow_started',
      'step_dispatched',
      'step_completed',
      'flow_completed',
    ]) {
      assert.ok(kinds.includes(k), `${k} in ${kinds}`);
    }
    const cursors = query.events.map((e: { cursor: number }) => e.cursor);
    assert.deepEqual(
      cursors,
      [...cursors].sort((a, b) => a - b),
    );
    for (const e of query.events)
      assert.deepEqual(Object.keys(e).sort(), [
        'agent_identity',
        'cursor',
        'data',
        'event_id',
        'kind',
        'mob_id',
        'mob_labels',
        'run_id',
        'run_labels',
        'step_id',
        'timestamp_ms',
      ]);
    assert.deepEqual(query.events[0].mob_labels, { project: 'demo' });

    // The viewer sees the mob and member machines (GET /inspect/*, drawn by /ui).
    const viewer = (await call(app.url, 'GET', '/inspect/actors?kind=mob_member')).body;
    assert.deepEqual(viewer.actors.map((x: { id: string; state: string }) => [x.id, x.state]).sort(), [
      ['team/planner', 'active'],
      ['team/reviewer', 'active'],
      ['team/writer', 'active'],
    ]);
    assert.equal((await call(app.url, 'GET', '/inspect/actors?kind=mob')).body.actors[0].state, 'running');
    for (const kind of ['mob', 'mob_member']) {
      const g = (await call(app.url, 'GET', `/inspect/machines/${kind}`)).body;
      assert.ok(g.states.length >= 4, kind);
    }

    const hosts = await call(app.url, 'GET', '/mob/team/hosts');
    assert.equal(hosts.body.hosts[0].materialized_member_count, 3);
    assert.deepEqual((await call(app.url, 'GET', '/mob/team/route-installs')).body, { complete: true, outstanding: [] });
    const batch = await call(app.url, 'POST', '/mob/team/wire-members-batch', {
      edges: [
        { a: 'planner', b: 'reviewer' },
        { a: 'writer', b: 'planner' },
      ],
    });
    // The reference's shape: the edges wired now and those already wired, as requested.
    assert.ok(Value.Check(WireBatchResponse, batch.body), JSON.stringify(batch.body));
    assert.deepEqual(batch.body, {
      requested: 2,
      wired: [{ a: 'planner', b: 'reviewer' }],
      already_wired: [{ a: 'writer', b: 'planner' }],
    });

    // Wired members were told of each other over comms: the writer's flow step carried the peer_added
    // notices from its inbox as injected context.
    const step = app.provider.requests.find((r) =>
      r.messages.some((m) => m.role === 'user' && plainText(m.content) === 'write about otters'),
    )!;
    assert.ok(JSON.stringify(step.messages).includes('mob.peer_added'), 'peer_added notice reached the writer');
    const peers = await call(app.url, 'GET', `/comms/peers?session_id=${writer.session_id}`);
    assert.equal(peers.status, 200, JSON.stringify(peers.body));
    assert.ok(
      peers.body.peers.some((p: { name: string }) => p.name === 'team.reviewer'),
      JSON.stringify(peers.body),
    );
  });

  it('spawn-helper and fork-helper return bounded results and retire the helper', async (t) => {
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply =>
      lastUser(req).startsWith('long') ? { text: 'ÄÄÄÄÄÄÄÄÄÄ tail' } : echoReply(req),
    );
    await rpcOk(app.url, 'mob/create', { mob_id: 'm1', definition: { members: [{ agent_identity: 'lead' }] } });
    await call(app.url, 'POST', '/mob/m1/wait-kickoff', {});
    const spawned = await call(app.url, 'POST', '/mob/m1/spawn-helper', {
      prompt: 'long answer please',
      result_label: 'answer',
      max_text_bytes: 5,
      agent_identity: 'h1',
    });
    assert.equal(spawned.status, 200, JSON.stringify(spawned.body));
    const b = spawned.body;
    assert.equal(b.output, 'ÄÄ', '5 bytes cut at a character boundary');
    assert.deepEqual(b.bounded_result, { label: 'answer', text: 'ÄÄ', truncated: true, original_bytes: 25, max_text_bytes: 5 });
    for (const k of [
      'output',
      'tokens_used',
      'agent_identity',
      'member_ref',
      'bounded_result',
      'session_id',
      'usage',
      'turns',
      'tool_calls',
    ])
      assert.ok(k in b, k);
    assert.equal('retirement_error' in b, false);
    assert.equal(b.turns, 1);
    const helper = await call(app.url, 'GET', '/mob/m1/members/h1/status');
    assert.equal(helper.body.state, 'retired');
    assert.equal(helper.body.helper, true);

    const forked = await call(app.url, 'POST', '/mob/m1/fork-helper', {
      prompt: 'short',
      result_label: 'fork',
      max_text_bytes: 1000,
      agent_identity: 'h2',
      source_member_id: 'lead',
      fork_context: { type: 'last_messages', count: 2 },
    });
    assert.equal(forked.status, 200, JSON.stringify(forked.body));
    assert.equal(forked.body.output, 'echo: short');
    assert.equal(forked.body.bounded_result.truncated, false);
    // The fork saw the source member's conversation as injected context. Its session is archived with
    // its retirement (GET /sessions/{id} is 404); the mob's member history still reads it.
    const rows = (await call(app.url, 'GET', '/mob/m1/members/h2/history')).body.page.messages;
    assert.ok(JSON.stringify(rows).includes('Conversation of lead so far'));
    assert.equal((await call(app.url, 'GET', `/sessions/${forked.body.session_id}`)).status, 404);

    const missing = await call(app.url, 'POST', '/mob/m1/spawn-helper', { prompt: 'x', agent_identity: 'h3', max_text_bytes: 5 });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.code, 'BAD_REQUEST');
    const noBytes = await call(app.url, 'POST', '/mob/m1/fork-helper', {
      prompt: 'x',
      agent_identity: 'h3',
      result_label: 'r',
      source_member_id: 'lead',
    });
    assert.equal(noBytes.status, 400);
  });

  it('cancels a member mid-turn and respawns it with a new session', async (t) => {
    const entered = deferred();
    const never = deferred();
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply => {
      if (lastUser(req) === 'slow') {
        entered.resolve();
        return { text: 'never', waitFor: never.promise };
      }
      return echoReply(req);
    });
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'c1',
      definition: { members: [{ agent_identity: 'a' }, { agent_identity: 'b' }], wiring: [{ a: 'a', b: 'b' }] },
    });
    const kicked = await call(app.url, 'POST', '/mob/c1/wait-kickoff', { member_ids: ['a'] });
    const firstSession = kicked.body.members[0].session_id;
    const pending = rpc(app.url, 'mob/send_message', { mob_id: 'c1', agent_identity: 'a', prompt: 'slow' });
    await entered.promise;
    assert.equal((await call(app.url, 'GET', '/mob/c1/members/a/status')).body.state, 'running');
    const cancelled = await call(app.url, 'POST', '/mob/c1/members/a/cancel');
    assert.deepEqual(cancelled.body, { cancelled: true });
    const failed = await pending;
    assert.ok(failed.error, 'the cancelled turn ends with an error');
    assert.equal((await call(app.url, 'GET', '/mob/c1/members/a/status')).body.state, 'cancelled');
    const refused = await rpc(app.url, 'mob/send_message', { mob_id: 'c1', agent_identity: 'a', prompt: 'hello' });
    assert.equal(refused.error?.code, -32602);

    const respawned = await call(app.url, 'POST', '/mob/c1/members/a/respawn', { initial_message: 'back again' });
    assert.equal(respawned.status, 200, JSON.stringify(respawned.body));
    assert.equal(respawned.body.status, 'completed');
    assert.equal(respawned.body.receipt.generation, 2);
    assert.equal(respawned.body.receipt.previous_session_id, firstSession);
    assert.notEqual(respawned.body.receipt.session_id, firstSession);
    const st = (await call(app.url, 'GET', '/mob/c1/members/a/status')).body;
    assert.equal(st.state, 'active');
    assert.deepEqual(st.wired_to, ['b']);
    const reply = await rpcOk(app.url, 'mob/send_message', { mob_id: 'c1', agent_identity: 'a', prompt: 'hello' });
    assert.equal(reply.text, 'echo: hello');
    const hist = (await call(app.url, 'GET', '/mob/c1/members/a/history')).body;
    assert.equal(hist.generation, 2);

    await rpcOk(app.url, 'mob/retire_member', { mob_id: 'c1', agent_identity: 'b' });
    assert.deepEqual((await call(app.url, 'GET', '/mob/c1/members/a/status')).body.wired_to, []);
    const gone = await rpcOk(app.url, 'mob/destroy', { mob_id: 'c1' });
    assert.equal(gone.state, 'destroyed');
    assert.equal((await rpc(app.url, 'mob/spawn_member', { mob_id: 'c1', member: { agent_identity: 'z' } })).error?.code, -32602);
  });

  it('streams a mob: stream_opened, member agent events and structural envelopes, resumable by cursor, done on destroy', async (t) => {
    const app = await startApp(t);
    await rpcOk(app.url, 'mob/create', { mob_id: 's1', definition: { members: [{ agent_identity: 'solo' }] } });
    await call(app.url, 'POST', '/mob/s1/wait-kickoff');
    const sse = await SseClient.open(app.url, '/mob/s1/events');
    t.after(() => sse.close());
    const opened = await sse.untilEvent('stream_opened');
    assert.deepEqual(JSON.parse(opened.data), { mob_id: 's1' });
    await sse.untilEvent('member_kickoff_completed');
    const frames = sse.frames.filter((f) => f.event !== 'stream_opened');
    for (const f of frames) {
      const env = JSON.parse(f.data);
      assert.deepEqual(Object.keys(env).sort(), ['event', 'event_id', 'source', 'timestamp_ms']);
      if (env.source === 'module') {
        assert.equal(env.event.module, 'mob');
        assert.equal(f.id, String(env.event.payload.cursor));
      } else assert.equal(env.event.agent_id, 'solo');
    }
    const created = frames.find((f) => f.event === 'mob_created')!;
    await rpcOk(app.url, 'mob/send_message', { mob_id: 's1', agent_identity: 'solo', prompt: 'ping' });
    await sse.until(
      (c) => c.frames.some((f) => f.event === 'run_completed' && JSON.parse(f.data).event.text === 'echo: ping'),
      'live agent event',
    );

    // Resume after the first structural event: everything after it, nothing before.
    const resumed = await SseClient.open(app.url, '/mob/s1/events?member=solo', { 'Last-Event-ID': created.id! });
    t.after(() => resumed.close());
    await resumed.untilEvent('member_kickoff_completed');
    assert.equal(
      resumed.frames.some((f) => f.event === 'mob_created'),
      false,
    );
    assert.deepEqual(JSON.parse(resumed.frames[0].data), { mob_id: 's1', member: 'solo' });

    // subscribe: a snapshot, a handshake and an SSE URL that continues after the snapshot.
    const sub = await rpcOk(app.url, 'toolkit/mob_events/subscribe', { filter: { mob_id: 's1' } });
    assert.ok(sub.snapshot.events.length >= 3);
    assert.equal(sub.snapshot.cursor, sub.snapshot.events.at(-1).cursor);
    assert.equal(sub.handshake.protocol, 'sse');
    const url = new URL(sub.sse_url);
    assert.equal(url.searchParams.get('after_cursor'), String(sub.snapshot.cursor));
    const live = await SseClient.open(app.url, url.pathname + url.search);
    t.after(() => live.close());
    await live.untilEvent('stream_opened');

    await rpcOk(app.url, 'mob/destroy', { mob_id: 's1' });
    const destroyed = await live.untilEvent('mob_destroyed');
    assert.equal(Number(destroyed.id), sub.snapshot.cursor + 1, 'the first live event follows the snapshot');
    await sse.untilEvent('done');
    await sse.until((c) => c.ended, "the stream's body to end after done");
  });

  it('member sessions get the mob tools: delegate to another member returns a bounded answer', async (t) => {
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply => {
      const last = req.messages.at(-1);
      if (last?.role === 'user' && plainText(last.content) === 'go delegate')
        return { tool_calls: [{ name: 'delegate', args: { to: 'worker', prompt: 'sub task', max_text_bytes: 9 } }] };
      if (last?.role === 'user' && plainText(last.content) === 'go self')
        return { tool_calls: [{ name: 'delegate', args: { to: 'lead', prompt: 'x' } }] };
      if (last?.role === 'tool_results') return { text: `lead got ${last.results[0].content}` };
      if (last?.role === 'user' && plainText(last.content) === 'break now')
        return { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } };
      return echoReply(req);
    });
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'd1',
      definition: { members: [{ agent_identity: 'lead' }, { agent_identity: 'worker' }] },
    });
    await call(app.url, 'POST', '/mob/d1/wait-kickoff');
    const reply = await rpcOk(app.url, 'mob/send_message', { mob_id: 'd1', agent_identity: 'lead', prompt: 'go delegate' });
    assert.match(reply.text, /^lead got /);
    assert.ok(reply.text.includes('"echo: sub"') && !reply.text.includes('sub task'), reply.text);
    assert.equal(reply.tool_calls, 1);
    const offered = app.provider.requests.find((r) => r.messages.some((m) => m.role === 'user' && plainText(m.content) === 'go delegate'))!;
    const names = offered.tools.map((x) => x.name);
    for (const n of ['delegate', 'mob_members', 'mob_spawn_member', 'mob_retire_member', 'mob_wire', 'mob_start_flow', 'mob_flow_status'])
      assert.ok(names.includes(n), n);
    // A flow whose step fails: the run fails, the failure escalates to the supervisor.
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'f1',
      definition: {
        members: [{ agent_identity: 'w' }],
        flows: [{ flow_id: 'bad', steps: [{ step_id: 's', member: 'w', prompt: 'break now' }] }],
      },
    });
    await call(app.url, 'POST', '/mob/f1/wait-kickoff');
    const failing = await SseClient.open(app.url, '/toolkit/mob_events/stream?mob_id=f1&kinds=flow_failed');
    t.after(() => failing.close());
    await rpcOk(app.url, 'mob/start_flow', { mob_id: 'f1', flow_id: 'bad', run_id: 'rb' });
    await failing.untilEvent('flow_failed');
    const rb = await rpcOk(app.url, 'mob/flow_status', { mob_id: 'f1', run_id: 'rb' });
    assert.equal(rb.status, 'failed');
    assert.match(rb.error, /vendor down/);
    const rbKinds = (await rpcOk(app.url, 'toolkit/mob_events/query', { filter: { mob_id: 'f1', run_id: 'rb' } })).events.map(
      (e: { kind: string }) => e.kind,
    );
    assert.deepEqual(rbKinds, [
      'flow_started',
      'step_dispatched',
      'member_turn_failed',
      'step_failed',
      'supervisor_escalation',
      'flow_failed',
    ]);

    const self = await rpcOk(app.url, 'mob/send_message', { mob_id: 'd1', agent_identity: 'lead', prompt: 'go self' });
    assert.match(self.text, /does not delegate to itself/);
    // A plain session is not a member: no mob tools.
    const plain = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
    assert.equal(plain.status, 200);
    const plainReq = app.provider.requests.at(-1)!;
    assert.equal(
      plainReq.tools.some((x) => x.name === 'delegate'),
      false,
    );
  });

  it('ends open mob streams with done at shutdown', async (t) => {
    const app = await startApp(t);
    await rpcOk(app.url, 'mob/create', { mob_id: 'z' });
    const mob = await SseClient.open(app.url, '/mob/z/events');
    const toolkit = await SseClient.open(app.url, '/toolkit/mob_events/stream');
    await mob.untilEvent('mob_created');
    await toolkit.untilEvent('mob_created');
    await app.close();
    await mob.untilEvent('done');
    await toolkit.untilEvent('done');
  });

  it('answers bad input with the spec envelopes', async (t) => {
    const app = await startApp(t);
    const unknownEvents = await call(app.url, 'GET', '/mob/nope/events');
    assert.equal(unknownEvents.status, 404);
    assert.equal(unknownEvents.body.code, 'NOT_FOUND');
    for (const [method, path, body] of [
      ['POST', '/mob/nope/spawn-helper', { prompt: 'x', result_label: 'r', max_text_bytes: 5, agent_identity: 'h' }],
      ['POST', '/mob/nope/fork-helper', { prompt: 'x', result_label: 'r', max_text_bytes: 5, agent_identity: 'h', source_member_id: 'a' }],
      ['POST', '/mob/nope/wait-kickoff', undefined],
      ['POST', '/mob/nope/wire-members-batch', { edges: [{ a: 'x', b: 'y' }] }],
      ['GET', '/mob/nope/members/a/status', undefined],
      ['GET', '/mob/nope/members/a/history', undefined],
      ['POST', '/mob/nope/members/a/cancel', undefined],
      ['POST', '/mob/nope/members/a/respawn', undefined],
      ['GET', '/mob/nope/hosts', undefined],
      ['GET', '/mob/nope/route-installs', undefined],
    ] as const) {
      const res = await call(app.url, method, path, body);
      assert.equal(res.status, 400, `${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'BAD_REQUEST');
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await call(app.url, 'GET', '/mob/tools')).status, 404);
    assert.equal((await call(app.url, 'POST', '/mob/call', { name: 'x' })).status, 404);
    assert.equal((await call(app.url, 'POST', '/mob/nope/wire-members-batch', { edges: [] })).status, 400);
    assert.equal((await call(app.url, 'GET', '/mob/nope/members/a/history?limit=abc')).status, 400);
    assert.equal((await call(app.url, 'GET', '/toolkit/mob_events/stream?after_cursor=-1')).status, 400);

    const parse = await call(app.url, 'POST', '/rpc', '{not json');
    assert.equal(parse.status, 200);
    assert.equal(parse.body.error.code, -32700);
    assert.equal((await call(app.url, 'POST', '/rpc', [])).body.error.code, -32600);
    assert.equal((await call(app.url, 'POST', '/rpc', { jsonrpc: '1.0', id: 1, method: 'mob/list' })).body.error.code, -32600);
    assert.equal((await rpc(app.url, 'mob/nothing')).error?.code, -32601);
    assert.equal((await rpc(app.url, 'mob/create', { definition: { members: [{ agent_identity: '' }] } })).error?.code, -32602);
    assert.equal((await rpc(app.url, 'mob/get', { mob_id: 'nope' })).error?.code, -32004);
    const batch = await call(app.url, 'POST', '/rpc', [
      { jsonrpc: '2.0', id: 'a', method: 'mob/list' },
      { jsonrpc: '2.0', method: 'mob/list' },
    ]);
    assert.equal(batch.body.length, 1, 'notifications get no reply');
    assert.deepEqual(batch.body[0].result, { mobs: [] });
    const note = await call(app.url, 'POST', '/rpc', { jsonrpc: '2.0', method: 'mob/list' });
    assert.equal(note.status, 204);
    const dup = await rpcOk(app.url, 'mob/create', { mob_id: 'dup' });
    assert.equal(dup.mob_id, 'dup');
    assert.equal((await rpc(app.url, 'mob/create', { mob_id: 'dup' })).error?.code, -32007);
    assert.equal(
      (
        await rpc(app.url, 'mob/create', {
          definition: {
            members: [{ agent_identity: 'a' }],
            flows: [{ flow_id: 'f', steps: [{ step_id: 's', member: 'ghost', prompt: 'p' }] }],
          },
        })
      ).error?.code,
      -32602,
    );
    assert.equal((await rpc(app.url, 'mob/start_flow', { mob_id: 'dup', flow_id: 'none' })).error?.code, -32602);
  });
});
