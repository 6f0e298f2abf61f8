// machines/session-machine.ts: the session lifecycle. Pure: no IO, no clock, no node:* imports.
// States: idle, running (calling_model | executing_tools | committing | cancelling), draining, held, archived.
// Busy policies (actors/busy): `queued` counts the session's durable follow-up turns and `steering` the
// steering inputs waiting for the running turn's next model call. A turn that ends with follow-ups (or
// steering it never reached, which becomes follow-ups) goes to `draining`: between two queued turns only
// a follow-up (`turn.requested` with `queued`) is admitted, so a fresh request cannot jump the queue.
// The machine owns its turn: entering `running` runs the `startTurn` action (actors/ provides it through
// machine.provide, session-core.ts), which starts the turn's work with the new generation; leaving
// `running` runs `stopTurn`, which aborts a turn still in flight. The phases are the running sub-states,
// and the turn's end comes back as `turn.done` / `turn.failed` (of the current generation; a stale one
// is ignored), which brings the session back to idle. An entry action rather than an invoked child
// actor: the same lifetime (bounded by `running`) without a child actor per turn, which measured as
// XState's largest per-turn cost. Decisions go out as emitted events (actor.on): `turn.rejected` (busy,
// held, archived), `turn.finished` and `turn.failed`.
// Safe-to-restore states: idle, held, archived; actors persist snapshots only in these (a turn in flight
// is marked by its pending input instead). A snapshot found in `running` (older data) is restored
// through `recovery.detected`; restoring never runs entry actions, so the in-flight model call is never
// re-run (dependencies.md hazard 3): the session comes back idle (resumable) or held.
import { assign, emit, setup } from 'xstate';
import type { WireUsage } from '../contracts/transcript.ts';
import type { SchemaWarning } from '../contracts/turn-features.ts';

export type HoldClass = 'tail_held_for_recovery' | 'recovery_refused' | 'evidence_quarantined';
export type TurnPhase = 'calling_model' | 'executing_tools' | 'committing';
export type Verdict = 'busy' | 'archived' | 'held';

/** What a committed turn reports back to its caller. */
export interface TurnOutcome {
  text: string;
  turns: number;
  toolCalls: number;
  usage: WireUsage;
  /** Structured-output extraction (actors/turn-features): its value, or why it failed, and schema warnings. */
  structured_output?: unknown;
  extraction_error?: { last_output: string; attempts: number; reason: string };
  schema_warnings?: SchemaWarning[];
}

/**
 * The work of one requested turn, opaque to the machine: actors/ builds it (model/tool loop, then the
 * durable commit) and the `startTurn` action runs it with the turn's generation and an abort signal
 * that `stopTurn` aborts if the machine leaves `running` first.
 */
export interface TurnWork {
  run(generation: number, signal: AbortSignal): Promise<TurnOutcome>;
}

export interface SessionContext {
  sessionId: string;
  /** Bumped on every accepted turn; phase reports of older generations are dropped. */
  generation: number;
  turnCount: number;
  currentRequestId: string | null;
  hold: HoldClass | null;
  /** Request id of a turn that was in flight when the process died, if any. */
  recoveredRequestId: string | null;
  /** Follow-up turns waiting in the session's queue (busy_policy enqueue). Absent in older snapshots. */
  queued?: number;
  /** Steering inputs waiting for the running turn's next model call (busy_policy steer). */
  steering?: number;
}

export type SessionEvent =
  | { type: 'turn.requested'; requestId: string; ticket: number; work: TurnWork; queued?: boolean }
  | { type: 'turn.phase'; generation: number; phase: TurnPhase }
  | { type: 'interrupt.requested' }
  | { type: 'archive.requested' }
  | { type: 'recovery.detected'; hold: HoldClass | null }
  | { type: 'hold.cleared' }
  /** A follow-up turn was accepted into the session's queue (busy_policy enqueue). */
  | { type: 'followup.enqueued' }
  /** A queued follow-up left the queue without running (cancelled, or refused before admission). */
  | { type: 'followup.discarded' }
  /** A steering input waits for the running turn's next model call (busy_policy steer). */
  | { type: 'steer.requested' }
  /** The running turn took every waiting steering input into its next model call. */
  | { type: 'steer.injected' }
  /** The durable queue, as found on restart: `count` follow-ups wait. */
  | { type: 'queue.synced'; count: number }
  /** The queue was dropped (archive). */
  | { type: 'queue.dropped' }
  /** The running turn's work ended with its outcome (after its durable commit). */
  | { type: 'turn.done'; generation: number; output: TurnOutcome }
  /** The running turn's work failed or was cancelled. */
  | { type: 'turn.failed'; generation: number; error: unknown };

/** Events the machine emits (subscribe with actor.on). */
export type SessionEmitted =
  | { type: 'turn.rejected'; ticket: number; requestId: string; verdict: Verdict }
  | { type: 'turn.finished'; requestId: string; generation: number; output: TurnOutcome }
  | { type: 'turn.failed'; requestId: string; generation: number; error: unknown };

export interface SessionInput {
  sessionId: string;
}

const queuedOf = (c: SessionContext) => c.queued ?? 0;
const steeringOf = (c: SessionContext) => c.steering ?? 0;

const isCurrent = ({ context, event }: { context: SessionContext; event: SessionEvent }) =>
  'generation' in event && event.generation === context.generation;

/** The rejection a turn request gets in a state that cannot run it. */
function rejected(event: SessionEvent, verdict: Verdict): SessionEmitted {
  const e = event as Extract<SessionEvent, { type: 'turn.requested' }>;
  return { type: 'turn.rejected', ticket: e.ticket, requestId: e.requestId, verdict };
}

export const sessionMachine = setup({
  types: { context: {} as SessionContext, events: {} as SessionEvent, input: {} as SessionInput, emitted: {} as SessionEmitted },
  guards: {
    isPhaseCallingModel: ({ context, event }) =>
      isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'calling_model',
    isPhaseExecutingTools: ({ context, event }) =>
      isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'executing_tools',
    isPhaseCommitting: ({ context, event }) => isCurrent({ context, event }) && event.type === 'turn.phase' && event.phase === 'committing',
    hasHold: ({ event }) => event.type === 'recovery.detected' && event.hold !== null,
    /** The ending turn leaves follow-ups (queued, or steering it never reached). */
    hasFollowUps: ({ context }) => queuedOf(context) + steeringOf(context) > 0,
    isFollowUp: ({ event }) => event.type === 'turn.requested' && event.queued === true,
    isLastFollowUp: ({ context }) => queuedOf(context) <= 1,
    syncedSome: ({ event }) => event.type === 'queue.synced' && event.count > 0,
    /** A turn end of an older generation (the turn was stopped and another started since). */
    isStaleEnd: ({ context, event }) =>
      (event.type === 'turn.done' || event.type === 'turn.failed') && event.generation !== context.generation,
  },
  actions: {
    acceptTurn: assign(({ context, event }) => ({
      generation: context.generation + 1,
      turnCount: context.turnCount + 1,
      currentRequestId: event.type === 'turn.requested' ? event.requestId : '',
      ...(event.type === 'turn.requested' && event.queued ? { queued: Math.max(0, queuedOf(context) - 1) } : {}),
    })),
    addFollowUp: assign(({ context }) => ({ queued: queuedOf(context) + 1 })),
    dropFollowUp: assign(({ context }) => ({ queued: Math.max(0, queuedOf(context) - 1) })),
    addSteering: assign(({ context }) => ({ steering: steeringOf(context) + 1 })),
    clearSteering: assign({ steering: 0 }),
    // Steering the turn never reached runs as the next follow-up turn(s).
    steeringToFollowUps: assign(({ context }) => ({ queued: queuedOf(context) + steeringOf(context), steering: 0 })),
    syncQueue: assign(({ event }) => ({ queued: event.type === 'queue.synced' ? event.count : 0, steering: 0 })),
    dropQueue: assign({ queued: 0, steering: 0 }),
    rejectBusy: emit(({ event }) => rejected(event, 'busy')),
    rejectArchived: emit(({ event }) => rejected(event, 'archived')),
    rejectHeld: emit(({ event }) => rejected(event, 'held')),
    reportFinished: emit(({ context, event }): SessionEmitted => ({
      type: 'turn.finished',
      requestId: context.currentRequestId ?? '',
      generation: context.generation,
      output: (event as Extract<SessionEvent, { type: 'turn.done' }>).output,
    })),
    reportFailed: emit(({ context, event }): SessionEmitted => ({
      type: 'turn.failed',
      requestId: context.currentRequestId ?? '',
      generation: context.generation,
      error: (event as Extract<SessionEvent, { type: 'turn.failed' }>).error,
    })),
    clearTurn: assign({ currentRequestId: null }),
    recordHold: assign(({ context, event }) => ({
      hold: event.type === 'recovery.detected' ? event.hold : null,
      recoveredRequestId: context.currentRequestId,
      currentRequestId: null,
    })),
    recordRecovery: assign(({ context }) => ({ recoveredRequestId: context.currentRequestId, currentRequestId: null })),
    clearHold: assign({ hold: null }),
    ignoreStale: () => {},
    // Typed slots: actors/ provides the real ones (machine.provide). Unprovided (pure replays, tests),
    // a turn starts nothing and waits for its end event.
    startTurn: () => {},
    stopTurn: () => {},
  },
}).createMachine({
  id: 'session',
  version: '1',
  context: ({ input }) => ({
    sessionId: input.sessionId,
    generation: 0,
    turnCount: 0,
    currentRequestId: null,
    hold: null,
    recoveredRequestId: null,
  }),
  initial: 'idle',
  on: {
    // Busy-policy bookkeeping not named below is stale in that state (e.g. a discard after a drop).
    'followup.discarded': { actions: 'ignoreStale' },
    'steer.requested': { actions: 'ignoreStale' },
    'steer.injected': { actions: 'ignoreStale' },
    'queue.synced': { actions: 'ignoreStale' },
    'queue.dropped': { actions: 'dropQueue' },
    'followup.enqueued': { actions: 'ignoreStale' },
    // The end of a turn no longer running (stopped by recovery) changes nothing.
    'turn.done': { actions: 'ignoreStale' },
    'turn.failed': { actions: 'ignoreStale' },
  },
  states: {
    idle: {
      on: {
        'turn.requested': { target: 'running', actions: 'acceptTurn' },
        'turn.phase': { actions: 'ignoreStale' },
        // SPEC: interrupting an idle session is a no-op that still reports interrupted:true.
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { target: 'archived' },
        'recovery.detected': [{ guard: 'hasHold', target: 'held', actions: 'recordHold' }, { actions: 'recordRecovery' }],
        'hold.cleared': { actions: 'ignoreStale' },
        // An idle session with an empty queue runs its follow-up at once (through draining).
        'followup.enqueued': { target: 'draining', actions: 'addFollowUp' },
        'steer.requested': { target: 'draining', actions: 'addFollowUp' },
        'queue.synced': { guard: 'syncedSome', target: 'draining', actions: 'syncQueue' },
      },
    },
    // Between two queued turns: only the next follow-up is admitted; a fresh request is busy.
    draining: {
      on: {
        'turn.requested': [{ guard: 'isFollowUp', target: 'running', actions: 'acceptTurn' }, { actions: 'rejectBusy' }],
        'turn.phase': { actions: 'ignoreStale' },
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { target: 'archived', actions: 'dropQueue' },
        // A restored snapshot's queue count is not trusted: the durable queue is synced after recovery.
        'recovery.detected': [
          { guard: 'hasHold', target: 'held', actions: ['recordHold', 'dropQueue'] },
          { target: 'idle', actions: ['recordRecovery', 'dropQueue'] },
        ],
        'hold.cleared': { actions: 'ignoreStale' },
        'followup.enqueued': { actions: 'addFollowUp' },
        // No turn runs: steering becomes a follow-up at the end of the queue.
        'steer.requested': { actions: 'addFollowUp' },
        'followup.discarded': [{ guard: 'isLastFollowUp', target: 'idle', actions: 'dropFollowUp' }, { actions: 'dropFollowUp' }],
        'queue.synced': [
          { guard: 'syncedSome', actions: 'syncQueue' },
          { target: 'idle', actions: 'syncQueue' },
        ],
        'queue.dropped': { target: 'idle', actions: 'dropQueue' },
      },
    },
    running: {
      initial: 'calling_model',
      // The turn itself: started on entry with the accepted request's work; leaving `running` before it
      // ends (recovery) aborts its signal.
      entry: 'startTurn',
      exit: 'stopTurn',
      on: {
        'turn.requested': { actions: 'rejectBusy' },
        'followup.enqueued': { actions: 'addFollowUp' },
        'followup.discarded': { actions: 'dropFollowUp' },
        'steer.requested': { actions: 'addSteering' },
        'steer.injected': { actions: 'clearSteering' },
        'interrupt.requested': { target: '.cancelling' },
        // Archive waits for the turn to settle: a running turn is interrupted first by the actor.
        'archive.requested': { target: '.cancelling', actions: 'dropQueue' },
        'recovery.detected': [
          { guard: 'hasHold', target: 'held', actions: ['recordHold', 'dropQueue'] },
          { target: 'idle', actions: ['recordRecovery', 'dropQueue'] },
        ],
        'hold.cleared': { actions: 'ignoreStale' },
        'turn.done': [
          { guard: 'isStaleEnd', actions: 'ignoreStale' },
          { guard: 'hasFollowUps', target: 'draining', actions: ['reportFinished', 'clearTurn', 'steeringToFollowUps'] },
          { target: 'idle', actions: ['reportFinished', 'clearTurn'] },
        ],
        'turn.failed': [
          { guard: 'isStaleEnd', actions: 'ignoreStale' },
          { guard: 'hasFollowUps', target: 'draining', actions: ['reportFailed', 'clearTurn', 'steeringToFollowUps'] },
          { target: 'idle', actions: ['reportFailed', 'clearTurn'] },
        ],
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
            'archive.requested': { actions: 'dropQueue' },
          },
        },
      },
    },
    held: {
      on: {
        'turn.requested': { actions: 'rejectHeld' },
        'turn.phase': { actions: 'ignoreStale' },
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { target: 'archived' },
        'recovery.detected': [
          { guard: 'hasHold', actions: 'recordHold' },
          { target: 'idle', actions: 'clearHold' },
        ],
        'hold.cleared': { target: 'idle', actions: 'clearHold' },
      },
    },
    archived: {
      on: {
        'turn.requested': { actions: 'rejectArchived' },
        'turn.phase': { actions: 'ignoreStale' },
        'interrupt.requested': { actions: 'ignoreStale' },
        'archive.requested': { actions: 'ignoreStale' },
        'recovery.detected': { actions: 'ignoreStale' },
        'hold.cleared': { actions: 'ignoreStale' },
      },
    },
  },
});

/** The persisted form of a snapshot at rest in idle. */
export interface RestingSnapshot {
  status: 'active';
  value: 'idle';
  historyValue: Record<string, never>;
  context: SessionContext;
  children: Record<string, never>;
}

/**
 * The persisted snapshot the machine reaches when its running turn ends (turn.done or turn.failed):
 * idle with the turn cleared. actors/ stores it with the turn's last write, which is durable before the
 * machine gets there; built directly because a full transition() per turn is measurable CPU.
 * test/machines/session-machine.test.ts checks that it equals what transition() computes.
 */
export function restingSnapshot(context: SessionContext): RestingSnapshot {
  // The queue counts are left out: the durable follow-up queue is the truth after a restart (it is
  // synced into the machine with queue.synced), so a stored snapshot never claims follow-ups.
  const rest: SessionContext = { ...context, currentRequestId: null };
  delete rest.queued;
  delete rest.steering;
  return { status: 'active', value: 'idle', historyValue: {}, context: rest, children: {} };
}

/** A turn's work for pure replays: transition() runs no action, so it never runs. */
export const REPLAYED_TURN: TurnWork = { run: () => Promise.reject(new Error('a replayed turn does not run')) };

/** Every event type, for the state × event table test. */
export const SESSION_EVENT_TYPES: SessionEvent['type'][] = [
  'turn.requested',
  'turn.phase',
  'interrupt.requested',
  'archive.requested',
  'recovery.detected',
  'hold.cleared',
  'followup.enqueued',
  'followup.discarded',
  'steer.requested',
  'steer.injected',
  'queue.synced',
  'queue.dropped',
  'turn.done',
  'turn.failed',
];
