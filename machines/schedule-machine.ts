// machines/schedule-machine.ts: one schedule's lifecycle. Pure: no IO, no clock, no node:* imports.
// States: active (armed at nextDueMs), firing (claiming and dispatching its due occurrences), paused,
// deleted (soft delete; every later command is rejected). Time arrives only inside events (`nowMs`).
// Safe-to-restore states: active, paused, deleted. A snapshot found in `firing` is restored as active
// (restoreScheduleValue): the durable timer is the stored due time of the pending occurrences, never an
// XState `after` (dependencies.md: restore drops `after` timers), so the actor re-arms it on restore
// and the occurrence claims in the store decide what was already fired.
import { assign, setup } from 'xstate';

export type ScheduleStateValue = 'active' | 'firing' | 'paused' | 'deleted';
export type ScheduleVerdict = 'accepted' | 'rejected';

export interface ScheduleMachineContext {
  scheduleId: string;
  revision: number;
  /** Epoch ms of the earliest work (pending occurrence due time or expired lease); null: nothing planned. */
  nextDueMs: number | null;
  /** When the current firing began (epoch ms), null outside `firing`. */
  firingSinceMs: number | null;
  fireCount: number;
  /** The stored phase the machine boots into (a schedule read from storage). */
  bootPhase: 'active' | 'paused' | 'deleted';
  /** The machine's answer to the last command, read by the actor after send(). */
  lastDecision: { event: ScheduleEvent['type']; verdict: ScheduleVerdict } | null;
}

export type ScheduleEvent =
  | { type: 'timer.due'; nowMs: number }
  | { type: 'fire.settled'; nextDueMs: number | null }
  | { type: 'schedule.pause'; revision: number }
  | { type: 'schedule.resume'; revision: number; nextDueMs: number | null }
  | { type: 'schedule.update'; revision: number; nextDueMs: number | null }
  | { type: 'schedule.replanned'; nextDueMs: number | null }
  | { type: 'schedule.delete'; revision: number };

export const SCHEDULE_EVENT_TYPES: ReadonlyArray<ScheduleEvent['type']> = [
  'timer.due',
  'fire.settled',
  'schedule.pause',
  'schedule.resume',
  'schedule.update',
  'schedule.replanned',
  'schedule.delete',
];

export interface ScheduleMachineInput {
  scheduleId: string;
  revision: number;
  nextDueMs: number | null;
  phase?: 'active' | 'paused' | 'deleted';
}

type Args = { context: ScheduleMachineContext; event: ScheduleEvent };

const decided =
  (verdict: ScheduleVerdict) =>
  ({ event }: Args) => ({ lastDecision: { event: event.type, verdict } });
const nextDueOf = (event: ScheduleEvent, fallback: number | null): number | null => ('nextDueMs' in event ? event.nextDueMs : fallback);
const revisionOf = (event: ScheduleEvent, fallback: number): number => ('revision' in event ? event.revision : fallback);

export const scheduleMachine = setup({
  types: { context: {} as ScheduleMachineContext, events: {} as ScheduleEvent, input: {} as ScheduleMachineInput },
  guards: {
    isDue: ({ context, event }: Args) => event.type === 'timer.due' && context.nextDueMs !== null && event.nowMs >= context.nextDueMs,
    startsPaused: ({ context }: { context: ScheduleMachineContext }) => context.bootPhase === 'paused',
    startsDeleted: ({ context }: { context: ScheduleMachineContext }) => context.bootPhase === 'deleted',
  },
  actions: {
    beginFiring: assign(({ context, event }: Args) => ({
      firingSinceMs: event.type === 'timer.due' ? event.nowMs : null,
      fireCount: context.fireCount + 1,
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    settleFiring: assign(({ context, event }: Args) => ({
      nextDueMs: nextDueOf(event, context.nextDueMs),
      firingSinceMs: null,
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    recordRevision: assign(({ context, event }: Args) => ({
      revision: revisionOf(event, context.revision),
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    recordPlan: assign(({ context, event }: Args) => ({
      revision: revisionOf(event, context.revision),
      nextDueMs: nextDueOf(event, context.nextDueMs),
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    recordDeletion: assign(({ context, event }: Args) => ({
      revision: revisionOf(event, context.revision),
      nextDueMs: null,
      firingSinceMs: null,
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    /** A timer that ran early (or a stale wheel entry): nothing is due yet, the actor re-arms. */
    ignoreEarlyTimer: assign(decided('rejected')),
    /** Pause of a paused schedule, resume of an active one: answered with the schedule as it is. */
    rejectRedundant: assign(decided('rejected')),
    rejectWhilePaused: assign(decided('rejected')),
    rejectDeleted: assign(decided('rejected')),
    rejectUnexpected: assign(decided('rejected')),
  },
}).createMachine({
  id: 'schedule',
  version: '1',
  context: ({ input }) => ({
    scheduleId: input.scheduleId,
    revision: input.revision,
    nextDueMs: input.nextDueMs,
    firingSinceMs: null,
    fireCount: 0,
    bootPhase: input.phase ?? 'active',
    lastDecision: null,
  }),
  initial: 'boot',
  states: {
    // Transient: places a schedule read from storage in its stored phase.
    boot: {
      always: [{ guard: 'startsDeleted', target: 'deleted' }, { guard: 'startsPaused', target: 'paused' }, { target: 'active' }],
    },
    active: {
      on: {
        'timer.due': [{ guard: 'isDue', target: 'firing', actions: 'beginFiring' }, { actions: 'ignoreEarlyTimer' }],
        'fire.settled': { actions: 'rejectUnexpected' },
        'schedule.pause': { target: 'paused', actions: 'recordRevision' },
        'schedule.resume': { actions: 'rejectRedundant' },
        'schedule.update': { actions: 'recordPlan' },
        'schedule.replanned': { actions: 'recordPlan' },
        'schedule.delete': { target: 'deleted', actions: 'recordDeletion' },
      },
    },
    firing: {
      on: {
        'timer.due': { actions: 'ignoreEarlyTimer' },
        'fire.settled': { target: 'active', actions: 'settleFiring' },
        // Dispatches already handed to sessions finish; nothing further is claimed once paused.
        'schedule.pause': { target: 'paused', actions: 'recordRevision' },
        'schedule.resume': { actions: 'rejectRedundant' },
        'schedule.update': { actions: 'recordPlan' },
        'schedule.replanned': { actions: 'recordPlan' },
        'schedule.delete': { target: 'deleted', actions: 'recordDeletion' },
      },
    },
    paused: {
      on: {
        'timer.due': { actions: 'rejectWhilePaused' },
        // A firing interrupted by pause settles here: keep its plan, stay paused.
        'fire.settled': { actions: 'settleFiring' },
        'schedule.pause': { actions: 'rejectRedundant' },
        'schedule.resume': { target: 'active', actions: 'recordPlan' },
        'schedule.update': { actions: 'recordPlan' },
        'schedule.replanned': { actions: 'recordPlan' },
        'schedule.delete': { target: 'deleted', actions: 'recordDeletion' },
      },
    },
    deleted: {
      on: {
        'timer.due': { actions: 'rejectDeleted' },
        'fire.settled': { actions: 'rejectDeleted' },
        'schedule.pause': { actions: 'rejectDeleted' },
        'schedule.resume': { actions: 'rejectDeleted' },
        'schedule.update': { actions: 'rejectDeleted' },
        'schedule.replanned': { actions: 'rejectDeleted' },
        'schedule.delete': { actions: 'rejectDeleted' },
      },
    },
  },
});

/** The value a persisted snapshot is restored with: `firing` is not a safe restore state (see header). */
export function restoreScheduleValue(value: unknown): 'active' | 'paused' | 'deleted' {
  return value === 'paused' || value === 'deleted' ? value : 'active';
}
