// machines/keep-alive-machine.ts: a keep-alive session's life as a comms agent, waiting on its inbox.
// Pure: no IO, no clock. The comms agent actor (actors/comms/keep-alive.ts) runs the turns it asks for.
// States: passive (keep_alive off), waiting (nothing to run), waking (an input waits: start a turn),
// running (a turn from the inbox), blocked (another turn holds the session: retry when it settles),
// stalled (the last inbox turn failed: retry on the next admitted input). Snapshots are not persisted:
// an agent is rebuilt from the session's settings and its durable inbox (every state is safe to rebuild).
import { assign, setup } from 'xstate';

export type KeepAliveOutcome = 'succeeded' | 'failed' | 'busy' | 'empty';

export interface KeepAliveContext {
  sessionId: string;
  enabled: boolean;
  turns: number;
  failures: number;
}

export type KeepAliveEvent =
  | { type: 'keepalive.enabled' }
  | { type: 'keepalive.disabled' }
  | { type: 'inbox.woken' }
  | { type: 'turn.started' }
  | { type: 'turn.settled'; outcome: KeepAliveOutcome }
  | { type: 'session.idle' };

export const keepAliveMachine = setup({
  types: { context: {} as KeepAliveContext, events: {} as KeepAliveEvent, input: {} as { sessionId: string; enabled: boolean } },
  guards: {
    isDisabled: ({ context }) => !context.enabled,
    startsEnabled: ({ context }) => context.enabled,
    wasSucceeded: ({ event }) => event.type === 'turn.settled' && event.outcome === 'succeeded',
    wasFailed: ({ event }) => event.type === 'turn.settled' && event.outcome === 'failed',
    wasBusy: ({ event }) => event.type === 'turn.settled' && event.outcome === 'busy',
    wasEmpty: ({ event }) => event.type === 'turn.settled' && event.outcome === 'empty',
  },
  actions: {
    enable: assign({ enabled: true }),
    disable: assign({ enabled: false }),
    countTurn: assign(({ context }) => ({ turns: context.turns + 1 })),
    countFailure: assign(({ context }) => ({ failures: context.failures + 1 })),
    ignore: () => {},
  },
}).createMachine({
  id: 'keepAlive',
  version: '1',
  context: ({ input }) => ({ sessionId: input.sessionId, enabled: input.enabled, turns: 0, failures: 0 }),
  initial: 'starting',
  states: {
    starting: { always: [{ guard: 'startsEnabled', target: 'waiting' }, { target: 'passive' }] },
    passive: {
      on: {
        'keepalive.enabled': { target: 'waiting', actions: 'enable' },
        'keepalive.disabled': { actions: 'ignore' },
        'inbox.woken': { actions: 'ignore' },
        'turn.started': { actions: 'ignore' },
        'turn.settled': { actions: 'ignore' },
        'session.idle': { actions: 'ignore' },
      },
    },
    waiting: {
      on: {
        'keepalive.enabled': { actions: 'ignore' },
        'keepalive.disabled': { target: 'passive', actions: 'disable' },
        'inbox.woken': { target: 'waking' },
        'turn.started': { actions: 'ignore' },
        'turn.settled': { actions: 'ignore' },
        'session.idle': { actions: 'ignore' },
      },
    },
    waking: {
      on: {
        'keepalive.enabled': { actions: 'ignore' },
        'keepalive.disabled': { target: 'passive', actions: 'disable' },
        'inbox.woken': { actions: 'ignore' },
        'turn.started': { target: 'running', actions: 'countTurn' },
        'turn.settled': [{ guard: 'wasEmpty', target: 'waiting' }, { guard: 'wasBusy', target: 'blocked' }, { actions: 'ignore' }],
        'session.idle': { actions: 'ignore' },
      },
    },
    running: {
      on: {
        'keepalive.enabled': { actions: 'ignore' },
        // The running turn finishes first; the guard below then parks the agent.
        'keepalive.disabled': { actions: 'disable' },
        'inbox.woken': { actions: 'ignore' },
        'turn.started': { actions: 'ignore' },
        'turn.settled': [
          { guard: 'isDisabled', target: 'passive' },
          { guard: 'wasSucceeded', target: 'waking' },
          { guard: 'wasFailed', target: 'stalled', actions: 'countFailure' },
          { guard: 'wasBusy', target: 'blocked' },
          { target: 'waiting' },
        ],
        'session.idle': { actions: 'ignore' },
      },
    },
    blocked: {
      on: {
        'keepalive.enabled': { actions: 'ignore' },
        'keepalive.disabled': { target: 'passive', actions: 'disable' },
        'inbox.woken': { actions: 'ignore' },
        'turn.started': { actions: 'ignore' },
        'turn.settled': { actions: 'ignore' },
        'session.idle': { target: 'waking' },
      },
    },
    stalled: {
      on: {
        'keepalive.enabled': { actions: 'ignore' },
        'keepalive.disabled': { target: 'passive', actions: 'disable' },
        'inbox.woken': { target: 'waking' },
        'turn.started': { actions: 'ignore' },
        'turn.settled': { actions: 'ignore' },
        'session.idle': { actions: 'ignore' },
      },
    },
  },
});

/** Every event type, for the state × event table test. */
export const KEEP_ALIVE_EVENT_TYPES: KeepAliveEvent['type'][] = [
  'keepalive.enabled',
  'keepalive.disabled',
  'inbox.woken',
  'turn.started',
  'turn.settled',
  'session.idle',
];
