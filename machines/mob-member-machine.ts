// machines/mob-member-machine.ts: one mob member's lifecycle. Pure: no IO, no clock, no node:* imports.
// A member is a Warren session the mob supervises. States:
//   spawning  - its session is being created and its kickoff turn runs
//   active    - ready: dispatched prompts (flow steps, helper prompts, RPC) run one at a time
//   running   - a dispatched turn is in flight
//   cancelled - cancelled by an operator: nothing is dispatched until respawn
//   failed    - its kickoff (or respawn) failed: respawn to retry
//   retired   - final: removed from the mob (its session stays readable)
// Every event is handled in every state (ignored where it does not apply, recorded in lastDecision).
// Safe-to-persist states: active, cancelled, failed, retired. A member found in spawning or running after a
// restart is restored by restoreMemberValue(): running → active (the turn's own session recovery decides
// what committed), spawning → active when its session exists, else failed.
import { assign, setup } from 'xstate';

export type MemberStateValue = 'spawning' | 'active' | 'running' | 'cancelled' | 'failed' | 'retired';
export type MemberVerdict = 'accepted' | 'ignored';

export interface MemberContext {
  agentIdentity: string;
  generation: number;
  turns: number;
  failures: number;
  lastDecision: { event: MemberEvent['type']; verdict: MemberVerdict } | null;
}

export type MemberEvent =
  | { type: 'kickoff.done' }
  | { type: 'kickoff.failed' }
  | { type: 'turn.start' }
  | { type: 'turn.done' }
  | { type: 'turn.failed' }
  | { type: 'member.cancel' }
  | { type: 'member.respawn' }
  | { type: 'member.retire' };

export const MEMBER_EVENT_TYPES: ReadonlyArray<MemberEvent['type']> = [
  'kickoff.done',
  'kickoff.failed',
  'turn.start',
  'turn.done',
  'turn.failed',
  'member.cancel',
  'member.respawn',
  'member.retire',
];

export interface MemberInput {
  agentIdentity: string;
  generation?: number;
}

type Args = { context: MemberContext; event: MemberEvent };
const ignore = { actions: 'ignored' as const };
const accepted = 'accepted' as const;

export const memberMachine = setup({
  types: { context: {} as MemberContext, events: {} as MemberEvent, input: {} as MemberInput },
  actions: {
    accepted: assign(({ event }: Args) => ({ lastDecision: { event: event.type, verdict: 'accepted' as MemberVerdict } })),
    ignored: assign(({ event }: Args) => ({ lastDecision: { event: event.type, verdict: 'ignored' as MemberVerdict } })),
    nextGeneration: assign(({ context }: Args) => ({ generation: context.generation + 1 })),
    countTurn: assign(({ context }: Args) => ({ turns: context.turns + 1 })),
    countFailure: assign(({ context }: Args) => ({ failures: context.failures + 1 })),
  },
}).createMachine({
  id: 'mob-member',
  initial: 'spawning',
  context: ({ input }) => ({
    agentIdentity: input.agentIdentity,
    generation: input.generation ?? 1,
    turns: 0,
    failures: 0,
    lastDecision: null,
  }),
  on: {
    'kickoff.done': ignore,
    'kickoff.failed': ignore,
    'turn.start': ignore,
    'turn.done': ignore,
    'turn.failed': ignore,
    'member.cancel': ignore,
    'member.respawn': ignore,
    'member.retire': ignore,
  },
  states: {
    spawning: {
      on: {
        'kickoff.done': { target: 'active', actions: accepted },
        'kickoff.failed': { target: 'failed', actions: ['countFailure', accepted] },
        'member.cancel': { target: 'cancelled', actions: accepted },
        'member.retire': { target: 'retired', actions: accepted },
      },
    },
    active: {
      on: {
        'turn.start': { target: 'running', actions: accepted },
        'member.cancel': { target: 'cancelled', actions: accepted },
        'member.respawn': { target: 'spawning', actions: ['nextGeneration', accepted] },
        'member.retire': { target: 'retired', actions: accepted },
      },
    },
    running: {
      on: {
        'turn.done': { target: 'active', actions: ['countTurn', accepted] },
        'turn.failed': { target: 'active', actions: ['countFailure', accepted] },
        'member.cancel': { target: 'cancelled', actions: accepted },
        'member.retire': { target: 'retired', actions: accepted },
      },
    },
    cancelled: {
      on: {
        'member.respawn': { target: 'spawning', actions: ['nextGeneration', accepted] },
        'member.retire': { target: 'retired', actions: accepted },
      },
    },
    failed: {
      on: {
        'member.respawn': { target: 'spawning', actions: ['nextGeneration', accepted] },
        'member.retire': { target: 'retired', actions: accepted },
      },
    },
    retired: { type: 'final' },
  },
});

/** The state a persisted member is restored into (see the header). */
export function restoreMemberValue(stored: MemberStateValue, hasSession: boolean): MemberStateValue {
  if (stored === 'running') return 'active';
  if (stored === 'spawning') return hasSession ? 'active' : 'failed';
  return stored;
}
