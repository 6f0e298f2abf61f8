// actors/actor-registry.ts: the one registry of live actors, for every kind (session now; schedule,
// work item, binding, mob next). A kind registers how its actors hydrate from storage, when they are
// busy, how they shed and stop; the registry owns the rest: hydration on first message (deduplicated),
// one mailbox per actor, LRU and idle eviction, shedding, the stopping map and graceful close.
// Kinds are composed in (ActorKind is a plain object of functions); no actor class inherits from here.
import type { Logger } from 'pino';
import type { AnyStateMachine } from 'xstate';
import { ServiceError } from '../contracts/errors.ts';
import { StateClock } from './state-clock.ts';

/** What the registry needs of every live actor. */
export interface HostedActor {
  readonly id: string;
  /** Last time the actor was used (epoch ms, the registry's clock); drives shedding and eviction. */
  readonly lastUsedMs: number;
}

/** Idle and shed policy of a kind. */
export interface ActorPolicy {
  /** An actor unused for this long (and evictable) leaves the registry (ms). */
  idleEvictMs: number;
  /** A quiet actor sheds its live parts after this long (ms); omit for kinds that do not shed. */
  shedAfterMs?: number;
  /** Upper bound on resident actors of this kind; the least recently used evictable ones go first. */
  maxResident: number;
}

/** One line of the viewer's list of live actors. */
export interface ActorDescription {
  kind: string;
  id: string;
  /** The machine's state value (a string, or an object for nested states). */
  state: unknown;
  labels: Record<string, string>;
  /** When the actor entered this state (epoch ms, the registry's clock). */
  sinceMs: number;
  /** Actors listed under this one in the viewer (a mob's members). */
  members?: Array<{ kind: string; id: string }>;
}

/** What a kind tells the viewer about one of its actors. */
export interface ActorFacts {
  state: unknown;
  labels?: Record<string, string>;
  /**
   * When the actor entered `state` (epoch ms). Omitted: the registry's own clock, which notes the state each
   * time the actor is described, so it is exact only for kinds whose state changes are noted by reading it.
   */
  sinceMs?: number;
  /** Actors listed under this one (a mob's member actors). */
  members?: Array<{ kind: string; id: string }>;
}

/** A kind of actor, as registered. Every function receives the actor it is about. */
export interface ActorKind<A extends HostedActor> {
  readonly kind: string;
  /** The kind's XState machine (the viewer draws it; the inspection stream names its states). */
  readonly machine?: AnyStateMachine;
  readonly policy: ActorPolicy;
  /** Loads an actor from storage; undefined when there is none with this id (→ notFound). */
  hydrate(id: string): Promise<A | undefined>;
  /** The error a lookup of an unknown id answers. Default: 404 NOT_FOUND. */
  notFound?(id: string): Error;
  /** Busy actors are never shed or evicted (a running turn, a firing schedule). */
  busy(actor: A): boolean;
  /** Extra eviction condition beyond not busy (e.g. no live subscriber). Default: true. */
  evictable?(actor: A): boolean;
  /** Drops the actor's live parts, keeping its persisted state (optional). */
  shed?(actor: A): void;
  /** Flushes pending writes and stops the actor (eviction and close). */
  stop(actor: A): Promise<void>;
  /** At shutdown, before stop: interrupt work, end streams, wait until settled. */
  quiesce?(actor: A): Promise<void>;
  /** State value, labels and time in state for the viewer. */
  describe(actor: A): ActorFacts;
  /**
   * On a cluster node, after this node took the actor's lease over from a node whose term ran out: resumes
   * the work the dead owner left running (a mob's flow runs, a binding's recovery rules). Optional.
   */
  takenOver?(id: string): Promise<void>;
  /**
   * On a cluster node at shutdown: true keeps the actor's lease (left to expire) instead of releasing it,
   * so that another node takes the actor over and resumes the work it left (a mob's parked flow runs).
   */
  keepLease?(actor: A): boolean;
  /**
   * True: commands sent with `deliver()` run one at a time per actor, in arrival order. False: they
   * run as they arrive (the kind's machine decides what may overlap, e.g. a session rejects a second turn).
   */
  readonly serialized?: boolean;
}

/**
 * Where actors may live when several nodes share one realm (actors/cluster/): asked before an actor is
 * hydrated here (throws when another node hosts it), told once an actor left this node.
 */
export interface ActorOwnership {
  claim(kind: string, id: string): Promise<void>;
  release(kind: string, id: string): Promise<void> | void;
}

/** How often the whole table of a kind is scanned for idle actors to evict. */
const EVICT_SWEEP_MS = 10_000;

/** The live actors of one kind. Obtained from ActorRegistry.register(). */
export class KindTable<A extends HostedActor> {
  private readonly actors = new Map<string, A>();
  private readonly hydrating = new Map<string, Promise<A>>();
  /** Evicted actors whose last writes are still being flushed; a re-hydration waits for them. */
  private readonly stopping = new Map<string, Promise<void>>();
  /** Actors used since the last sweep that may still hold live parts (only these are visited to shed). */
  private readonly recent = new Set<A>();
  private readonly mailboxes = new Map<string, Promise<unknown>>();
  private lastEvictSweep = 0;
  /** The registry's own time-in-state clocks, for kinds whose describe() gives no sinceMs. */
  private readonly clocks = new WeakMap<A, StateClock>();
  closed = false;

  constructor(
    readonly def: ActorKind<A>,
    private readonly log: Logger,
    private readonly owner: () => ActorOwnership | null = () => null,
    private readonly now: () => number = Date.now,
  ) {}

  get kind(): string {
    return this.def.kind;
  }

  get residentCount(): number {
    return this.actors.size;
  }

  /** The resident actors, least recently used first. */
  resident(): IterableIterator<A> {
    return this.actors.values();
  }

  /** The live actor (hydrated from storage on first use; concurrent callers share one hydration). */
  async get(id: string): Promise<A> {
    const live = this.actors.get(id);
    if (live) {
      // Map order is the LRU order.
      this.actors.delete(id);
      this.actors.set(id, live);
      this.recent.add(live);
      return live;
    }
    let pending = this.hydrating.get(id);
    if (!pending) {
      pending = this.hydrate(id).finally(() => this.hydrating.delete(id));
      this.hydrating.set(id, pending);
    }
    return pending;
  }

  /** The resident actor, without hydrating. */
  peek(id: string): A | undefined {
    return this.actors.get(id);
  }

  /** Registers an actor made outside hydration (a freshly created one). */
  adopt(actor: A): A {
    this.insert(actor);
    return actor;
  }

  /** Drops an actor from the table (after archive or delete); its writes are flushed in the background. */
  forget(id: string): void {
    const actor = this.actors.get(id);
    if (actor) this.evict(actor);
  }

  /**
   * Runs a command on the actor. For serialized kinds, commands to one actor run one at a time in
   * arrival order (the actor's mailbox); a failing command does not block the next.
   */
  async deliver<R>(id: string, command: (actor: A) => Promise<R> | R): Promise<R> {
    if (!this.def.serialized) return command(await this.get(id));
    const previous = this.mailboxes.get(id) ?? Promise.resolve();
    const run = previous.then(async () => command(await this.get(id)));
    const tail = run.then(
      () => undefined,
      () => undefined,
    );
    this.mailboxes.set(id, tail);
    tail
      .then(() => {
        if (this.mailboxes.get(id) === tail) this.mailboxes.delete(id);
      })
      .catch((err: unknown) => this.log.error({ err, kind: this.def.kind, id }, 'mailbox cleanup failed'));
    return run;
  }

  /** A description of each resident actor, for the viewer. */
  describe(): ActorDescription[] {
    const out: ActorDescription[] = [];
    for (const actor of this.actors.values()) out.push(this.descriptionOf(actor));
    return out;
  }

  /** The description of one resident actor (never hydrating it). */
  describeOne(id: string): ActorDescription | undefined {
    const actor = this.actors.get(id);
    return actor ? this.descriptionOf(actor) : undefined;
  }

  private descriptionOf(actor: A): ActorDescription {
    const { state, labels, sinceMs, members } = this.def.describe(actor);
    let since = sinceMs;
    if (since === undefined) {
      const now = this.now();
      let clock = this.clocks.get(actor);
      if (!clock) this.clocks.set(actor, (clock = new StateClock(state, now)));
      since = clock.sinceMs(state, now);
    }
    const d: ActorDescription = { kind: this.def.kind, id: actor.id, state, labels: labels ?? {}, sinceMs: since };
    if (members) d.members = members;
    return d;
  }

  private async hydrate(id: string): Promise<A> {
    if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down');
    // Reading storage before an evicted actor's queued writes land would resurrect stale state.
    const stopping = this.stopping.get(id);
    if (stopping) await stopping;
    const owner = this.owner();
    if (owner) await owner.claim(this.def.kind, id);
    let actor: A | undefined;
    try {
      actor = await this.def.hydrate(id);
    } finally {
      if (owner && !actor) await owner.release(this.def.kind, id);
    }
    if (!actor) throw this.def.notFound?.(id) ?? new ServiceError('NOT_FOUND', `${this.def.kind} not found: ${id}`, { id });
    this.insert(actor);
    return actor;
  }

  private insert(actor: A): void {
    this.actors.set(actor.id, actor);
    this.recent.add(actor);
    if (this.actors.size > this.def.policy.maxResident) this.evictLru(this.actors.size - this.def.policy.maxResident);
  }

  private evictLru(count: number): void {
    for (const actor of this.actors.values()) {
      if (count <= 0) break;
      if (this.evictable(actor)) {
        this.evict(actor);
        count--;
      }
    }
  }

  private evictable(actor: A): boolean {
    return !this.def.busy(actor) && (this.def.evictable?.(actor) ?? true);
  }

  private evict(actor: A): void {
    const id = actor.id;
    this.actors.delete(id);
    this.recent.delete(actor);
    const done: Promise<void> = this.def
      .stop(actor)
      .catch((err) => this.log.error({ err, kind: this.def.kind, id }, 'evict flush failed'))
      .then(() => this.owner()?.release(this.def.kind, id))
      .finally(() => {
        if (this.stopping.get(id) === done) this.stopping.delete(id);
      });
    this.stopping.set(id, done);
  }

  /**
   * Sheds the live parts of recently used actors that went quiet (only those are visited, so a sweep
   * costs the working set, not the table), and every EVICT_SWEEP_MS evicts long-idle actors.
   */
  sweep(now: number): void {
    const { shedAfterMs, idleEvictMs } = this.def.policy;
    const shed = this.def.shed;
    if (shed && shedAfterMs !== undefined) {
      const shedCutoff = now - shedAfterMs;
      for (const actor of this.recent) {
        if (actor.lastUsedMs >= shedCutoff || this.def.busy(actor)) continue;
        shed(actor);
        this.recent.delete(actor);
      }
    } else this.recent.clear();
    if (now - this.lastEvictSweep < Math.min(idleEvictMs, EVICT_SWEEP_MS)) return;
    this.lastEvictSweep = now;
    const cutoff = now - idleEvictMs;
    // Deleting the current entry while iterating a Map is safe.
    for (const actor of this.actors.values()) {
      if (actor.lastUsedMs < cutoff && this.evictable(actor)) this.evict(actor);
    }
  }

  /** Quiesces and stops every resident actor, then waits for evicted ones still flushing. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.actors.values()];
    await Promise.all(
      all.map(async (a) => {
        await this.def.quiesce?.(a);
        await this.def.stop(a);
        if (!this.def.keepLease?.(a)) await this.owner()?.release(this.def.kind, a.id);
      }),
    );
    await Promise.all([...this.stopping.values()]);
    this.actors.clear();
    this.recent.clear();
  }
}

/** Every kind's table, one sweep timer for all of them, and graceful close. */
export class ActorRegistry {
  private readonly tables = new Map<string, KindTable<HostedActor>>();
  /** Each registered kind's machine, by kind (a live map: kinds registered later appear in it). */
  readonly machines = new Map<string, AnyStateMachine>();
  private sweeper: NodeJS.Timeout | null = null;
  /** Set on a cluster node (actors/cluster/cluster-node.ts); null on a single node. */
  ownership: ActorOwnership | null = null;
  private sweepEveryMs = Infinity;
  private closed = false;

  constructor(private readonly opts: { now(): number; log: Logger }) {}

  /** Registers a kind; returns its typed table. A kind name registers once. */
  register<A extends HostedActor>(def: ActorKind<A>): KindTable<A> {
    if (this.closed) throw new Error('actor registry is closed');
    if (this.tables.has(def.kind)) throw new Error(`actor kind registered twice: ${def.kind}`);
    const table = new KindTable<A>(def, this.opts.log, () => this.ownership, this.opts.now);
    this.tables.set(def.kind, table as unknown as KindTable<HostedActor>);
    if (def.machine) this.machines.set(def.kind, def.machine);
    const { idleEvictMs, shedAfterMs } = def.policy;
    const every = Math.max(500, Math.min(idleEvictMs, shedAfterMs ?? Infinity, 30_000));
    if (every < this.sweepEveryMs) {
      this.sweepEveryMs = every;
      if (this.sweeper) clearInterval(this.sweeper);
      this.sweeper = setInterval(() => this.sweep(), every);
      this.sweeper.unref();
    }
    return table;
  }

  /** Drops a live actor whose ownership moved to another node (its writes would be refused anyway). */
  drop(kind: string, id: string): void {
    this.tables.get(kind)?.forget(id);
  }

  /** Hydrates an actor here (a cluster node adopting one whose owner died); its kind's errors propagate. */
  async wake(kind: string, id: string): Promise<void> {
    await this.tables.get(kind)?.get(id);
  }

  /** Tells the actor's kind that this node took its lease over (ActorKind.takenOver). */
  async takenOver(kind: string, id: string): Promise<void> {
    await this.tables.get(kind)?.def.takenOver?.(id);
  }

  /** Registered kind names, in registration order. */
  kinds(): string[] {
    return [...this.tables.keys()];
  }

  /** Live actors of one kind (or of every kind), for the viewer. */
  list(kind?: string): ActorDescription[] {
    if (kind !== undefined) return this.tables.get(kind)?.describe() ?? [];
    return [...this.tables.values()].flatMap((t) => t.describe());
  }

  /** One resident actor's description (never hydrating it). */
  describe(kind: string, id: string): ActorDescription | undefined {
    return this.tables.get(kind)?.describeOne(id);
  }

  /** @internal runs every kind's shed/evict pass now (the interval timer calls it too) */
  sweep(): void {
    const now = this.opts.now();
    for (const table of this.tables.values()) table.sweep(now);
  }

  /** Stops the sweeper and closes every kind (in reverse registration order, newest kinds first). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const table of this.tables.values()) table.closed = true;
    for (const table of [...this.tables.values()].reverse()) await table.close();
  }
}
