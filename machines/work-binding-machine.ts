// machines/work-binding-machine.ts: one work execution binding (a work item bound to one exact mob-flow
// attempt). Pure: no IO, no clock. The actor (actors/work-bindings/binding-actor.ts) drives it with
// `transition()` and commits the record after every accepted event, so every state is a stored state.
//
// Launch order (each step one committed transition):
//   launch (binding commit) → begun (delivery begin) → begun + pendingRun (deterministic pending-run
//   persistence) → realizing (realization claim) → running (the mob run started)
// Then: running → projecting (the run is terminal; its evidence is being written) → closing (completed
// run, evidence committed: closure requested) → completed | closure_refused; failed and canceled runs
// end in failed | canceled once their evidence is written.
// Recovery (`recover`, at hydrate after a crash): launch/begun without the run → begun, uncertain
// (abandonable only by `abandon` with the binding revision and once the run is absent); realizing
// without the run → quarantined (fails closed); either with the run present → running (reattach).
// A completed run whose evidence never committed → run_lost (`evidence.missing` / `evidence.refused`).
// Every event is handled in every state: a state that does not accept it rejects it (lastDecision).
import { assign, setup } from 'xstate';

type BindingRunStatus = 'completed' | 'failed' | 'canceled';

export interface BindingContext {
  revision: number;
  /** The deterministic pending run was persisted (launch step 3). */
  pendingRun: boolean;
  /** Found in launch/begun after a restart: the launch may or may not have reached the mob. */
  uncertain: boolean;
  runStatus: BindingRunStatus | null;
  reason: string | null;
  lastDecision: { event: BindingEvent['type']; verdict: 'accepted' | 'rejected'; reason?: string } | null;
}

export type BindingEvent =
  | { type: 'delivery.begin' }
  | { type: 'run.pending' }
  | { type: 'realize.claim' }
  | { type: 'run.started' }
  | { type: 'run.start_failed'; reason: string }
  | { type: 'recover'; runPresent: boolean }
  | { type: 'abandon'; expectedRevision: number; runPresent: boolean }
  | { type: 'run.ended'; status: BindingRunStatus; reason?: string }
  | { type: 'run.missing' }
  | { type: 'evidence.committed' }
  | { type: 'evidence.refused'; reason: string }
  | { type: 'evidence.missing' }
  | { type: 'closure.done' }
  | { type: 'closure.refused'; reason: string };

export const BINDING_EVENT_TYPES: ReadonlyArray<BindingEvent['type']> = [
  'delivery.begin',
  'run.pending',
  'realize.claim',
  'run.started',
  'run.start_failed',
  'recover',
  'abandon',
  'run.ended',
  'run.missing',
  'evidence.committed',
  'evidence.refused',
  'evidence.missing',
  'closure.done',
  'closure.refused',
];

type Args = { context: BindingContext; event: BindingEvent };

const reasonOf = (event: BindingEvent): string | null => ('reason' in event && event.reason !== undefined ? event.reason : null);
const reject = (reason: string) => ({ type: 'reject' as const, params: { reason } });
const because = (reason: string) => ({ type: 'setReason' as const, params: { reason } });
const rejectAll = (reason: string) => Object.fromEntries(BINDING_EVENT_TYPES.map((t) => [t, { actions: reject(reason) }]));

export const workBindingMachine = setup({
  types: { context: {} as BindingContext, events: {} as BindingEvent },
  actions: {
    accept: assign(({ context, event }: Args) => ({
      revision: context.revision + 1,
      lastDecision: { event: event.type, verdict: 'accepted' as const },
    })),
    reject: assign(({ event }: Args, params: { reason: string }) => ({
      lastDecision: { event: event.type, verdict: 'rejected' as const, reason: params.reason },
    })),
    markPending: assign({ pendingRun: true }),
    markUncertain: assign({ uncertain: true }),
    clearUncertain: assign({ uncertain: false }),
    setReason: assign((_: Args, params: { reason: string }) => ({ reason: params.reason })),
    reasonFromEvent: assign(({ event }: Args) => ({ reason: reasonOf(event) })),
    evidenceReason: assign(({ event }: Args) => ({ reason: `evidence not committed: ${reasonOf(event) ?? 'unknown'}` })),
    recordRunEnd: assign(({ event }: Args) => (event.type === 'run.ended' ? { runStatus: event.status, reason: reasonOf(event) } : {})),
  },
  guards: {
    hasPendingRun: ({ context }: Args) => context.pendingRun,
    noPendingRun: ({ context }: Args) => !context.pendingRun,
    runPresent: ({ event }: Args) => (event.type === 'recover' || event.type === 'abandon') && event.runPresent,
    staleRevision: ({ context, event }: Args) => event.type === 'abandon' && event.expectedRevision !== context.revision,
    notUncertain: ({ context }: Args) => !context.uncertain,
    isUncertain: ({ context }: Args) => context.uncertain,
    ranToCompletion: ({ context }: Args) => context.runStatus === 'completed',
    ranToFailure: ({ context }: Args) => context.runStatus === 'failed',
  },
}).createMachine({
  id: 'work_binding',
  initial: 'launch',
  context: { revision: 1, pendingRun: false, uncertain: false, runStatus: null, reason: null, lastDecision: null },
  on: rejectAll('not accepted in this phase'),
  states: {
    launch: {
      on: {
        'delivery.begin': { target: 'begun', actions: 'accept' },
        recover: [
          { guard: 'runPresent', target: 'running', actions: 'accept' },
          { target: 'begun', actions: ['accept', 'markUncertain'] },
        ],
      },
    },
    begun: {
      on: {
        'run.pending': [
          { guard: 'noPendingRun', actions: ['accept', 'markPending'] },
          { actions: reject('pending run already persisted') },
        ],
        'realize.claim': [
          { guard: 'isUncertain', actions: reject('uncertain launch: abandon it and retry') },
          { guard: 'noPendingRun', actions: reject('the pending run is not persisted yet') },
          { target: 'realizing', actions: 'accept' },
        ],
        recover: [
          { guard: 'runPresent', target: 'running', actions: ['accept', 'clearUncertain'] },
          { actions: ['accept', 'markUncertain'] },
        ],
        abandon: [
          { guard: 'staleRevision', actions: reject('stale binding revision') },
          { guard: 'notUncertain', actions: reject('not an uncertain launch') },
          { guard: 'runPresent', actions: reject('the deterministic run exists') },
          { target: 'abandoned', actions: ['accept', because('uncertain launch abandoned')] },
        ],
      },
    },
    realizing: {
      on: {
        'run.started': { target: 'running', actions: 'accept' },
        'run.start_failed': { target: 'failed', actions: ['accept', 'reasonFromEvent'] },
        recover: [
          { guard: 'runPresent', target: 'running', actions: 'accept' },
          { target: 'quarantined', actions: ['accept', because('realization claimed but no run exists: quarantined')] },
        ],
      },
    },
    running: {
      on: {
        'run.ended': { target: 'projecting', actions: ['accept', 'recordRunEnd'] },
        'run.missing': { target: 'run_lost', actions: ['accept', because('the bound run is missing')] },
      },
    },
    projecting: {
      on: {
        'evidence.committed': [
          { guard: 'ranToCompletion', target: 'closing', actions: 'accept' },
          { guard: 'ranToFailure', target: 'failed', actions: 'accept' },
          { target: 'canceled', actions: 'accept' },
        ],
        'evidence.refused': [
          { guard: 'ranToCompletion', target: 'run_lost', actions: ['accept', 'evidenceReason'] },
          { guard: 'ranToFailure', target: 'failed', actions: ['accept', 'evidenceReason'] },
          { target: 'canceled', actions: ['accept', 'evidenceReason'] },
        ],
        'evidence.missing': { target: 'run_lost', actions: ['accept', because('the run completed but its evidence never committed')] },
      },
    },
    closing: {
      on: {
        'closure.done': { target: 'completed', actions: 'accept' },
        'closure.refused': { target: 'closure_refused', actions: ['accept', 'reasonFromEvent'] },
      },
    },
    completed: { on: rejectAll('terminal') },
    closure_refused: { on: rejectAll('terminal') },
    failed: { on: rejectAll('terminal') },
    canceled: { on: rejectAll('terminal') },
    abandoned: { on: rejectAll('terminal') },
    quarantined: { on: rejectAll('terminal') },
    run_lost: { on: rejectAll('terminal') },
  },
});
