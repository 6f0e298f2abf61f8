// test/integration/mob-fences.test.ts: stale cursors and stale fences on the real server. The structural
// ledger keeps `[mob] event_retention` events: a cursor older than what it keeps, or beyond its head, is
// refused on JSON-RPC (-32023), on the SSE routes (410 STALE_CURSOR) and by `warren mob` (exit 47).
// Mutations carrying `expected_revision` / `expected_generation` that no longer match are refused
// (-32024, 409 STALE_FENCE, exit 48) and change nothing.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runMobCli } from '../../cli/mob-command.ts';
import { call, startApp } from '../helpers/app.ts';
import { rpc, rpcOk } from '../helpers/mob-driver.ts';

describe('mob stale cursors and fences', () => {
  it('refuses cursors the ledger no longer retains or never had', async (t) => {
    const app = await startApp(t, [], { config: { mob: { event_retention: 16 } } });
    // 40 mobs: 40 mob_created events. At head 32 the 16 oldest are deleted (one batch): floor 16.
    for (let i = 0; i < 40; i++) await rpcOk(app.url, 'mob/create', { mob_id: `m${i}` });
    const status = await rpcOk(app.url, 'mob/runtime_status');
    assert.equal(status.head_cursor, 40);
    assert.equal(status.floor_cursor, 16);

    const all = await rpcOk(app.url, 'toolkit/mob_events/query', { limit: 1000 });
    assert.equal(all.events[0].cursor, 17, 'without a cursor: the oldest retained event on');
    assert.equal(all.events.length, 24);
    assert.equal(all.floor_cursor, 16);
    const atFloor = await rpcOk(app.url, 'toolkit/mob_events/query', { after_cursor: 16, limit: 2 });
    assert.deepEqual(
      atFloor.events.map((e: { cursor: number }) => e.cursor),
      [17, 18],
    );
    assert.equal(
      (await rpcOk(app.url, 'toolkit/mob_events/query', { after_cursor: 40 })).events.length,
      0,
      'the head itself is a valid cursor',
    );

    const old = await rpc(app.url, 'toolkit/mob_events/query', { after_cursor: 3 });
    assert.equal(old.error?.code, -32023);
    assert.equal(old.error?.data?.code, 'STALE_CURSOR');
    assert.deepEqual(old.error?.data?.details, { watermark: 16, requested: 3, floor_cursor: 16, head_cursor: 40, reason: 'trimmed' });
    const ahead = await rpc(app.url, 'toolkit/mob_events/query', { after_cursor: 41 });
    assert.equal(ahead.error?.code, -32023);
    assert.deepEqual(ahead.error?.data?.details, {
      watermark: 40,
      requested: 41,
      floor_cursor: 16,
      head_cursor: 40,
      reason: 'beyond_head',
    });
    assert.equal(
      (await rpc(app.url, 'toolkit/mob_events/subscribe', { after_cursor: 0 })).error?.code,
      -32023,
      'cursor 0 asks for trimmed events',
    );
    const sub = await rpcOk(app.url, 'toolkit/mob_events/subscribe', {});
    assert.equal(sub.snapshot.events[0].cursor, 17);

    // The SSE routes refuse before the stream opens: 410 with the same details.
    const stream = await call(app.url, 'GET', '/toolkit/mob_events/stream?after_cursor=5');
    assert.equal(stream.status, 410);
    assert.equal(stream.body.code, 'STALE_CURSOR');
    assert.equal(stream.body.details.watermark, 16);
    assert.equal(stream.body.details.requested, 5);
    const mobEvents = await call(app.url, 'GET', '/mob/m39/events', undefined, { 'Last-Event-ID': '2' });
    assert.equal(mobEvents.status, 410);
    assert.equal(mobEvents.body.code, 'STALE_CURSOR');
    assert.equal((await call(app.url, 'GET', '/mob/m39/events?after_cursor=999')).status, 410);

    // The CLI exits 47 on a stale cursor and 0 on a retained one.
    const cli = await runMobCli(['toolkit/mob_events/query', '{"after_cursor":3}', '--url', app.url]);
    assert.equal(cli.code, 47, cli.stderr);
    assert.match(cli.stderr, /STALE_CURSOR/);
    assert.equal((await runMobCli(['toolkit/mob_events/query', '{"after_cursor":39}', '--url', app.url])).code, 0);

    // The floor survives a restart of the ledger (it is a stored record): a new app on the same state root.
    await app.close();
    const again = await startApp(t, [], { stateRoot: app.stateRoot, config: { mob: { event_retention: 16 } } });
    assert.equal((await rpc(again.url, 'toolkit/mob_events/query', { after_cursor: 3 })).error?.code, -32023);
    assert.equal((await rpcOk(again.url, 'toolkit/mob_events/query', {})).events[0].cursor, 17);
  });

  it('refuses mutations whose expected revision or generation moved on', async (t) => {
    const app = await startApp(t);
    await rpcOk(app.url, 'mob/create', {
      mob_id: 'f',
      definition: { members: [{ agent_identity: 'a' }, { agent_identity: 'b' }, { agent_identity: 'c' }] },
    });
    await call(app.url, 'POST', '/mob/f/wait-kickoff');
    const r0 = (await rpcOk(app.url, 'mob/get', { mob_id: 'f' })).revision;
    assert.equal(r0, 3, 'three spawns');

    const stale = await rpc(app.url, 'mob/wire_members', { mob_id: 'f', edges: [{ a: 'a', b: 'b' }], expected_revision: r0 - 1 });
    assert.equal(stale.error?.code, -32024);
    assert.equal(stale.error?.data?.code, 'STALE_FENCE');
    assert.deepEqual(stale.error?.data?.details, { mob_id: 'f', fence: 'revision', expected: r0 - 1, current: r0 });
    assert.deepEqual((await rpcOk(app.url, 'mob/get', { mob_id: 'f' })).edges, [], 'a refused mutation changes nothing');
    const wired = await rpcOk(app.url, 'mob/wire_members', { mob_id: 'f', edges: [{ a: 'a', b: 'b' }], expected_revision: r0 });
    assert.deepEqual(wired.wired, [{ a: 'a', b: 'b' }]);
    assert.equal(wired.revision, r0 + 1);
    // The same fence again is stale now (another caller changed the mob in between).
    const cli = await runMobCli([
      'mob/unwire_members',
      JSON.stringify({ mob_id: 'f', a: 'a', b: 'b', expected_revision: r0 }),
      '--url',
      app.url,
    ]);
    assert.equal(cli.code, 48, cli.stderr);
    assert.match(cli.stderr, /STALE_FENCE/);
    const ok = await runMobCli([
      'mob/unwire_members',
      JSON.stringify({ mob_id: 'f', a: 'a', b: 'b', expected_revision: r0 + 1 }),
      '--url',
      app.url,
    ]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(ok.stdout).revision, r0 + 2);

    // REST: wire-members-batch and respawn carry the same fences (409 STALE_FENCE).
    const batch = await call(app.url, 'POST', '/mob/f/wire-members-batch', { edges: [{ a: 'b', b: 'c' }], expected_revision: r0 });
    assert.equal(batch.status, 409);
    assert.equal(batch.body.code, 'STALE_FENCE');
    const respawned = await call(app.url, 'POST', '/mob/f/members/a/respawn', { expected_generation: 1 });
    assert.equal(respawned.status, 200, JSON.stringify(respawned.body));
    assert.equal(respawned.body.receipt.generation, 2);
    const twice = await call(app.url, 'POST', '/mob/f/members/a/respawn', { expected_generation: 1 });
    assert.equal(twice.status, 409);
    assert.deepEqual(twice.body.details, { mob_id: 'f', agent_identity: 'a', fence: 'generation', expected: 1, current: 2 });
    assert.equal((await call(app.url, 'GET', '/mob/f/members/a/status')).body.generation, 2, 'the refused respawn made no generation 3');

    // Member fences on JSON-RPC: retire with the old generation is refused, with the current one done.
    assert.equal(
      (await rpc(app.url, 'mob/retire_member', { mob_id: 'f', agent_identity: 'a', expected_generation: 1 })).error?.code,
      -32024,
    );
    assert.equal(
      (await rpc(app.url, 'mob/send_message', { mob_id: 'f', agent_identity: 'a', prompt: 'hi', expected_generation: 1 })).error?.code,
      -32024,
    );
    const retired = await rpcOk(app.url, 'mob/retire_member', { mob_id: 'f', agent_identity: 'a', expected_generation: 2 });
    assert.equal(retired.retired, true);
    const rNow = (await rpcOk(app.url, 'mob/get', { mob_id: 'f' })).revision;
    assert.equal(retired.revision, rNow);
    assert.equal((await rpc(app.url, 'mob/destroy', { mob_id: 'f', expected_revision: rNow - 1 })).error?.code, -32024);
    assert.equal((await rpcOk(app.url, 'mob/destroy', { mob_id: 'f', expected_revision: rNow })).state, 'destroyed');
  });
});
