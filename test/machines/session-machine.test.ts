// test/machines/session-machine.test.ts: the session machine as a table over the pure transition():
// every event handled in every state, the turn started on entering `running` (stopped on leaving it) and
// ended by turn.done / turn.failed of its generation, decisions emitted (turn.rejected / turn.finished /
// turn.failed), never read from context.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import {
  restingSnapshot,
  SESSION_EVENT_TYPES,
  sessionMachine,
  type SessionEmitted,
  type SessionEvent,
  type TurnWork,
} from '../../machines/session-machine.ts';

type Snap = ReturnType<typeof initialTransition<typeof sessionMachine>>[0];

const work: TurnWork = {
  run: async () => ({ text: 'ok', turns: 1, toolCalls: 0, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } }),
};
const turn = (requestId: string, ticket = 1): SessionEvent => ({ type: 'turn.requested', requestId, ticket, work });
const DONE = {
  type: 'turn.done',
  generation: 1,
  output: { text: 'ok', turns: 1, toolCalls: 0, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
} satisfies SessionEvent;
const ERROR = { type: 'turn.failed', generation: 1, error: new Error('model failed') } satisfies SessionEvent;

function start(): Snap {
  return initialTransition(sessionMachine, { sessionId: 's1' })[0];
}
/** The next snapshot and the events it emitted. */
function step(s: Snap, e: SessionEvent): [Snap, SessionEmitted[]] {
  const [next, actions] = transition(sessionMachine, s, e);
  const emitted = actions
    .filter((a) => (a.type as string) === 'xstate.emit')
    .map((a) => (a as unknown as { params: { event: SessionEmitted } }).params.event);
  return [next, emitted];
}
function send(s: Snap, e: SessionEvent): Snap {
  return step(s, e)[0];
}
function sample(type: SessionEvent['type'], generation: number): SessionEvent {
  switch (type) {
    case 'turn.requested':
      return turn('r-x', 9);
    case 'turn.phase':
      return { type, generation, phase: 'executing_tools' };
    case 'recovery.detected':
      return { type, hold: null };
    case 'queue.synced':
      return { type, count: 1 };
    case 'turn.done':
      return { ...DONE, generation };
    case 'turn.failed':
      return { ...ERROR, generation };
    default:
      return { type } as SessionEvent;
  }
}
/** Reaches each state value through real events. */
function reach(): Record<string, Snap> {
  const idle = start();
  const running = send(idle, turn('r1'));
  const tools = send(running, { type: 'turn.phase', generation: 1, phase: 'executing_tools' });
  const committing = send(tools, { type: 'turn.phase', generation: 1, phase: 'committing' });
  const cancelling = send(running, { type: 'interrupt.requested' });
  const held = send(running, { type: 'recovery.detected', hold: 'tail_held_for_recovery' });
  const archived = send(idle, { type: 'archive.requested' });
  const draining = send(idle, { type: 'followup.enqueued' });
  return { idle, running, tools, committing, cancelling, held, archived, draining };
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

  it('accepts a turn when idle by starting it', () => {
    const [s, actions] = transition(sessionMachine, start(), turn('r1'));
    assert.deepEqual(s.value, { running: 'calling_model' });
    assert.equal(s.context.generation, 1);
    assert.equal(s.context.currentRequestId, 'r1');
    assert.deepEqual(
      actions.map((a) => a.type),
      ['startTurn'],
    );
    assert.deepEqual(s.children, {}, 'no child actor per turn');
  });

  it('stops a turn still in flight when recovery takes the session out of running, not when it ends', () => {
    const { running } = reach();
    const [, recovered] = transition(sessionMachine, running, { type: 'recovery.detected', hold: null });
    assert.deepEqual(
      recovered.map((a) => a.type),
      ['stopTurn'],
    );
    const [, done] = transition(sessionMachine, running, DONE);
    assert.ok(
      done.some((a) => a.type === 'stopTurn'),
      'leaving running always runs stopTurn (a no-op once the work ended)',
    );
  });

  it('ignores the end of an older turn, in running and at rest', () => {
    const { running, tools } = reach();
    const next = send(send(send(running, DONE), turn('r2', 2)), { type: 'turn.phase', generation: 2, phase: 'executing_tools' });
    assert.equal(next.context.generation, 2);
    const [still, emitted] = step(next, { ...ERROR, generation: 1 });
    assert.deepEqual(still.value, { running: 'executing_tools' });
    assert.deepEqual(emitted, []);
    const idle = send(tools, DONE);
    assert.equal(send(idle, DONE).value, 'idle');
    assert.deepEqual(step(idle, ERROR)[1], []);
  });

  it('rejects a second turn while busy with an emitted verdict, staying in the same sub-state', () => {
    const { tools } = reach();
    const [s, emitted] = step(tools, turn('r2', 2));
    assert.deepEqual(s.value, { running: 'executing_tools' });
    assert.deepEqual(emitted, [{ type: 'turn.rejected', ticket: 2, requestId: 'r2', verdict: 'busy' }]);
    assert.equal(s.context.currentRequestId, 'r1');
  });

  it('walks the running sub-steps and returns to idle when the turn is done, emitting its outcome', () => {
    const { committing } = reach();
    assert.deepEqual(committing.value, { running: 'committing' });
    const [done, emitted] = step(committing, DONE);
    assert.equal(done.value, 'idle');
    assert.equal(done.context.currentRequestId, null);
    assert.deepEqual(emitted, [{ type: 'turn.finished', requestId: 'r1', generation: 1, output: DONE.output }]);
  });

  it('returns to idle when the turn fails, emitting the error', () => {
    const { tools } = reach();
    const [s, emitted] = step(tools, ERROR);
    assert.equal(s.value, 'idle');
    assert.equal(emitted[0].type, 'turn.failed');
  });

  it('restingSnapshot() is exactly the persisted snapshot the machine reaches when its turn ends', () => {
    for (const from of [reach().committing, reach().cancelling, reach().tools]) {
      for (const end of [DONE, ERROR]) {
        // As stored: JSON (the persisted form also carries undefined `output`/`error`, which JSON drops).
        const json = (v: unknown) => JSON.parse(JSON.stringify(v));
        assert.deepEqual(json(restingSnapshot(from.context)), json(sessionMachine.getPersistedSnapshot(send(from, end))));
      }
    }
  });

  it('drops phase reports of an older generation', () => {
    const { running } = reach();
    const s = send(running, { type: 'turn.phase', generation: 0, phase: 'committing' });
    assert.deepEqual(s.value, { running: 'calling_model' });
  });

  it('interrupt moves a running turn to cancelling, still busy until the turn ends', () => {
    const { cancelling } = reach();
    assert.deepEqual(cancelling.value, { running: 'cancelling' });
    assert.equal(step(cancelling, turn('r3', 3))[1][0].type, 'turn.rejected');
    assert.equal(send(cancelling, ERROR).value, 'idle');
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
    assert.equal((step(held, turn('r4', 4))[1][0] as { verdict: string }).verdict, 'held');
    assert.equal(send(held, { type: 'hold.cleared' }).value, 'idle');
  });

  it('rejects turns on an archived session', () => {
    const { archived } = reach();
    const [s, emitted] = step(archived, turn('r5', 5));
    assert.equal(s.value, 'archived');
    assert.deepEqual(emitted, [{ type: 'turn.rejected', ticket: 5, requestId: 'r5', verdict: 'archived' }]);
  });

  it('busy policies: follow-ups are counted, admitted only from draining as queued turns, in order', () => {
    const { tools } = reach();
    let s = send(send(tools, { type: 'followup.enqueued' }), { type: 'followup.enqueued' });
    assert.equal(s.context.queued, 2);
    s = send(s, DONE);
    assert.equal(s.value, 'draining');
    // A fresh request cannot jump the queue; the next follow-up is admitted.
    assert.equal((step(s, turn('fresh', 7))[1][0] as { verdict: string }).verdict, 'busy');
    s = send(s, { type: 'turn.requested', requestId: 'q1', ticket: 8, work, queued: true });
    assert.deepEqual(s.value, { running: 'calling_model' });
    assert.equal(s.context.queued, 1);
    s = send(send(s, { ...ERROR, generation: 2 }), { type: 'followup.discarded' });
    assert.equal(s.value, 'idle');
    assert.equal(s.context.queued, 0);
  });

  it('busy policies: steering is counted while running, cleared when injected, and becomes a follow-up when the turn ends first', () => {
    const { running } = reach();
    const steered = send(running, { type: 'steer.requested' });
    assert.equal(steered.context.steering, 1);
    assert.equal(send(steered, { type: 'steer.injected' }).context.steering, 0);
    const ended = send(steered, DONE);
    assert.equal(ended.value, 'draining');
    assert.equal(ended.context.queued, 1);
    assert.equal(ended.context.steering, 0);
  });

  it('busy policies: archive drops the queue; a restored draining snapshot comes back idle until the durable queue is synced', () => {
    const { draining } = reach();
    const archived = send(draining, { type: 'archive.requested' });
    assert.equal(archived.value, 'archived');
    assert.equal(archived.context.queued, 0);
    const recovered = send(draining, { type: 'recovery.detected', hold: null });
    assert.equal(recovered.value, 'idle');
    assert.equal(recovered.context.queued, 0);
    const synced = send(recovered, { type: 'queue.synced', count: 3 });
    assert.equal(synced.value, 'draining');
    assert.equal(synced.context.queued, 3);
    assert.equal(send(synced, { type: 'queue.synced', count: 0 }).value, 'idle');
    // A stored snapshot never claims follow-ups (the durable queue is the truth after a restart).
    assert.equal(restingSnapshot(synced.context).context.queued, undefined);
  });
});
