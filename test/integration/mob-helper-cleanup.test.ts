// test/integration/mob-helper-cleanup.test.ts: a helper's retirement on the real server. Normally its
// session is archived, it leaves the mob's members for the bounded retired-helpers index (status and
// history still read) and the result has no `retirement_error`. When another caller queued work on the
// helper's session while it ran, the session cannot be archived at that moment: the result carries
// `retirement_error`, the debt is on the member, and it is paid (archive, prune, `helper_retired`) once
// that work ends.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { SseClient } from '../helpers/sse-client.ts';

function lastUser(req: ProviderRequest): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

const helperBody = (id: string, prompt = `task ${id}`) => ({ prompt, result_label: 'r', max_text_bytes: 100, agent_identity: id });

describe('mob helper retirement', () => {
  it('archives the helper session and prunes retired helpers from the mob record, bounded', async (t) => {
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply =>
      lastUser(req) === 'fail please' ? { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } } : echoReply(req),
    );
    await rpcOk(app.url, 'mob/create', { mob_id: 'p', definition: { members: [{ agent_identity: 'lead' }] } });
    const retired = await SseClient.open(app.url, '/toolkit/mob_events/stream?mob_id=p&kinds=helper_retired');
    t.after(() => retired.close());
    await retired.untilEvent('stream_opened');

    const first = await call(app.url, 'POST', '/mob/p/spawn-helper', helperBody('h0'));
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal('retirement_error' in first.body, false, 'no cleanup debt: no retirement_error');
    const event = JSON.parse((await retired.untilEvent('helper_retired', 60_000)).data);
    assert.equal(event.agent_identity, 'h0');
    assert.deepEqual(event.data, { session_id: first.body.session_id, archived: true });
    let mob = await rpcOk(app.url, 'mob/get', { mob_id: 'p' });
    assert.deepEqual(
      mob.members.map((m: { agent_identity: string }) => m.agent_identity),
      ['lead'],
      'the helper left the members',
    );
    assert.deepEqual(mob.retired_helpers, ['h0']);
    // Its status and history stay readable on the mob routes; the archived session is gone from /sessions.
    const status = (await call(app.url, 'GET', '/mob/p/members/h0/status')).body;
    assert.equal(status.state, 'retired');
    assert.equal(status.helper, true);
    assert.equal(status.session_id, first.body.session_id);
    const hist = (await call(app.url, 'GET', '/mob/p/members/h0/history')).body;
    assert.deepEqual(
      hist.page.messages.map((m: { role: string }) => m.role),
      ['user', 'block_assistant'],
    );
    assert.equal((await call(app.url, 'GET', `/sessions/${first.body.session_id}`)).status, 404);
    const helperEvents = await SseClient.open(app.url, '/mob/p/events?member=h0');
    t.after(() => helperEvents.close());
    assert.deepEqual(JSON.parse((await helperEvents.untilEvent('stream_opened')).data), { mob_id: 'p', member: 'h0' });
    await helperEvents.untilEvent('helper_completed', 60_000);

    // A helper whose turn failed gives no result, and is retired and pruned all the same.
    const failed = await call(app.url, 'POST', '/mob/p/spawn-helper', helperBody('hf', 'fail please'));
    assert.equal(failed.status, 502, JSON.stringify(failed.body));
    const isHf = (f: { event?: string; data: string }) => f.event === 'helper_retired' && JSON.parse(f.data).agent_identity === 'hf';
    await retired.until((c) => c.frames.some(isHf), 'hf retired', 60_000);
    const hfRetired = JSON.parse(retired.frames.find(isHf)!.data);
    assert.equal(hfRetired.data.archived, true);
    assert.deepEqual((await rpcOk(app.url, 'mob/get', { mob_id: 'p' })).retired_helpers, ['h0', 'hf']);
    const hf = (await call(app.url, 'GET', '/mob/p/members/hf/status')).body;
    assert.equal(hf.state, 'retired');
    assert.equal(hf.kickoff, 'failed');

    // 70 helpers later the record holds the lead and the newest 64 retired helpers: bounded.
    for (let i = 1; i <= 70; i++) {
      const r = await call(app.url, 'POST', '/mob/p/spawn-helper', helperBody(`h${i}`));
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }
    mob = await rpcOk(app.url, 'mob/get', { mob_id: 'p' });
    assert.equal(mob.members.length, 1);
    assert.equal(mob.retired_helpers.length, 64);
    assert.equal(mob.retired_helpers[0], 'h7');
    assert.equal(mob.retired_helpers.at(-1), 'h70');
    assert.equal((await call(app.url, 'GET', '/mob/p/members/h0/status')).status, 400, 'dropped from the index: unknown');
    assert.equal((await call(app.url, 'GET', '/mob/p/members/h7/status')).body.state, 'retired');
    // A new helper under a pruned identity continues its generations.
    const again = await call(app.url, 'POST', '/mob/p/spawn-helper', helperBody('h70'));
    assert.match(again.body.member_ref, /@2$/);
  });

  it("reports retirement_error while another caller's work holds the helper session, and pays the debt after", async (t) => {
    const kickGate = deferred();
    const kickEntered = deferred();
    const outsideGate = deferred();
    const outsideEntered = deferred();
    const app = await startApp(t, (req: ProviderRequest): ScriptedReply => {
      const text = lastUser(req);
      if (text === 'helper task') {
        kickEntered.resolve();
        return { text: 'helper answer', waitFor: kickGate.promise };
      }
      if (text === 'outside work') {
        outsideEntered.resolve();
        return { text: 'outside answer', waitFor: outsideGate.promise };
      }
      return echoReply(req);
    });
    await rpcOk(app.url, 'mob/create', { mob_id: 'd' });
    const retired = await SseClient.open(app.url, '/toolkit/mob_events/stream?mob_id=d&kinds=helper_retired');
    t.after(() => retired.close());
    await retired.untilEvent('stream_opened');

    const pending = call(app.url, 'POST', '/mob/d/spawn-helper', helperBody('h', 'helper task'));
    await kickEntered.promise;
    const sid = (await call(app.url, 'GET', '/mob/d/members/h/status')).body.session_id;
    // Another caller queues a follow-up on the helper's session while the helper's turn runs.
    const queued = await call(
      app.url,
      'POST',
      `/sessions/${sid}/messages`,
      { session_id: sid, prompt: 'outside work', busy_policy: 'enqueue' },
      { prefer: 'respond-async' },
    );
    assert.equal(queued.status, 202, JSON.stringify(queued.body));
    kickGate.resolve();

    const res = await pending;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.output, 'helper answer', 'the certified result was captured');
    assert.match(res.body.retirement_error, /work another caller started is on it/);
    await outsideEntered.promise;
    const st = (await call(app.url, 'GET', '/mob/d/members/h/status')).body;
    assert.equal(st.state, 'retired');
    assert.equal(st.cleanup_debt, res.body.retirement_error);
    assert.deepEqual(
      (await rpcOk(app.url, 'mob/get', { mob_id: 'd' })).members.map((m: { agent_identity: string }) => m.agent_identity),
      ['h'],
      'kept while the debt remains',
    );
    assert.equal(
      (await call(app.url, 'GET', `/sessions/${sid}/status`)).body.state,
      'running',
      "the other caller's turn was not interrupted",
    );
    assert.equal(
      retired.frames.some((f) => f.event === 'helper_retired'),
      false,
    );

    // The other caller's turn ends: the session is archived, the helper pruned, helper_retired emitted.
    outsideGate.resolve();
    const paid = JSON.parse((await retired.untilEvent('helper_retired', 60_000)).data);
    assert.deepEqual(paid.data, { session_id: sid, archived: true, cleanup_debt_paid: true });
    const mob = await rpcOk(app.url, 'mob/get', { mob_id: 'd' });
    assert.deepEqual(mob.members, []);
    assert.deepEqual(mob.retired_helpers, ['h']);
    const after = (await call(app.url, 'GET', '/mob/d/members/h/status')).body;
    assert.equal(after.state, 'retired');
    assert.equal('cleanup_debt' in after, false);
    assert.equal((await call(app.url, 'GET', `/sessions/${sid}`)).status, 404, 'archived');
    const hist = (await call(app.url, 'GET', '/mob/d/members/h/history')).body;
    assert.ok(JSON.stringify(hist.page.messages).includes('outside answer'), "the other caller's turn committed before the archive");
  });
});
