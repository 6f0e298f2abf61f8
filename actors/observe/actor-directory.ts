// actors/observe/actor-directory.ts: the read-only view of live actors that observation needs (metrics
// census, the actor viewer, the inspector): a thin adapter over the runtime's actor registry, so every
// kind that registers shows up in metrics and the viewer. Sessions add their own details.
import type { AnyActorRef, AnyStateMachine } from 'xstate';
import type { ActorDescription } from '../actor-registry.ts';
import type { SessionActor } from '../session/session-actor.ts';
import type { TurnProgress } from '../session/turn-progress.ts';
import { SESSION_KIND, type SessionHost } from '../session/session-host.ts';
import type { Supervisor } from '../supervisor.ts';

/** One resident actor as observation reports it (no ids beyond the actor's own). */
export interface ActorView {
  kind: string;
  id: string;
  /** Top-level state ('idle', 'running', 'held', 'archived', ...). */
  state: string;
  /** The full XState state value (nested states as objects). */
  value: unknown;
  /** Sub-state of a running session ('calling_model', 'executing_tools', 'committing', 'cancelling'). */
  phase?: string;
  /** False when the live XState actor was shed (only the record and its persisted snapshot are held). */
  awake: boolean;
  labels: Record<string, string>;
  /** What waits on the actor: the running turn plus writes not yet durable. */
  mailboxDepth: number;
  /** Live event-stream subscribers. */
  subscribers: number;
  lastUsedMs: number;
  /** When the actor entered its current state (epoch ms). */
  stateSinceMs: number;
  /** Actors listed under this one (a mob's member actors); `membersOf` resolves them. */
  memberRefs?: Array<{ kind: string; id: string }>;
  /** A session's running turn (model call in flight, pending tools); only on `get`. */
  turn?: TurnProgress | null;
}

/** A live XState actor the inspector can attach to. */
interface LiveMachine {
  kind: string;
  id: string;
  ref: AnyActorRef;
}

export interface ActorDirectory {
  /** Actor kinds and the machine each runs (the viewer draws it). */
  machines(): ReadonlyMap<string, AnyStateMachine>;
  /** Every resident actor (awake or shed). Cost: one pass over the residents. */
  list(): Iterable<ActorView>;
  /** One resident actor, never hydrating it. */
  get(kind: string, id: string): ActorView | undefined;
  /** The resident actors listed under `view` (a mob's members), in the kind's order. */
  membersOf(view: ActorView): ActorView[];
  /** Actors whose XState actor is awake now. */
  liveMachines(): Iterable<LiveMachine>;
}

/** The top-level state of a state value ('idle', or 'running' for {running: 'calling_model'}). */
function topState(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') return Object.keys(value)[0] ?? '';
  return '';
}

function sessionView(a: SessionActor, labels: Record<string, string>): ActorView {
  const st = a.status();
  const live = a.liveMachine;
  const view: ActorView = {
    kind: SESSION_KIND,
    id: a.id,
    state: a.snapshotRecord.archived ? 'archived' : st.state,
    value: live ? live.getSnapshot().value : a.stateValue(),
    awake: live !== null,
    labels,
    mailboxDepth: a.mailboxDepth,
    subscribers: a.subscriberCount,
    lastUsedMs: a.lastUsedMs,
    stateSinceMs: a.stateSinceMs(),
  };
  if (st.phase) view.phase = st.phase;
  return view;
}

function viewOf(d: ActorDescription, sessions: () => SessionHost): ActorView {
  if (d.kind === SESSION_KIND) {
    const a = sessions().peek(d.id);
    if (a) return sessionView(a, d.labels);
  }
  const view: ActorView = {
    kind: d.kind,
    id: d.id,
    state: topState(d.state),
    value: d.state,
    awake: true,
    labels: d.labels,
    mailboxDepth: 0,
    subscribers: 0,
    lastUsedMs: 0,
    stateSinceMs: d.sinceMs,
  };
  if (d.members) view.memberRefs = d.members;
  return view;
}

/**
 * The directory over the runtime's actor registry: every registered kind is listed; sessions add what
 * only they know (awake or shed, mailbox depth, subscribers, turn phase, the live machine).
 */
export function registryDirectory(
  sup: Supervisor,
  sessions: () => SessionHost,
  machines: ReadonlyMap<string, AnyStateMachine>,
): ActorDirectory {
  return {
    machines: () => machines,
    *list() {
      for (const d of sup.registry.list()) yield viewOf(d, sessions);
    },
    get(kind, id) {
      if (kind === SESSION_KIND) {
        const a = sessions().peek(id);
        return a ? { ...sessionView(a, a.snapshotRecord.labels), turn: a.core.progress } : undefined;
      }
      const d = sup.registry.describe(kind, id);
      return d ? viewOf(d, sessions) : undefined;
    },
    membersOf(view) {
      const out: ActorView[] = [];
      for (const m of view.memberRefs ?? []) {
        const d = sup.registry.describe(m.kind, m.id);
        if (d) out.push(viewOf(d, sessions));
      }
      return out;
    },
    *liveMachines() {
      for (const d of sup.registry.list(SESSION_KIND)) {
        const ref = sessions().peek(d.id)?.liveMachine;
        if (ref) yield { kind: SESSION_KIND, id: d.id, ref };
      }
    },
  };
}
