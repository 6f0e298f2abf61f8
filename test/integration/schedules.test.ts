// test/integration/schedules.test.ts: the schedule routes and firing through the real server, with a
// ManualClock driving time (no sleeps): CRUD and validation, real turns on due, misfire policies, DST.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import pino from 'pino';
import { createApp, type App } from '../../app.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { gatedAt } from '../helpers/gates.ts';
import { join } from 'node:path';
import { STORE_DIR } from '../../config/realm.ts';
import { openStore } from '../../storage/open-store.ts';
import { driveClock } from '../helpers/schedule-clock.ts';
import { Value } from 'typebox/value';
import { Occurrence } from '../../contracts/schedule.ts';
import { poll } from '../helpers/wait.ts';

const T0 = Date.parse('2026-03-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

async function start(t: TestContext, startMs = T0, opts: Parameters<typeof startApp>[2] = {}) {
  const clock = new ManualClock(startMs);
  const app = await startApp(t, [], { clock, ...opts });
  /** Moves the fake clock to `ms`, running every due firing and scheduled turn to completion. */
  const advanceTo = (ms: number) => driveClock(clock, () => app.schedulesSettled(), ms);
  return { app, clock, advanceTo };
}

const promptTarget = (sessionId: string, prompt = 'scheduled hello') => ({
  target_kind: 'session',
  type: 'exact_session',
  session_id: sessionId,
  action: { type: 'prompt', prompt },
});

async function userRows(app: App, sessionId: string) {
  const h = await call(app.url, 'GET', `/sessions/${sessionId}/history?offset=0&limit=1000`);
  assert.equal(h.status, 200);
  return (h.body.messages as Array<{ role: string; content: unknown; identity?: { source?: string } }>).filter((m) => m.role === 'user');
}

describe('schedules (real server, fake clock)', () => {
  it('creates with the wire defaults, lists, reads, and answers bad ids 400 and unknown ids 404', async (t) => {
    const { app } = await start(t);
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const res = await call(app.url, 'POST', '/schedules', {
      name: 'n',
      trigger: { type: 'once', due_at_utc: iso(T0 + 60_000) },
      target: promptTarget(sid),
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const s = res.body;
    assert.match(s.schedule_id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    assert.deepEqual(s.misfire_policy, { type: 'skip' });
    assert.equal(s.overlap_policy, 'skip_if_running');
    assert.equal(s.missing_target_policy, 'mark_misfired');
    assert.equal(s.planning_horizon_days, 30);
    assert.equal(s.planning_horizon_occurrences, 64);
    assert.equal(s.phase, 'active');
    assert.equal(s.revision, 1);
    assert.equal(s.next_occurrence_ordinal, 1);
    assert.equal(s.machine_state, undefined);
    assert.equal((await call(app.url, 'GET', `/schedules/${s.schedule_id}`)).body.schedule_id, s.schedule_id);
    assert.deepEqual(
      (await call(app.url, 'GET', '/schedules')).body.schedules.map((x: { schedule_id: string }) => x.schedule_id),
      [s.schedule_id],
    );
    const bad = await call(app.url, 'GET', '/schedules/not-a-uuid');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
    const unknown = await call(app.url, 'GET', '/schedules/0190a5b2-0000-7000-8000-000000000000');
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error, /Schedule not found/);
    for (const path of ['/pause', '/resume', '/occurrences', '']) {
      assert.equal((await call(app.url, path === '/occurrences' || path === '' ? 'GET' : 'POST', `/schedules/nope${path}`)).status, 400);
    }
    assert.equal((await call(app.url, 'DELETE', '/schedules/0190a5b2-0000-7000-8000-000000000000')).status, 404);
  });

  it('answers an invalid trigger, time zone or target 400 with the reason', async (t) => {
    const { app } = await start(t);
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const cases: Array<[unknown, unknown, RegExp]> = [
      [{ type: 'interval', start_at_utc: iso(T0), every_seconds: 0 }, promptTarget(sid), /every_seconds/],
      [
        { type: 'calendar', timezone: 'Mars/Olympus', hour: { kind: 'values', values: [9] } },
        promptTarget(sid),
        /unknown time zone 'Mars\/Olympus'/,
      ],
      [{ type: 'calendar', timezone: 'UTC', minute: { kind: 'values', values: [61] } }, promptTarget(sid), /minute value 61/],
      [
        { type: 'calendar', timezone: 'UTC', day_of_month: { kind: 'values', values: [30] }, month: { kind: 'values', values: [2] } },
        promptTarget(sid),
        /no occurrence/,
      ],
      [{ type: 'cron', expression: '* * * * *' }, promptTarget(sid), /type must be one of once, interval, calendar/],
      [{ type: 'once', due_at_utc: 'tomorrow' }, promptTarget(sid), /due_at_utc/],
      [
        { type: 'once', due_at_utc: iso(T0) },
        { target_kind: 'mob', type: 'member', mob_id: 'm' },
        /mob member target needs agent_identity/,
      ],
      [
        { type: 'once', due_at_utc: iso(T0) },
        { target_kind: 'session', type: 'exact_session', session_id: 'x', action: { type: 'prompt', prompt: 'p' } },
        /session_id/,
      ],
      [
        { type: 'once', due_at_utc: iso(T0) },
        { target_kind: 'session', type: 'exact_session', session_id: sid, action: { type: 'poke' } },
        /action/,
      ],
    ];
    for (const [trigger, target, reason] of cases) {
      const res = await call(app.url, 'POST', '/schedules', { trigger, target });
      assert.equal(res.status, 400, JSON.stringify(trigger));
      assert.equal(res.body.code, 'BAD_REQUEST');
      assert.match(res.body.error, reason);
    }
  });

  it('fires a due occurrence as a real turn, on time by the fake clock, and records its phases', async (t) => {
    const { app, advanceTo } = await start(t);
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const due = T0 + 90_000;
    const s = (
      await call(app.url, 'POST', '/schedules', { trigger: { type: 'once', due_at_utc: iso(due) }, target: promptTarget(sid, 'wake up') })
    ).body;
    let occs = (await call(app.url, 'GET', `/schedules/${s.schedule_id}/occurrences`)).body.occurrences;
    assert.equal(occs.length, 1);
    assert.equal(occs[0].phase, 'pending');
    // The reference's occurrence carries the trigger it was planned from.
    assert.ok(Value.Check(Occurrence, occs[0]), JSON.stringify([...Value.Errors(Occurrence, occs[0])]));
    assert.deepEqual(occs[0].trigger_snapshot, { type: 'once', due_at_utc: iso(due) });
    await advanceTo(due - 1);
    assert.equal((await userRows(app, sid)).length, 1);
    await advanceTo(due);
    occs = (await call(app.url, 'GET', `/schedules/${s.schedule_id}/occurrences`)).body.occurrences;
    assert.equal(occs[0].phase, 'completed', JSON.stringify(occs[0]));
    assert.equal(occs[0].dispatched_at_utc, iso(due));
    assert.equal(occs[0].attempt_count, 1);
    assert.equal(occs[0].runtime_outcome.session_id, sid);
    const rows = await userRows(app, sid);
    assert.equal(rows.length, 2);
    assert.equal(rows[1].content, 'wake up');
    assert.equal(rows[1].identity?.source, 'schedule');
    const ledger = (await call(app.url, 'GET', `/sessions/${sid}/ledger?after_seq=0&limit=500`)).body.events as Array<{
      payload: { type: string; occurrence_id?: string };
    }>;
    const kinds = ledger.map((e) => e.payload.type);
    const at = kinds.indexOf('schedule_triggered');
    assert.ok(at >= 0 && kinds.indexOf('run_started', at) > at, kinds.join(','));
    assert.equal(ledger[at].payload.occurrence_id, occs[0].occurrence_id);
    await advanceTo(due + 86_400_000);
    assert.equal((await userRows(app, sid)).length, 2);
  });

  it('after a restart, the misfire policy decides what happens to occurrences due while the server was down', async (t) => {
    const dir = await tmpDir('warren-sched-');
    t.after(() => dir.cleanup());
    const boot = async (clock: ManualClock) => {
      const provider = createScriptedProvider([]);
      const app = await createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: dir.path,
        contextRoot: dir.path,
        realm: 'misfire',
        logger: pino({ level: 'silent' }),
        providerOverrides: { scripted: provider, openai: provider, anthropic: provider, gemini: provider },
        clock,
      });
      t.after(() => app.close());
      return app;
    };
    const due = T0 + 60_000;
    const first = await boot(new ManualClock(T0));
    const sidA = await createSession(first.url, { prompt: 'a', provider: 'scripted' });
    const sidB = await createSession(first.url, { prompt: 'b', provider: 'scripted' });
    const skip = (
      await call(first.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(due) },
        target: promptTarget(sidA, 'skip me'),
      })
    ).body;
    const catchUp = (
      await call(first.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(due) },
        target: promptTarget(sidB, 'catch me'),
        misfire_policy: { type: 'catch_up_within', window_seconds: 3600 },
      })
    ).body;
    const tooLate = (
      await call(first.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(due - 30_000) },
        target: promptTarget(sidB, 'too late'),
        misfire_policy: { type: 'catch_up_within', window_seconds: 60 },
      })
    ).body;
    await first.close();
    // Down for ten minutes: the server comes back after every due time passed.
    const clock = new ManualClock(due + 10 * 60_000);
    const second = await boot(clock);
    await driveClock(clock, () => second.schedulesSettled(), clock.now());
    const occ = async (id: string) => (await call(second.url, 'GET', `/schedules/${id}/occurrences`)).body.occurrences[0];
    const a = await occ(skip.schedule_id);
    assert.equal(a.phase, 'misfired');
    assert.equal(a.failure_class, 'misfire');
    assert.equal((await occ(catchUp.schedule_id)).phase, 'completed');
    assert.equal((await occ(tooLate.schedule_id)).phase, 'misfired');
    assert.deepEqual(
      (await userRows(second, sidA)).map((r) => r.content),
      ['a'],
    );
    assert.deepEqual(
      (await userRows(second, sidB)).map((r) => r.content),
      ['b', 'catch me'],
    );
  });

  it('recovers an occurrence left dispatching by a dead process: completed when its turn committed, never fired again', async (t) => {
    const dir = await tmpDir('warren-sched-rec-');
    t.after(() => dir.cleanup());
    const boot = async (clock: ManualClock) => {
      const provider = createScriptedProvider([]);
      const app = await createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: dir.path,
        contextRoot: dir.path,
        realm: 'recover',
        logger: pino({ level: 'silent' }),
        providerOverrides: { scripted: provider, openai: provider, anthropic: provider, gemini: provider },
        clock,
      });
      t.after(() => app.close());
      return app;
    };
    const due = T0 + 60_000;
    const clockA = new ManualClock(T0);
    const first = await boot(clockA);
    const sid = await createSession(first.url, { prompt: 'hi', provider: 'scripted' });
    const s = (
      await call(first.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(due) },
        target: promptTarget(sid, 'once only'),
      })
    ).body;
    await driveClock(clockA, () => first.schedulesSettled(), due);
    await first.close();
    // The crash state: the turn committed (its marked row is in the transcript) but the process died
    // before recording the occurrence completed; its claim lease has since expired.
    const store = await openStore('lmdb', join(dir.path, 'recover', STORE_DIR));
    const ns = `schedule-occ:${s.schedule_id}`;
    const [{ key, value }] = await store.listRecords<{ rev: number; occ: Record<string, unknown> }>(ns);
    const { completed_at_utc: _c, runtime_outcome: _r, last_receipt: _l, ...occ } = value.occ;
    await store.commit([
      {
        op: 'putRecord',
        ns,
        key,
        value: { ...value, rev: value.rev + 1, lease_ms: due + 1000, occ: { ...occ, phase: 'dispatching', claimed_by: 'dead-process' } },
      },
    ]);
    await store.close();
    const clockB = new ManualClock(due + 5000);
    const second = await boot(clockB);
    await driveClock(clockB, () => second.schedulesSettled(), due + 5000);
    const o = (await call(second.url, 'GET', `/schedules/${s.schedule_id}/occurrences`)).body.occurrences[0];
    assert.equal(o.phase, 'completed');
    assert.equal(o.runtime_outcome.recovered, true);
    assert.deepEqual(
      (await userRows(second, sid)).map((r) => r.content),
      ['hi', 'once only'],
    );
  });

  it('overlap: skip_if_running skips while the target runs a turn; allow_concurrent waits for it; event actions render as the prompt', async (t) => {
    // Model call 1 (0-based: the first scheduled turn) holds until the test opens its gate.
    const gate = gatedAt(1);
    const clock = new ManualClock(T0);
    const app = await startApp(t, gate.script, { clock });
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const occsOf = async (id: string) => (await call(app.url, 'GET', `/schedules/${id}/occurrences`)).body.occurrences;
    const first = (
      await call(app.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(T0 + 60_000) },
        target: promptTarget(sid, 'long'),
      })
    ).body;
    const skip = (
      await call(app.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(T0 + 120_000) },
        target: promptTarget(sid, 'skipped'),
      })
    ).body;
    const wait = (
      await call(app.url, 'POST', '/schedules', {
        trigger: { type: 'once', due_at_utc: iso(T0 + 120_000) },
        overlap_policy: 'allow_concurrent',
        target: {
          target_kind: 'session',
          type: 'exact_session',
          session_id: sid,
          action: { type: 'event', event_type: 'build.done', payload: { ok: true } },
        },
      })
    ).body;
    // Observed, not timed: each wait reads the occurrence until its recorded phase moves on.
    const until = (id: string, done: (phase: string) => boolean) =>
      poll(`schedule ${id}'s occurrence to move on`, async () => done((await occsOf(id))[0].phase), { intervalMs: 1 });
    clock.advanceTo(T0 + 60_000);
    await gate.entered.promise;
    await until(first.schedule_id, (p) => p === 'awaiting_completion');
    clock.advanceTo(T0 + 120_000);
    await until(skip.schedule_id, (p) => p !== 'pending');
    await until(wait.schedule_id, (p) => p !== 'pending');
    const skipped = (await occsOf(skip.schedule_id))[0];
    assert.equal(skipped.phase, 'skipped');
    assert.equal(skipped.failure_class, 'overlap');
    assert.equal((await occsOf(wait.schedule_id))[0].phase, 'claimed');
    gate.open.resolve();
    await app.schedulesSettled();
    assert.equal((await occsOf(first.schedule_id))[0].phase, 'completed');
    assert.equal((await occsOf(wait.schedule_id))[0].phase, 'completed');
    assert.deepEqual(
      (await userRows(app, sid)).map((r) => r.content),
      ['hi', 'long', 'Scheduled event \'build.done\':\n{"ok":true}'],
    );
  });

  it("shows the schedule machine and live schedule actors in the actor viewer's inspection routes", async (t) => {
    const { app } = await start(t);
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const g = (await call(app.url, 'GET', '/inspect/machines/schedule')).body;
    assert.equal(g.machine_id, 'schedule');
    const ids = g.states.map((x: { id: string }) => x.id);
    for (const id of ['schedule.active', 'schedule.firing', 'schedule.paused', 'schedule.deleted']) assert.ok(ids.includes(id), id);
    assert.ok(
      g.transitions.some(
        (x: { source: string; event: string; guard?: string }) =>
          x.source === 'schedule.active' && x.event === 'timer.due' && x.guard === 'isDue',
      ),
    );
    const s = (
      await call(app.url, 'POST', '/schedules', { trigger: { type: 'once', due_at_utc: iso(T0 + 60_000) }, target: promptTarget(sid) })
    ).body;
    await call(app.url, 'POST', `/schedules/${s.schedule_id}/pause`);
    const actors = (await call(app.url, 'GET', '/inspect/actors?kind=schedule')).body;
    assert.equal(actors.total, 1);
    assert.deepEqual(actors.counts.schedule, { paused: 1 });
  });

  it('pause holds firing, resume re-arms, PATCH compare-and-sets on revision, DELETE soft-deletes', async (t) => {
    const { app, advanceTo } = await start(t);
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const s = (
      await call(app.url, 'POST', '/schedules', {
        trigger: { type: 'interval', start_at_utc: iso(T0 + 60_000), every_seconds: 60 },
        target: promptTarget(sid, 'tick'),
        planning_horizon_occurrences: 5,
      })
    ).body;
    assert.equal(s.next_occurrence_ordinal, 5);
    const paused = (await call(app.url, 'POST', `/schedules/${s.schedule_id}/pause`)).body;
    assert.equal(paused.phase, 'paused');
    assert.equal(paused.revision, 2);
    assert.equal((await call(app.url, 'POST', `/schedules/${s.schedule_id}/pause`)).body.revision, 2);
    await advanceTo(T0 + 30_000);
    const resumed = (await call(app.url, 'POST', `/schedules/${s.schedule_id}/resume`)).body;
    assert.equal(resumed.phase, 'active');
    await advanceTo(T0 + 120_000);
    assert.equal((await userRows(app, sid)).length, 3);
    const stale = await call(app.url, 'PATCH', `/schedules/${s.schedule_id}`, { name: 'x', expected_revision: 1 });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.code, 'CONFLICT');
    const patched = await call(app.url, 'PATCH', `/schedules/${s.schedule_id}`, {
      every_seconds: 1,
      trigger: { type: 'interval', start_at_utc: iso(T0 + 3600_000), every_seconds: 3600 },
      expected_revision: resumed.revision,
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.equal(patched.body.revision, resumed.revision + 1);
    const occs = (await call(app.url, 'GET', `/schedules/${s.schedule_id}/occurrences`)).body.occurrences;
    const superseded = occs.filter((o: { phase: string }) => o.phase === 'superseded');
    // Firing tops the plan up to the horizon: the 5 pending ones are superseded by the new trigger.
    assert.equal(superseded.length, 5);
    assert.ok(superseded.every((o: { superseded_by_revision: number }) => o.superseded_by_revision === patched.body.revision));
    assert.equal(occs.filter((o: { phase: string }) => o.phase === 'pending')[0].due_at_utc, iso(T0 + 3600_000));
    const deleted = (await call(app.url, 'DELETE', `/schedules/${s.schedule_id}`)).body;
    assert.equal(deleted.phase, 'deleted');
    assert.ok(deleted.deleted_at_utc);
    assert.equal((await call(app.url, 'GET', '/schedules')).body.schedules[0].phase, 'deleted');
    assert.equal((await call(app.url, 'POST', `/schedules/${s.schedule_id}/resume`)).status, 400);
    await advanceTo(T0 + 5 * 3600_000);
    assert.equal((await userRows(app, sid)).length, 3);
  });

  it('calendar triggers follow the zone through DST, month ends and leap days', async (t) => {
    const { app, advanceTo } = await start(t, Date.parse('2026-03-27T12:00:00Z'));
    const sid = await createSession(app.url, { prompt: 'hi', provider: 'scripted' });
    const berlin = (
      await call(app.url, 'POST', '/schedules', {
        trigger: {
          type: 'calendar',
          timezone: 'Europe/Berlin',
          hour: { kind: 'values', values: [2] },
          minute: { kind: 'values', values: [30] },
        },
        target: promptTarget(sid, 'berlin'),
        planning_horizon_occurrences: 4,
      })
    ).body;
    const dues = (await call(app.url, 'GET', `/schedules/${berlin.schedule_id}/occurrences`)).body.occurrences.map(
      (o: { due_at_utc: string }) => o.due_at_utc,
    );
    // 02:30 does not exist on 29 March 2026 in Berlin: it runs at the first valid time after the gap (03:00 CEST).
    assert.deepEqual(dues, [
      '2026-03-28T01:30:00.000Z',
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
    const monthEnd = (
      await call(app.url, 'POST', '/schedules', {
        trigger: {
          type: 'calendar',
          timezone: 'UTC',
          day_of_month: { kind: 'values', values: [31] },
          hour: { kind: 'values', values: [12] },
          minute: { kind: 'values', values: [0] },
        },
        target: promptTarget(sid, 'month end'),
        planning_horizon_occurrences: 3,
        planning_horizon_days: 365,
      })
    ).body;
    assert.deepEqual(
      (await call(app.url, 'GET', `/schedules/${monthEnd.schedule_id}/occurrences`)).body.occurrences.map(
        (o: { due_at_utc: string }) => o.due_at_utc,
      ),
      ['2026-03-31T12:00:00.000Z', '2026-05-31T12:00:00.000Z', '2026-07-31T12:00:00.000Z'],
    );
    const leap = (
      await call(app.url, 'POST', '/schedules', {
        trigger: {
          type: 'calendar',
          timezone: 'UTC',
          month: { kind: 'values', values: [2] },
          day_of_month: { kind: 'values', values: [29] },
          hour: { kind: 'values', values: [0] },
          minute: { kind: 'values', values: [0] },
        },
        target: promptTarget(sid, 'leap'),
        planning_horizon_days: 3660,
      })
    ).body;
    assert.deepEqual(
      (await call(app.url, 'GET', `/schedules/${leap.schedule_id}/occurrences`)).body.occurrences.map(
        (o: { due_at_utc: string }) => o.due_at_utc,
      ),
      ['2028-02-29T00:00:00.000Z', '2032-02-29T00:00:00.000Z', '2036-02-29T00:00:00.000Z'],
    );
    // Fire through the DST change: each Berlin occurrence dispatches exactly at its due instant.
    await advanceTo(Date.parse('2026-03-31T12:00:00Z'));
    const fired = (await call(app.url, 'GET', `/schedules/${berlin.schedule_id}/occurrences?phase=completed`)).body.occurrences;
    assert.deepEqual(
      fired.map((o: { dispatched_at_utc: string }) => o.dispatched_at_utc),
      dues,
    );
    const rows = await userRows(app, sid);
    assert.equal(rows.filter((r) => r.content === 'berlin').length, 4);
    assert.equal(rows.filter((r) => r.content === 'month end').length, 1);
  });
});
