import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import { SESSION_EVENT_TYPES, sessionMachine, type SessionEvent } from '../../machines/session-machine.ts';

type Snap = ReturnType<typeof initialTransition<typeof sessionMachine>>[0];

function start(): Snap {
  return initialTransition(sessionMachine, { sessionId: 's1' })[0];
}
function send(s: Snap, e: SessionEvent): Snap {
  return transition(sessionMachine, s, e)[0];
}
function sample(type: SessionEvent['type'], generation: number): SessionEvent {
  switch (type) {
    case 'turn.requested': return { type, requestId: 'r-x' };
    case 'turn.phase': return { type, generation, phase: 'executing_tools' };
    case 'turn.settled': return { type, generation, outcome: 'succeeded' };
    case 'recovery.detected': return { type, hold: null };
    default: return { type } as SessionEvent;
  }
}
/** Reaches each state value through real events. */
function reach(): Record<string, Snap> {
  const idle = start();
  const running = send(idle, { type: 'turn.requested', requestId: 'r1' });
  const tools = send(running, { type: 'turn.phase', generation: 1, phase: 'executing_tools' });
  const committing = send(tools, { type: 'turn.phase', generation: 1, phase: 'committing' });
  const cancelling = send(running, { type: 'interrupt.requested' });
  const held = send(running, { type: 'recovery.detected', hold: 'tail_held_for_recovery' });
  const archived = send(idle, { type: 'archive.requested' });
  return { idle, running, tools, committing, cancelling, held, archived };
}

describe('session machine', () => {
  it('handles every event in every state explicitly (no silently dropped event)', () => {
    for (const [name, snap] of Object.entries(reach())) {
      for (const type of SESSION_EVENT_TYPES) {
        const can = snap.can(sample(type, snap.context.generation));
        assert.equal(can, true, `state ${name} does not handle ${type}`);
      }
    }
  });

  it('accepts a turn when idle and records the decision', () => {
    const s = send(start(), { type: 'turn.requested', requestId: 'r1' });
    assert.deepEqual(s.value, { running: 'calling_model' });
    assert.deepEqual(s.context.lastDecision, { requestId: 'r1', verdict: 'accepted' });
    assert.equal(s.context.generation, 1);
  });

  it('rejects a second turn while busy and stays in the same sub-state', () => {
    const { tools } = reach();
    const s = send(tools, { type: 'turn.requested', requestId: 'r2' });
    assert.deepEqual(s.value, { running: 'executing_tools' });
    assert.deepEqual(s.context.lastDecision, { requestId: 'r2', verdict: 'busy' });
    assert.equal(s.context.currentRequestId, 'r1');
  });

  it('walks the running sub-steps and returns to idle on the current generation', () => {
    const { committing } = reach();
    assert.deepEqual(committing.value, { running: 'committing' });
    const done = send(committing, { type: 'turn.settled', generation: 1, outcome: 'succeeded' });
    assert.equal(done.value, 'idle');
    assert.equal(done.context.currentRequestId, null);
  });

  it('drops late results of an older generation', () => {
    const { running } = reach();
    const s = send(running, { type: 'turn.settled', generation: 0, outcome: 'failed' });
    assert.deepEqual(s.value, { running: 'calling_model' });
  });

  it('interrupt moves a running turn to cancelling, still busy until it settles', () => {
    const { cancelling } = reach();
    assert.deepEqual(cancelling.value, { running: 'cancelling' });
    const busy = send(cancelling, { type: 'turn.requested', requestId: 'r3' });
    assert.equal(busy.context.lastDecision?.verdict, 'busy');
    const settled = send(cancelling, { type: 'turn.settled', generation: 1, outcome: 'cancelled' });
    assert.equal(settled.value, 'idle');
  });

  it('interrupt on idle is a no-op', () => {
    const s = send(start(), { type: 'interrupt.requested' });
    assert.equal(s.value, 'idle');
  });

  it('restores a snapshot persisted mid-turn as idle and resumable, remembering the lost request', () => {
    const { running } = reach();
    const s = send(running, { type: 'recovery.detected', hold: null });
    assert.equal(s.value, 'idle');
    assert.equal(s.context.recoveredRequestId, 'r1');
  });

  it('holds for recovery, rejects turns while held, and clears', () => {
    const { held } = reach();
    assert.equal(held.value, 'held');
    assert.equal(held.context.hold, 'tail_held_for_recovery');
    assert.equal(send(held, { type: 'turn.requested', requestId: 'r4' }).context.lastDecision?.verdict, 'held');
    assert.equal(send(held, { type: 'hold.cleared' }).value, 'idle');
  });

  it('rejects turns on an archived session', () => {
    const { archived } = reach();
    const s = send(archived, { type: 'turn.requested', requestId: 'r5' });
    assert.equal(s.value, 'archived');
    assert.equal(s.context.lastDecision?.verdict, 'archived');
  });
});
