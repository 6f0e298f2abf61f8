// test/machines/keep-alive-machine.test.ts: the keep-alive agent machine as tables over the pure
// transition(): every event handled in every state, and the paths of an agent waiting on its inbox.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import { KEEP_ALIVE_EVENT_TYPES, keepAliveMachine, type KeepAliveEvent, type KeepAliveOutcome } from '../../machines/keep-alive-machine.ts';

type Snap = ReturnType<typeof initialTransition<typeof keepAliveMachine>>[0];

const start = (enabled = true): Snap => initialTransition(keepAliveMachine, { sessionId: 's1', enabled })[0];
const send = (s: Snap, e: KeepAliveEvent): Snap => transition(keepAliveMachine, s, e)[0];
const settled = (outcome: KeepAliveOutcome): KeepAliveEvent => ({ type: 'turn.settled', outcome });

function sample(type: KeepAliveEvent['type']): KeepAliveEvent {
  return type === 'turn.settled' ? settled('succeeded') : ({ type } as KeepAliveEvent);
}

function reach(): Record<string, Snap> {
  const waiting = start();
  const passive = start(false);
  const waking = send(waiting, { type: 'inbox.woken' });
  const running = send(waking, { type: 'turn.started' });
  const blocked = send(waking, settled('busy'));
  const stalled = send(running, settled('failed'));
  return { passive, waiting, waking, running, blocked, stalled };
}

describe('keep-alive machine', () => {
  it('handles every event in every state explicitly', () => {
    for (const [name, snap] of Object.entries(reach())) {
      assert.equal(snap.value, name);
      for (const type of KEEP_ALIVE_EVENT_TYPES) assert.equal(snap.can(sample(type)), true, `${name} does not handle ${type}`);
    }
  });

  const table: Array<[string, KeepAliveEvent, string]> = [
    ['passive', { type: 'keepalive.enabled' }, 'waiting'],
    ['passive', { type: 'inbox.woken' }, 'passive'],
    ['waiting', { type: 'inbox.woken' }, 'waking'],
    ['waiting', { type: 'keepalive.disabled' }, 'passive'],
    ['waking', { type: 'turn.started' }, 'running'],
    ['waking', settled('empty'), 'waiting'],
    ['waking', settled('busy'), 'blocked'],
    ['running', settled('succeeded'), 'waking'],
    ['running', settled('failed'), 'stalled'],
    ['running', settled('busy'), 'blocked'],
    ['running', { type: 'inbox.woken' }, 'running'],
    ['blocked', { type: 'session.idle' }, 'waking'],
    ['blocked', { type: 'inbox.woken' }, 'blocked'],
    ['stalled', { type: 'inbox.woken' }, 'waking'],
    ['stalled', { type: 'session.idle' }, 'stalled'],
  ];
  for (const [from, event, to] of table) {
    it(`${from} --${event.type}${event.type === 'turn.settled' ? `(${event.outcome})` : ''}--> ${to}`, () => {
      assert.equal(send(reach()[from], event).value, to);
    });
  }

  it('a turn running when keep_alive is turned off finishes, then the agent is passive', () => {
    const off = send(reach().running, { type: 'keepalive.disabled' });
    assert.equal(off.value, 'running');
    assert.equal(send(off, settled('succeeded')).value, 'passive');
  });

  it('counts turns and failures', () => {
    const s = send(send(reach().running, settled('failed')), { type: 'inbox.woken' });
    assert.equal(s.context.turns, 1);
    assert.equal(s.context.failures, 1);
  });
});
