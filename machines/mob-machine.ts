// machines/mob-machine.ts: one mob's lifecycle. Pure: no IO, no clock, no node:* imports.
// States: starting (its definition's members are being spawned), running, destroying (members being
// retired, flows canceled), destroyed (final; every later command is refused by the actor).
// Counters track live members and flow runs so the viewer shows what the mob supervises.
// Safe-to-persist states: running, destroyed. starting restores as running (members restore themselves);
// destroying restores as destroying and the actor finishes the destruction.
import { assign, setup } from 'xstate';

export type MobStateValue = 'starting' | 'running' | 'destroying' | 'destroyed';

export interface MobContext {
  mobId: string;
  members: number;
  activeRuns: number;
  lastDecision: { event: MobEvent['type']; verdict: 'accepted' | 'ignored' } | null;
}

export type MobEvent =
  | { type: 'mob.started' }
  | { type: 'member.joined' }
  | { type: 'member.left' }
  | { type: 'flow.started' }
  | { type: 'flow.ended' }
  | { type: 'destroy.requested' }
  | { type: 'destroy.done' };

export const MOB_EVENT_TYPES: ReadonlyArray<MobEvent['type']> = [
  'mob.started',
  'member.joined',
  'member.left',
  'flow.started',
  'flow.ended',
  'destroy.requested',
  'destroy.done',
];

export interface MobInput {
  mobId: string;
  members?: number;
}

type Args = { context: MobContext; event: MobEvent };
const ignore = { actions: 'ignored' as const };

export const mobMachine = setup({
  types: { context: {} as MobContext, events: {} as MobEvent, input: {} as MobInput },
  actions: {
    accepted: assign(({ event }: Args) => ({ lastDecision: { event: event.type, verdict: 'accepted' as const } })),
    ignored: assign(({ event }: Args) => ({ lastDecision: { event: event.type, verdict: 'ignored' as const } })),
    count: assign(({ context, event }: Args, p: { field: 'members' | 'activeRuns'; by: number }) => ({
      [p.field]: Math.max(0, context[p.field] + p.by),
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
  },
}).createMachine({
  id: 'mob',
  initial: 'starting',
  context: ({ input }) => ({ mobId: input.mobId, members: input.members ?? 0, activeRuns: 0, lastDecision: null }),
  on: {
    'mob.started': ignore,
    'member.joined': ignore,
    'member.left': ignore,
    'flow.started': ignore,
    'flow.ended': ignore,
    'destroy.requested': ignore,
    'destroy.done': ignore,
  },
  states: {
    starting: {
      on: {
        'mob.started': { target: 'running', actions: 'accepted' },
        'member.joined': { actions: { type: 'count', params: { field: 'members', by: 1 } } },
        'member.left': { actions: { type: 'count', params: { field: 'members', by: -1 } } },
        'destroy.requested': { target: 'destroying', actions: 'accepted' },
      },
    },
    running: {
      on: {
        'member.joined': { actions: { type: 'count', params: { field: 'members', by: 1 } } },
        'member.left': { actions: { type: 'count', params: { field: 'members', by: -1 } } },
        'flow.started': { actions: { type: 'count', params: { field: 'activeRuns', by: 1 } } },
        'flow.ended': { actions: { type: 'count', params: { field: 'activeRuns', by: -1 } } },
        'destroy.requested': { target: 'destroying', actions: 'accepted' },
      },
    },
    destroying: {
      on: {
        'member.left': { actions: { type: 'count', params: { field: 'members', by: -1 } } },
        'flow.ended': { actions: { type: 'count', params: { field: 'activeRuns', by: -1 } } },
        'destroy.done': { target: 'destroyed', actions: 'accepted' },
      },
    },
    destroyed: { type: 'final' },
  },
});
