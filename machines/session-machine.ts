// machines/session-machine.ts: the session lifecycle. Pure: no IO, no clock, no node:* imports.
// States: idle, running (calling_model | executing_tools | committing | cancelling), held, archived.
// Safe-to-restore states: idle, held, archived; actors persist snapshots only in these (a turn in flight
// is marked by its pending input instead). A snapshot found in `running` is restored through
// `recovery.detected`, which never re-runs the in-flight model call (dependencies.md hazard 3): the
// session comes back idle (resumable) or held for recovery.
import { assign, setup } from 'xstate';

export type HoldClass = 'tail_held_for_recovery' | 'recovery_refused' | 'evidence_quarantined';
export type TurnPhase = 'calling_model' | 'executing_tools' | 'committing';
export type Verdict = 'accepted' | 'busy' | 'archived' | 'held';

export interface SessionContext {
  sessionId: string;
  /** Bumped on every accepted turn and every interrupt; late results of older generations are dropped. */
  generation: number;
  turnCount: number;
  currentRequestId: string | null;
  /** The machine's answer to the last turn.requested, read by the actor after send(). */
  lastDecision: { requestId: string; verdict: Verdict } | null;
  hold: HoldClass | null;
  /** Request id of a turn that was in flight when the process died, if any. */
  recoveredRequestId: string | null;
}

export type SessionEvent =
  | { type: 'turn.requested'; requestId: string }
  | { type: 'turn.phase'; generation: number; phase: TurnPhase }
  | { type: 'turn.settled'; generation: number; outcome: 'succeeded' | 'failed' | 'cancelled' }
  | { type: 'interrupt.requested' }
  | { type: 'archive.requested' }
  | { type: 'recovery.detected'; hold: HoldClass | null }
  | { type: 'hold.cleared' };

export interface SessionInput {
  sessionId: string;
}

const isCurrent = ({ context, event }: { context: SessionContext; event: SessionEvent }) =>
  'generation' in event && event.generation === context.generation;

export const sessionMachine = setup({
  types: { context: {} as SessionContext, events: {} as SessionEvent, input: {} as SessionInput },
  guards: {
    isCurrentGeneration: isCurrent,
    isPhaseCallingModel: ({ context, event }) => isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'calling_model',
    isPhaseExecutingTools: ({ context, event }) => isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'executing_tools',
    isPhaseCommitting: ({ context, event }) => isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'committing',
    hasHold: ({ event }) => event.type === 'recovery.detected' && event.hold !== null,
  },
  actions: {
    acceptTurn: assign(({ context, event }) => {
      const requestId = event.type === 'turn.requested' ? event.requestId : '';
      return {
        generation: context.generation + 1,
        turnCount: context.turnCount + 1,
        currentRequestId: requestId,
        lastDecision: { requestId, verdict: 'accepted' as const },
      };
    }),
    rejectBusy: assign(({ event }) => ({
      lastDecision: { requestId: event.type === 'turn.requested' ? event.requestId : '', verdict: 'busy' as const },
    })),
    rejectArchived: assign(({ event }) => ({
      lastDecision: { requestId: event.type === 'turn.requested' ? event.requestId : '', verdict: 'archived' as const },
    })),
    rejectHeld: assign(({ event }) => ({
      lastDecision: { requestId: event.type === 'turn.requested' ? event.requestId : '', verdict: 'held' as const },
    })),
    bumpGeneration: assign(({ context }) => ({ generation: context.generation + 1 })),
    clearTurn: assign({ currentRequestId: null }),
    recordHold: assign(({ context, event }) => ({
      hold: event.type === 'recovery.detected' ? event.hold : null,
      recoveredRequestId: context.currentRequestId,
      currentRequestId: null,
    })),
    recordRecovery: assign(({ context }) => ({ recoveredRequestId: context.currentRequestId, currentRequestId: null })),
    clearHold: assign({ hold: null }),
    ignoreStale: () => {},
  },
}).createMachine({
  id: 'session',
  version: '1',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    generation: 0,
    turnCount: 0,
    currentRequestId: null,
    lastDecision: null,
    hold: null,
    recoveredRequestId: null,
  }),
  initial: 'idle',
  states: {
    idle: {
      on: {
        'turn.requested': { target: 'running', actions: 'acceptTurn' },
        'turn.phase': { actions: 'ignoreStale' },
        'turn.settled': { actions: 'ignoreStale' },
        // SPEC: interrupting an idle session is a no-op that still reports interrupted:true.
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { target: 'archived' },
        'recovery.detected': [{ guard: 'hasHold', target: 'held', actions: 'recordHold' }, { actions: 'recordRecovery' }],
        'hold.cleared': { actions: 'ignoreStale' },
      },
    },
    running: {
      initial: 'calling_model',
      on: {
        'turn.requested': { actions: 'rejectBusy' },
        'turn.settled': [{ guard: 'isCurrentGeneration', target: 'idle', actions: 'clearTurn' }, { actions: 'ignoreStale' }],
        'interrupt.requested': { target: '.cancelling' },
        // Archive waits for the turn to settle: a running turn is interrupted first by the actor.
        'archive.requested': { target: '.cancelling' },
        'recovery.detected': [{ guard: 'hasHold', target: 'held', actions: 'recordHold' }, { target: 'idle', actions: 'recordRecovery' }],
        'hold.cleared': { actions: 'ignoreStale' },
      },
      states: {
        calling_model: {
          on: {
            'turn.phase': [
              { guard: 'isPhaseExecutingTools', target: 'executing_tools' },
              { guard: 'isPhaseCommitting', target: 'committing' },
              { actions: 'ignoreStale' },
            ],
          },
        },
        executing_tools: {
          on: {
            'turn.phase': [
              { guard: 'isPhaseCallingModel', target: 'calling_model' },
              { guard: 'isPhaseCommitting', target: 'committing' },
              { actions: 'ignoreStale' },
            ],
          },
        },
        committing: {
          on: { 'turn.phase': { actions: 'ignoreStale' } },
        },
        // The turn was asked to stop; the runner settles soon (its signal is aborted). Still busy.
        cancelling: {
          on: {
            'turn.phase': { actions: 'ignoreStale' },
            'interrupt.requested': { actions: 'ignoreStale' },
            'archive.requested': { actions: 'ignoreStale' },
            'turn.settled': [{ guard: 'isCurrentGeneration', target: '#session.idle', actions: 'clearTurn' }, { actions: 'ignoreStale' }],
          },
        },
      },
    },
    held: {
      on: {
        'turn.requested': { actions: 'rejectHeld' },
        'turn.phase': { actions: 'ignoreStale' },
        'turn.settled': { actions: 'ignoreStale' },
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { target: 'archived' },
        'recovery.detected': [{ guard: 'hasHold', actions: 'recordHold' }, { target: 'idle', actions: 'clearHold' }],
        'hold.cleared': { target: 'idle', actions: 'clearHold' },
      },
    },
    archived: {
      on: {
        'turn.requested': { actions: 'rejectArchived' },
        'turn.phase': { actions: 'ignoreStale' },
        'turn.settled': { actions: 'ignoreStale' },
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { actions: 'ignoreStale' },
        'recovery.detected': { actions: 'ignoreStale' },
        'hold.cleared': { actions: 'ignoreStale' },
      },
    },
  },
});

/** Every event type, for the state × event table test. */
export const SESSION_EVENT_TYPES: SessionEvent['type'][] = [
  'turn.requested', 'turn.phase', 'turn.settled', 'interrupt.requested', 'archive.requested', 'recovery.detected', 'hold.cleared',
];
