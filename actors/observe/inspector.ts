// actors/observe/inspector.ts: the ONE inspection stream of actor transitions, fed by XState's
// inspection API. Off until a viewer subscribes: only then does it attach an observer to each live
// actor's system (and to actors created meanwhile); when the last viewer leaves it detaches them all,
// so nobody watching costs nothing on the hot path. Each transition becomes one SSE frame, built once
// and shared; every subscriber is bounded like a session stream (http/sse.ts drop policy).
import type { AnyActorRef, InspectionEvent, Subscription } from 'xstate';
import type { ActorTransition } from '../../contracts/routes-observe.ts';
import type { EventSubscriber, HubEntry } from '../event-hub.ts';
import type { ActorDirectory } from './actor-directory.ts';
import { statePath } from './machine-graph.ts';

/** Transitions kept per actor while inspection is on (the viewer's "recent events"). */
const RECENT_PER_ACTOR = 50;
/** Actors with a recent-events ring at most (oldest dropped first). */
const RECENT_ACTORS_MAX = 2_000;

export interface InspectFilter {
  kind?: string;
  id?: string;
}

interface Watcher {
  sub: EventSubscriber;
  filter: InspectFilter;
}

export class Inspector {
  private seq = 0;
  private readonly watchers = new Set<Watcher>();
  private readonly attached = new Map<AnyActorRef, Subscription[]>();
  private readonly recent = new Map<string, ActorTransition[]>();

  constructor(
    private readonly directory: () => ActorDirectory | null,
    private readonly now: () => number,
  ) {}

  get subscriberCount(): number {
    return this.watchers.size;
  }

  /** Highest transition seq handed out (a new subscriber starts after it). */
  get lastSeq(): number {
    return this.seq;
  }

  /** Adds a viewer; the first one switches inspection on. Returns the unsubscribe function. */
  subscribe(sub: EventSubscriber, filter: InspectFilter = {}): () => void {
    const w: Watcher = { sub, filter };
    const first = this.watchers.size === 0;
    this.watchers.add(w);
    if (first) for (const m of this.directory()?.liveMachines() ?? []) this.attach(m.kind, m.id, m.ref);
    return () => {
      if (!this.watchers.delete(w)) return;
      if (this.watchers.size === 0) this.detachAll();
    };
  }

  /** A new live actor (session-core calls this through SessionDeps.onMachine). Cheap when nobody watches. */
  onMachine(kind: string, id: string, ref: AnyActorRef): void {
    if (this.watchers.size > 0) this.attach(kind, id, ref);
  }

  /** Recent transitions of one actor, oldest first (empty unless inspection has been on). */
  recentOf(kind: string, id: string): ActorTransition[] {
    return this.recent.get(`${kind}:${id}`) ?? [];
  }

  /** Ends every viewer stream (server shutdown). */
  closeAll(): void {
    for (const w of [...this.watchers]) w.sub.close('shutdown');
    this.watchers.clear();
    this.detachAll();
  }

  private attach(kind: string, id: string, ref: AnyActorRef): void {
    if (this.attached.has(ref)) return;
    const subs = [
      ref.system.inspect({ next: (ev: InspectionEvent) => this.onInspect(kind, id, ref, ev) }),
      // A stopped (shed) actor is forgotten at once, so a long-open viewer holds no dead refs.
      ref.subscribe({ complete: () => this.detach(ref), error: () => this.detach(ref) }),
    ];
    this.attached.set(ref, subs);
  }

  private detach(ref: AnyActorRef): void {
    const subs = this.attached.get(ref);
    if (!subs) return;
    this.attached.delete(ref);
    for (const s of subs) s.unsubscribe();
  }

  private detachAll(): void {
    for (const ref of [...this.attached.keys()]) this.detach(ref);
  }

  private onInspect(kind: string, id: string, ref: AnyActorRef, ev: InspectionEvent): void {
    if (ev.type !== '@xstate.snapshot' || ev.actorRef !== ref) return;
    // Runs inside the actor's own processing: a fault here must never reach the machine.
    try {
      this.record(kind, id, ev);
    } catch {
      // An event payload that cannot be serialized is left out of the stream.
    }
  }

  private record(kind: string, id: string, ev: Extract<InspectionEvent, { type: '@xstate.snapshot' }>): void {
    const value = (ev.snapshot as { value?: unknown }).value;
    const t: ActorTransition = {
      seq: ++this.seq,
      kind,
      id,
      at_ms: this.now(),
      event: { ...(ev.event as { type: string }) },
      value,
      state: statePath(value),
    };
    const key = `${kind}:${id}`;
    let ring = this.recent.get(key);
    if (ring) this.recent.delete(key);
    else ring = [];
    ring.push(t);
    if (ring.length > RECENT_PER_ACTOR) ring.shift();
    this.recent.set(key, ring);
    if (this.recent.size > RECENT_ACTORS_MAX) this.recent.delete(this.recent.keys().next().value!);
    let entry: HubEntry | null = null;
    for (const w of this.watchers) {
      if ((w.filter.kind && w.filter.kind !== kind) || (w.filter.id && w.filter.id !== id)) continue;
      entry ??= {
        seq: t.seq,
        kind: 'transition',
        timestamp_ms: t.at_ms,
        payload: t,
        frame: `id: ${t.seq}\nevent: transition\ndata: ${JSON.stringify(t)}\n\n`,
      };
      w.sub.push(entry);
    }
  }
}
