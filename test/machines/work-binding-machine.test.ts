// The work binding machine: launch order, recovery rules, evidence and closure outcomes, and every
// event handled (accepted or rejected with a reason) in every phase.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import { BINDING_EVENT_TYPES, workBindingMachine, type BindingEvent } from '../../machines/work-binding-machine.ts';
import { BINDING_PHASES, isTerminalPhase } from '../../contracts/work-binding.ts';

type Snap = ReturnType<typeof initialTransition<typeof workBindingMachine>>[0];
const boot = (): Snap => initialTransition(workBindingMachine)[0];
const send = (s: Snap, e: BindingEvent): Snap => transition(workBindingMachine, s, e)[0];
const run = (...events: BindingEvent[]): Snap => events.reduce(send, boot());
const verdict = (s: Snap) => s.context.lastDecision?.verdict;

const LAUNCHED: BindingEvent[] = [{ type: 'delivery.begin' }, { type: 'run.pending' }, { type: 'realize.claim' }, { type: 'run.started' }];

function sample(type: BindingEvent['type']): BindingEvent {
  switch (type) {
    case 'run.start_failed':
    case 'evidence.refused':
    case 'closure.refused':
      return { type, reason: 'x' };
    case 'recover':
      return { type, runPresent: false };
    case 'abandon':
      return { type, expectedRevision: 1, runPresent: false };
    case 'run.ended':
      return { type, status: 'completed' };
    default:
      return { type } as BindingEvent;
  }
}

describe('work binding machine', () => {
  it('launches in order: launch → begun (+ pending run) → realizing → running, one revision per step', () => {
    const s = run(...LAUNCHED);
    assert.equal(s.value, 'running');
    assert.equal(s.context.revision, 5);
    assert.equal(s.context.pendingRun, true);
    // realization before the pending run is persisted is refused
    const early = run({ type: 'delivery.begin' }, { type: 'realize.claim' });
    assert.equal(early.value, 'begun');
    assert.equal(verdict(early), 'rejected');
  });

  it('completed run: projecting → closing → completed; refused closure; failed and canceled runs never close', () => {
    const done = run(...LAUNCHED, { type: 'run.ended', status: 'completed' }, { type: 'evidence.committed' });
    assert.equal(done.value, 'closing');
    assert.equal(send(done, { type: 'closure.done' }).value, 'completed');
    assert.equal(send(done, { type: 'closure.refused', reason: 'policy' }).value, 'closure_refused');
    assert.equal(run(...LAUNCHED, { type: 'run.ended', status: 'failed' }, { type: 'evidence.committed' }).value, 'failed');
    assert.equal(run(...LAUNCHED, { type: 'run.ended', status: 'canceled' }, { type: 'evidence.committed' }).value, 'canceled');
    // a completed run whose evidence did not commit is run_lost, never a closure
    assert.equal(
      run(...LAUNCHED, { type: 'run.ended', status: 'completed' }, { type: 'evidence.refused', reason: 'conflict' }).value,
      'run_lost',
    );
    assert.equal(run(...LAUNCHED, { type: 'run.ended', status: 'completed' }, { type: 'evidence.missing' }).value, 'run_lost');
    assert.equal(run(...LAUNCHED, { type: 'run.missing' }).value, 'run_lost');
  });

  it('recovery: begun without a run is uncertain and abandonable only by CAS with the run absent; realizing without a run is quarantined', () => {
    const begun = run({ type: 'delivery.begin' }, { type: 'run.pending' }, { type: 'recover', runPresent: false });
    assert.equal(begun.value, 'begun');
    assert.equal(begun.context.uncertain, true);
    assert.equal(verdict(send(begun, { type: 'realize.claim' })), 'rejected');
    const rev = begun.context.revision;
    assert.equal(verdict(send(begun, { type: 'abandon', expectedRevision: rev - 1, runPresent: false })), 'rejected');
    assert.equal(send(begun, { type: 'abandon', expectedRevision: rev, runPresent: true }).value, 'begun');
    assert.equal(send(begun, { type: 'abandon', expectedRevision: rev, runPresent: false }).value, 'abandoned');
    // a launch in progress (not uncertain) cannot be abandoned
    assert.equal(verdict(run({ type: 'delivery.begin' }, { type: 'abandon', expectedRevision: 2, runPresent: false })), 'rejected');
    assert.equal(run({ type: 'delivery.begin' }, { type: 'recover', runPresent: true }).value, 'running');
    const realizing = run({ type: 'delivery.begin' }, { type: 'run.pending' }, { type: 'realize.claim' });
    assert.equal(send(realizing, { type: 'recover', runPresent: false }).value, 'quarantined');
    assert.equal(send(realizing, { type: 'recover', runPresent: true }).value, 'running');
    assert.equal(run({ type: 'recover', runPresent: false }).value, 'begun');
  });

  it('handles every event in every phase: terminal phases reject everything', () => {
    const reach: Partial<Record<string, Snap>> = {
      launch: boot(),
      begun: run({ type: 'delivery.begin' }),
      realizing: run(...LAUNCHED.slice(0, 3)),
      running: run(...LAUNCHED),
      projecting: run(...LAUNCHED, { type: 'run.ended', status: 'completed' }),
      closing: run(...LAUNCHED, { type: 'run.ended', status: 'completed' }, { type: 'evidence.committed' }),
      completed: run(...LAUNCHED, { type: 'run.ended', status: 'completed' }, { type: 'evidence.committed' }, { type: 'closure.done' }),
    };
    for (const [phase, snap] of Object.entries(reach)) {
      for (const type of BINDING_EVENT_TYPES) {
        const next = send(snap!, sample(type));
        assert.ok(next.context.lastDecision, `${phase} × ${type} decided`);
        assert.equal(next.context.lastDecision!.event, type);
        if (next.context.lastDecision!.verdict === 'rejected') {
          assert.equal(next.value, phase, `${phase} × ${type} rejected stays put`);
          assert.equal(next.context.revision, snap!.context.revision);
        }
        if (isTerminalPhase(phase)) assert.equal(next.context.lastDecision!.verdict, 'rejected');
      }
    }
    for (const p of BINDING_PHASES) assert.ok(workBindingMachine.states[p], `machine has phase ${p}`);
  });
});
