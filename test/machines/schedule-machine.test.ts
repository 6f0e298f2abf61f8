import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import { restoreScheduleValue, SCHEDULE_EVENT_TYPES, scheduleMachine, type ScheduleEvent } from '../../machines/schedule-machine.ts';
import {
  canMove,
  decideLateness,
  decideMissingTarget,
  decideOverlap,
  isTerminalPhase,
  OCCURRENCE_MOVES,
} from '../../machines/schedule-policy.ts';
import { OCCURRENCE_PHASES } from '../../contracts/schedule.ts';

type Snap = ReturnType<typeof initialTransition<typeof scheduleMachine>>[0];

const boot = (phase: 'active' | 'paused' | 'deleted' = 'active', nextDueMs: number | null = 1000): Snap =>
  initialTransition(scheduleMachine, { scheduleId: 's1', revision: 1, nextDueMs, phase })[0];
const send = (s: Snap, e: ScheduleEvent): Snap => transition(scheduleMachine, s, e)[0];

function sample(type: ScheduleEvent['type']): ScheduleEvent {
  switch (type) {
    case 'timer.due':
      return { type, nowMs: 5000 };
    case 'fire.settled':
      return { type, nextDueMs: 9000 };
    case 'schedule.pause':
      return { type, revision: 2 };
    case 'schedule.resume':
      return { type, revision: 3, nextDueMs: 7000 };
    case 'schedule.update':
      return { type, revision: 4, nextDueMs: 8000 };
    case 'schedule.replanned':
      return { type, nextDueMs: 6000 };
    case 'schedule.delete':
      return { type, revision: 5 };
  }
}

function reach(): Record<'active' | 'firing' | 'paused' | 'deleted', Snap> {
  const active = boot();
  return { active, firing: send(active, { type: 'timer.due', nowMs: 1000 }), paused: boot('paused'), deleted: boot('deleted') };
}

// state × event → [next state, verdict]
const TABLE: Record<string, Record<ScheduleEvent['type'], [string, 'accepted' | 'rejected']>> = {
  active: {
    'timer.due': ['firing', 'accepted'],
    'fire.settled': ['active', 'rejected'],
    'schedule.pause': ['paused', 'accepted'],
    'schedule.resume': ['active', 'rejected'],
    'schedule.update': ['active', 'accepted'],
    'schedule.replanned': ['active', 'accepted'],
    'schedule.delete': ['deleted', 'accepted'],
  },
  firing: {
    'timer.due': ['firing', 'rejected'],
    'fire.settled': ['active', 'accepted'],
    'schedule.pause': ['paused', 'accepted'],
    'schedule.resume': ['firing', 'rejected'],
    'schedule.update': ['firing', 'accepted'],
    'schedule.replanned': ['firing', 'accepted'],
    'schedule.delete': ['deleted', 'accepted'],
  },
  paused: {
    'timer.due': ['paused', 'rejected'],
    'fire.settled': ['paused', 'accepted'],
    'schedule.pause': ['paused', 'rejected'],
    'schedule.resume': ['active', 'accepted'],
    'schedule.update': ['paused', 'accepted'],
    'schedule.replanned': ['paused', 'accepted'],
    'schedule.delete': ['deleted', 'accepted'],
  },
  deleted: Object.fromEntries(SCHEDULE_EVENT_TYPES.map((t) => [t, ['deleted', 'rejected']])) as Record<
    ScheduleEvent['type'],
    [string, 'rejected']
  >,
};

describe('schedule machine', () => {
  it('boots into the stored phase', () => {
    assert.equal(boot('active').value, 'active');
    assert.equal(boot('paused').value, 'paused');
    assert.equal(boot('deleted').value, 'deleted');
  });

  it('handles every event in every state explicitly, as the table says', () => {
    for (const [name, snap] of Object.entries(reach())) {
      for (const type of SCHEDULE_EVENT_TYPES) {
        const event = sample(type);
        assert.equal(snap.can(event), true, `state ${name} does not handle ${type}`);
        const next = send(snap, event);
        const [value, verdict] = TABLE[name][type];
        assert.equal(next.value, value, `${name} × ${type}`);
        assert.deepEqual(next.context.lastDecision, { event: type, verdict }, `${name} × ${type} verdict`);
      }
    }
  });

  it('fires only when the due time has come, and keeps the due time in context (no after timers)', () => {
    const early = send(boot('active', 5000), { type: 'timer.due', nowMs: 4999 });
    assert.equal(early.value, 'active');
    assert.equal(early.context.lastDecision?.verdict, 'rejected');
    const nothing = send(boot('active', null), { type: 'timer.due', nowMs: 10 ** 13 });
    assert.equal(nothing.value, 'active');
    const firing = send(boot('active', 5000), { type: 'timer.due', nowMs: 5000 });
    assert.equal(firing.value, 'firing');
    assert.equal(firing.context.firingSinceMs, 5000);
    assert.equal(firing.context.fireCount, 1);
    const settled = send(firing, { type: 'fire.settled', nextDueMs: 65000 });
    assert.equal(settled.value, 'active');
    assert.equal(settled.context.nextDueMs, 65000);
    assert.equal(settled.context.firingSinceMs, null);
    assert.equal(JSON.stringify(scheduleMachine.toJSON()).includes('"after"'), false);
  });

  it('records revisions and clears the plan on delete', () => {
    const paused = send(boot(), { type: 'schedule.pause', revision: 2 });
    assert.equal(paused.context.revision, 2);
    const resumed = send(paused, { type: 'schedule.resume', revision: 3, nextDueMs: 42 });
    assert.equal(resumed.context.nextDueMs, 42);
    const deleted = send(resumed, { type: 'schedule.delete', revision: 4 });
    assert.equal(deleted.context.nextDueMs, null);
    assert.equal(deleted.context.revision, 4);
  });

  it('restores firing as active and keeps the safe states', () => {
    assert.equal(restoreScheduleValue('firing'), 'active');
    assert.equal(restoreScheduleValue('active'), 'active');
    assert.equal(restoreScheduleValue('paused'), 'paused');
    assert.equal(restoreScheduleValue('deleted'), 'deleted');
    assert.equal(restoreScheduleValue('garbage'), 'active');
    const restored = scheduleMachine.resolveState({ value: 'active', context: reach().firing.context });
    assert.equal(send(restored, { type: 'timer.due', nowMs: 2000 }).value, 'firing');
  });
});

describe('schedule policies', () => {
  it('lateness: on time within the grace, catch-up within the window, else misfired', () => {
    const rows: Array<[number, Parameters<typeof decideLateness>[2], string]> = [
      [0, { type: 'skip' }, 'on_time'],
      [60_000, { type: 'skip' }, 'on_time'],
      [60_001, { type: 'skip' }, 'misfired'],
      [60_001, { type: 'catch_up_within', window_seconds: 3600 }, 'catch_up'],
      [3_600_000, { type: 'catch_up_within', window_seconds: 3600 }, 'catch_up'],
      [3_600_001, { type: 'catch_up_within', window_seconds: 3600 }, 'misfired'],
      [-5, { type: 'skip' }, 'on_time'],
    ];
    for (const [late, policy, verdict] of rows)
      assert.equal(decideLateness(1_000_000, 1_000_000 + late, policy).verdict, verdict, `${late} ${policy.type}`);
  });

  it('overlap and missing target', () => {
    assert.equal(decideOverlap('skip_if_running', false), 'dispatch');
    assert.equal(decideOverlap('allow_concurrent', false), 'dispatch');
    assert.equal(decideOverlap('skip_if_running', true), 'skip');
    assert.equal(decideOverlap('allow_concurrent', true), 'wait');
    assert.equal(decideMissingTarget('mark_misfired'), 'misfired');
    assert.equal(decideMissingTarget('skip'), 'skipped');
  });

  it('occurrence phases: every phase has a row; terminal phases move nowhere; nothing returns to pending', () => {
    for (const phase of OCCURRENCE_PHASES) {
      assert.ok(OCCURRENCE_MOVES[phase], phase);
      assert.equal(canMove(phase, 'pending'), false);
    }
    assert.deepEqual(OCCURRENCE_PHASES.filter(isTerminalPhase), ['completed', 'skipped', 'misfired', 'superseded', 'delivery_failed']);
    assert.ok(canMove('pending', 'claimed'));
    assert.ok(canMove('dispatching', 'awaiting_completion'));
    assert.ok(canMove('awaiting_completion', 'completed'));
  });
});
