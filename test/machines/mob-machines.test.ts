// test/machines/mob-machines.test.ts: the mob and mob member machines as tables over the pure
// transition(): every event handled in every state, the full transition table, and restore rules.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import { MEMBER_EVENT_TYPES, memberMachine, restoreMemberValue, type MemberEvent } from '../../machines/mob-member-machine.ts';
import { MOB_EVENT_TYPES, mobMachine, type MobEvent } from '../../machines/mob-machine.ts';

type MemberSnap = ReturnType<typeof initialTransition<typeof memberMachine>>[0];
type MobSnap = ReturnType<typeof initialTransition<typeof mobMachine>>[0];

const m0 = (): MemberSnap => initialTransition(memberMachine, { agentIdentity: 'a' })[0];
const ms = (s: MemberSnap, type: MemberEvent['type']): MemberSnap => transition(memberMachine, s, { type } as MemberEvent)[0];
const b0 = (): MobSnap => initialTransition(mobMachine, { mobId: 'm' })[0];
const bs = (s: MobSnap, type: MobEvent['type']): MobSnap => transition(mobMachine, s, { type } as MobEvent)[0];

function members(): Record<string, MemberSnap> {
  const spawning = m0();
  const active = ms(spawning, 'kickoff.done');
  return {
    spawning,
    active,
    running: ms(active, 'turn.start'),
    cancelled: ms(active, 'member.cancel'),
    failed: ms(spawning, 'kickoff.failed'),
    retired: ms(active, 'member.retire'),
  };
}

function mobs(): Record<string, MobSnap> {
  const starting = b0();
  const running = bs(starting, 'mob.started');
  const destroying = bs(running, 'destroy.requested');
  return { starting, running, destroying, destroyed: bs(destroying, 'destroy.done') };
}

describe('mob member machine', () => {
  it('handles every event in every non-final state', () => {
    for (const [name, snap] of Object.entries(members())) {
      assert.equal(snap.value, name);
      if (name === 'retired') continue;
      for (const type of MEMBER_EVENT_TYPES) assert.equal(snap.can({ type } as MemberEvent), true, `${name} does not handle ${type}`);
    }
  });

  const table: Array<[string, MemberEvent['type'], string]> = [
    ['spawning', 'kickoff.done', 'active'],
    ['spawning', 'kickoff.failed', 'failed'],
    ['spawning', 'member.cancel', 'cancelled'],
    ['spawning', 'turn.start', 'spawning'],
    ['spawning', 'member.respawn', 'spawning'],
    ['spawning', 'member.retire', 'retired'],
    ['active', 'turn.start', 'running'],
    ['active', 'member.cancel', 'cancelled'],
    ['active', 'member.respawn', 'spawning'],
    ['active', 'member.retire', 'retired'],
    ['active', 'kickoff.done', 'active'],
    ['active', 'turn.done', 'active'],
    ['running', 'turn.done', 'active'],
    ['running', 'turn.failed', 'active'],
    ['running', 'member.cancel', 'cancelled'],
    ['running', 'member.retire', 'retired'],
    ['running', 'turn.start', 'running'],
    ['running', 'member.respawn', 'running'],
    ['cancelled', 'member.respawn', 'spawning'],
    ['cancelled', 'turn.start', 'cancelled'],
    ['cancelled', 'member.retire', 'retired'],
    ['cancelled', 'kickoff.failed', 'cancelled'],
    ['failed', 'member.respawn', 'spawning'],
    ['failed', 'turn.start', 'failed'],
    ['failed', 'member.retire', 'retired'],
  ];
  for (const [from, type, to] of table) {
    it(`${from} --${type}--> ${to}`, () => {
      const next = ms(members()[from], type);
      assert.equal(next.value, to);
      if (from !== to) assert.equal(next.context.lastDecision?.verdict, 'accepted');
    });
  }

  it('respawn bumps the generation; turns and failures are counted', () => {
    const s = ms(ms(ms(members().running, 'turn.done'), 'member.cancel'), 'member.respawn');
    assert.equal(s.context.generation, 2);
    assert.equal(s.context.turns, 1);
    assert.equal(ms(ms(members().running, 'turn.failed'), 'turn.start').context.failures, 1);
  });

  it('restores in-flight states to rest states', () => {
    assert.equal(restoreMemberValue('running', true), 'active');
    assert.equal(restoreMemberValue('spawning', true), 'active');
    assert.equal(restoreMemberValue('spawning', false), 'failed');
    assert.equal(restoreMemberValue('cancelled', true), 'cancelled');
  });
});

describe('mob machine', () => {
  it('handles every event in every non-final state', () => {
    for (const [name, snap] of Object.entries(mobs())) {
      assert.equal(snap.value, name);
      if (name === 'destroyed') continue;
      for (const type of MOB_EVENT_TYPES) assert.equal(snap.can({ type } as MobEvent), true, `${name} does not handle ${type}`);
    }
  });

  it('counts members and runs, and ignores new work while destroying', () => {
    let s = bs(bs(bs(mobs().running, 'member.joined'), 'member.joined'), 'flow.started');
    assert.equal(s.context.members, 2);
    assert.equal(s.context.activeRuns, 1);
    s = bs(s, 'destroy.requested');
    assert.equal(s.value, 'destroying');
    s = bs(s, 'flow.started');
    assert.equal(s.context.activeRuns, 1);
    assert.equal(s.context.lastDecision?.verdict, 'ignored');
    s = bs(bs(s, 'flow.ended'), 'member.left');
    assert.equal(s.context.activeRuns, 0);
    assert.equal(s.context.members, 1);
    assert.equal(bs(s, 'destroy.done').value, 'destroyed');
    assert.equal(bs(mobs().starting, 'flow.started').context.lastDecision?.verdict, 'ignored');
  });
});
