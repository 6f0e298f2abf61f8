// test/integration/schedule-tools.test.ts: GET /schedule/tools, POST /schedule/call (cron authoring,
// current_session refusal, unknown tools) and a session whose model calls warren_schedule_create with a
// current_session target, through the real server; the capability follows [tools] schedule_enabled.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { driveClock } from '../helpers/schedule-clock.ts';

const T0 = Date.parse('2026-06-01T08:00:00Z');

describe('schedule tools', () => {
  it('lists eight tools with camelCase inputSchema and calls them through /schedule/call', async (t) => {
    const app = await startApp(t, [], { clock: new ManualClock(T0) });
    const tools = await call(app.url, 'GET', '/schedule/tools');
    assert.equal(tools.status, 200);
    assert.deepEqual(
      tools.body.tools.map((x: { name: string }) => x.name),
      ['create', 'get', 'list', 'update', 'pause', 'resume', 'delete', 'occurrences'].map((n) => `warren_schedule_${n}`),
    );
    assert.ok(tools.body.tools.every((x: { inputSchema: { type: string } }) => x.inputSchema.type === 'object'));
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const created = await call(app.url, 'POST', '/schedule/call', {
      name: 'warren_schedule_create',
      arguments: {
        trigger: { type: 'cron', expression: '30 9 * * MON-FRI', timezone: 'America/New_York' },
        target: { target_kind: 'session', type: 'exact_session', session_id: sid, action: { type: 'prompt', prompt: 'standup' } },
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.deepEqual(created.body.trigger, {
      type: 'calendar',
      timezone: 'America/New_York',
      minute: { kind: 'values', values: [30] },
      hour: { kind: 'values', values: [9] },
      day_of_week: { kind: 'values', values: [1, 2, 3, 4, 5] },
    });
    assert.ok(created.body.machine_state, 'tool results include machine_state');
    const id = created.body.schedule_id;
    const occ = await call(app.url, 'POST', '/schedule/call', {
      name: 'warren_schedule_occurrences',
      arguments: { schedule_id: id, limit: 2 },
    });
    assert.deepEqual(
      occ.body.occurrences.map((o: { due_at_utc: string }) => o.due_at_utc),
      ['2026-06-01T13:30:00.000Z', '2026-06-02T13:30:00.000Z'],
    );
    assert.equal(
      (await call(app.url, 'POST', '/schedule/call', { name: 'warren_schedule_pause', arguments: { schedule_id: id } })).body.phase,
      'paused',
    );
    assert.equal((await call(app.url, 'POST', '/schedule/call', { name: 'warren_schedule_list' })).body.schedules.length, 1);
    const upd = await call(app.url, 'POST', '/schedule/call', {
      name: 'warren_schedule_update',
      arguments: { schedule_id: id, name: 'standup', expected_revision: 2 },
    });
    assert.equal(upd.body.name, 'standup');
    assert.equal(
      (await call(app.url, 'POST', '/schedule/call', { name: 'warren_schedule_delete', arguments: { schedule_id: id } })).body.phase,
      'deleted',
    );
    const errors: Array<[unknown, number, RegExp]> = [
      [{ name: 'warren_schedule_nope' }, 400, /unknown schedule tool/],
      [{ name: 'warren_schedule_get', arguments: { schedule_id: 'x' } }, 400, /Invalid schedule id/],
      [{ name: 'warren_schedule_get', arguments: { schedule_id: '0190a5b2-0000-7000-8000-000000000000' } }, 404, /Schedule not found/],
      [
        {
          name: 'warren_schedule_create',
          arguments: {
            trigger: { type: 'cron', expression: '61 * * * *' },
            target: { type: 'current_session', action: { type: 'prompt', prompt: 'p' } },
          },
        },
        400,
        /minute: 61/,
      ],
      [
        {
          name: 'warren_schedule_create',
          arguments: {
            trigger: { type: 'cron', expression: '* * * * *' },
            target: { type: 'current_session', action: { type: 'prompt', prompt: 'p' } },
          },
        },
        400,
        /current_session/,
      ],
      [{ name: 'warren_schedule_create', arguments: { trigger: { type: 'cron', expression: '0 9 * *' }, target: {} } }, 400, /5 fields/],
    ];
    for (const [body, status, reason] of errors) {
      const res = await call(app.url, 'POST', '/schedule/call', body);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match(res.body.error, reason);
    }
  });

  it("a session's model schedules itself with a current_session target, and the schedule fires into it", async (t) => {
    const clock = new ManualClock(T0);
    let made = false;
    const script = (req: ProviderRequest): ScriptedReply => {
      const names = (req.tools ?? []).map((x) => x.name);
      if (!made && names.includes('warren_schedule_create')) {
        made = true;
        return {
          tool_calls: [
            {
              id: 'c1',
              name: 'warren_schedule_create',
              args: {
                trigger: { type: 'once', due_at_utc: new Date(T0 + 3_600_000).toISOString() },
                target: { type: 'current_session', action: { type: 'prompt', prompt: 'reminder!' } },
              },
            },
          ],
        };
      }
      return { text: 'ok' };
    };
    const app = await startApp(t, script, { clock });
    const sid = await createSession(app.url, { prompt: 'remind me in an hour', provider: 'scripted', enable_schedule: true });
    const list = (await call(app.url, 'GET', '/schedules')).body.schedules;
    assert.equal(list.length, 1);
    assert.deepEqual(list[0].target, {
      target_kind: 'session',
      type: 'resumable_session',
      session_id: sid,
      action: { type: 'prompt', prompt: 'reminder!' },
    });
    await driveClock(clock, () => app.schedulesSettled(), T0 + 3_600_000);
    const h = (await call(app.url, 'GET', `/sessions/${sid}/history`)).body.messages.filter((m: { role: string }) => m.role === 'user');
    assert.deepEqual(
      h.map((m: { content: string }) => m.content),
      ['remind me in an hour', 'reminder!'],
    );
  });

  it('answers 501 and reports DisabledByPolicy when [tools] schedule_enabled is false', async (t) => {
    const app = await startApp(t, [], { clock: new ManualClock(T0) });
    const cfg = await call(app.url, 'GET', '/config');
    const off = await call(app.url, 'PATCH', '/config', {
      patch: { tools: { schedule_enabled: false } },
      expected_generation: cfg.body.generation,
    });
    assert.equal(off.status, 200, JSON.stringify(off.body));
    const res = await call(app.url, 'GET', '/schedules');
    assert.equal(res.status, 501);
    assert.equal(res.body.code, 'CAPABILITY_UNAVAILABLE');
    const caps = (await call(app.url, 'GET', '/capabilities')).body.capabilities;
    const row = caps.find((c: { id: string }) => c.id === 'schedule');
    assert.ok(row && typeof row.status === 'object' && 'DisabledByPolicy' in row.status, JSON.stringify(row));
  });
});
