// test/integration/mob-schedules.test.ts: schedules targeting mobs (member, flow, spawn_helper,
// fork_helper) on the real server with a ManualClock: each due occurrence is delivered to the mob and
// completed with the mob's outcome; an unknown mob follows the missing-target policy.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import { call, startApp } from '../helpers/app.ts';
import { rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { driveClock } from '../helpers/schedule-clock.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const prompt = (text: string) => ({ type: 'prompt', prompt: text });

describe('schedules with mob targets', () => {
  it('delivers member, flow, spawn_helper and fork_helper targets, and misfires an unknown mob', async (t) => {
    const clock = new ManualClock(T0);
    const app = await startApp(t, [], { clock });
    await rpcOk(app.url, 'mob/create', { mob_id: 'team', definition: TEAM });
    await call(app.url, 'POST', '/mob/team/wait-kickoff');
    const due = { type: 'once', due_at_utc: iso(T0 + 60_000) };
    const targets = {
      member: { target_kind: 'mob', type: 'member', mob_id: 'team', agent_identity: 'planner', action: prompt('plan the day') },
      flow: { target_kind: 'mob', type: 'flow', mob_id: 'team', flow_id: 'draft', activation: { input: 'tides' } },
      spawn: {
        target_kind: 'mob',
        type: 'spawn_helper',
        mob_id: 'team',
        agent_identity: 'scout',
        result_label: 'scouting',
        max_text_bytes: 8,
        action: prompt('look around'),
      },
      fork: { target_kind: 'mob', type: 'fork_helper', mob_id: 'team', source_member_id: 'writer', action: prompt('second opinion') },
      ghost: { target_kind: 'mob', type: 'member', mob_id: 'ghost', agent_identity: 'x', action: prompt('hi') },
    };
    const ids: Record<string, string> = {};
    for (const [name, target] of Object.entries(targets)) {
      const res = await call(app.url, 'POST', '/schedules', { name, trigger: due, target });
      assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body.target, target);
      ids[name] = res.body.schedule_id;
    }
    await driveClock(clock, () => app.schedulesSettled(), T0 + 60_000);
    const occ = async (name: string) => (await call(app.url, 'GET', `/schedules/${ids[name]}/occurrences`)).body.occurrences[0];

    const member = await occ('member');
    assert.equal(member.phase, 'completed', JSON.stringify(member));
    assert.equal(member.runtime_outcome.agent_identity, 'planner');
    const flow = await occ('flow');
    assert.equal(flow.phase, 'completed');
    assert.equal(flow.runtime_outcome.run_id, `schedule-${flow.occurrence_id}`);
    const spawn = await occ('spawn');
    assert.equal(spawn.phase, 'completed');
    assert.deepEqual(spawn.runtime_outcome.bounded_result, {
      label: 'scouting',
      text: 'echo: lo',
      truncated: true,
      original_bytes: 17,
      max_text_bytes: 8,
    });
    assert.equal((await occ('fork')).phase, 'completed');
    const ghost = await occ('ghost');
    assert.equal(ghost.phase, 'misfired');
    assert.equal(ghost.failure_class, 'missing_target');

    const hist = await call(app.url, 'GET', '/mob/team/members/planner/history');
    assert.ok(JSON.stringify(hist.body.page.messages).includes('plan the day'));
    const events = await rpcOk(app.url, 'toolkit/mob_events/query', {
      filter: { mob_id: 'team', run_id: `schedule-${flow.occurrence_id}` },
    });
    assert.ok(events.events.some((e: { kind: string }) => e.kind === 'flow_started'));

    for (const bad of [
      { target_kind: 'mob', type: 'flow', mob_id: 'team' },
      { target_kind: 'mob', type: 'fork_helper', mob_id: 'team', action: prompt('x') },
      { target_kind: 'mob', type: 'spawn_helper', mob_id: 'team', action: { type: 'event', event_type: 'e', payload: 1 } },
      { target_kind: 'mob', type: 'crew', mob_id: 'team' },
    ]) {
      const res = await call(app.url, 'POST', '/schedules', { trigger: due, target: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.equal(res.body.code, 'BAD_REQUEST');
    }
  });
});
