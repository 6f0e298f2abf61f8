// actors/supervisor.ts: the registry of live session actors. Hydrates an actor from storage on its
// first message (deduplicating concurrent hydrations), evicts idle ones so memory follows the working
// set rather than the number of stored sessions, and answers the session health probes.
import { ServiceError } from '../contracts/errors.ts';
import type { SessionRecord } from '../storage/store.ts';
import { RequestRegistry } from './request-registry.ts';
import { SessionActor } from './session-actor.ts';
import type { SessionDeps } from './session-types.ts';

export interface SupervisorOptions {
  /** An idle actor with no subscribers is evicted after this long (ms). */
  idleEvictMs: number;
  /** An idle session sheds its live actor, hub and writer after this long (ms), keeping its snapshot. */
  shedAfterMs: number;
  /** Upper bound on resident actors; the least recently used idle ones go first. */
  maxResident: number;
  /** A turn running longer than this counts against session_run_start health. */
  overdueRunMs: number;
}

/** How often the whole registry is scanned for idle actors to evict. */
const EVICT_SWEEP_MS = 10_000;

export class Supervisor {
  readonly requests = new RequestRegistry();
  private readonly actors = new Map<string, SessionActor>();
  private readonly hydrating = new Map<string, Promise<SessionActor>>();
  /** Evicted actors whose last writes are still being flushed; a re-hydration waits for them. */
  private readonly stopping = new Map<string, Promise<void>>();
  private readonly sweeper: NodeJS.Timeout;
  /** Actors used since the last sweep that may still hold a live machine, hub or writer. */
  private readonly recent = new Set<SessionActor>();
  private lastEvictSweep = 0;
  private closed = false;

  constructor(readonly deps: SessionDeps, private readonly opts: SupervisorOptions) {
    this.sweeper = setInterval(() => this.sweep(), Math.max(500, Math.min(opts.idleEvictMs, opts.shedAfterMs, 30_000)));
    this.sweeper.unref();
  }

  get residentCount(): number {
    return this.actors.size;
  }

  /**
   * Creation writes still in flight. A first turn's model call starts without waiting for its
   * creation to be durable; listings wait for these so a session is listed once its turn has begun.
   */
  private readonly creations = new Set<Promise<void>>();

  noteCreation(write: Promise<void>): void {
    const tracked = write.then(() => undefined, () => undefined);
    this.creations.add(tracked);
    void tracked.then(() => this.creations.delete(tracked));
  }

  /** Resolves once every creation write started so far has settled. */
  async creationsSettled(): Promise<void> {
    if (this.creations.size) await Promise.all([...this.creations]);
  }

  /** Registers a freshly created session actor. */
  adopt(record: SessionRecord): SessionActor {
    const actor = new SessionActor(record, 0, this.deps);
    this.insert(actor);
    return actor;
  }

  /** The live actor for a session (hydrated from storage if needed). Unknown → 404 SESSION_NOT_FOUND. */
  async get(sessionId: string): Promise<SessionActor> {
    const live = this.actors.get(sessionId);
    if (live) {
      // Map order is the LRU order.
      this.actors.delete(sessionId);
      this.actors.set(sessionId, live);
      this.recent.add(live);
      return live;
    }
    let pending = this.hydrating.get(sessionId);
    if (!pending) {
      pending = this.hydrate(sessionId).finally(() => this.hydrating.delete(sessionId));
      this.hydrating.set(sessionId, pending);
    }
    return pending;
  }

  /** Like get(), but an archived session is as unknown as a missing one (404 SESSION_NOT_FOUND). */
  async getActive(sessionId: string): Promise<SessionActor> {
    const actor = await this.get(sessionId);
    if (actor.snapshotRecord.archived) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`, { session_id: sessionId });
    return actor;
  }

  /** The resident actor, without hydrating. */
  peek(sessionId: string): SessionActor | undefined {
    return this.actors.get(sessionId);
  }

  private async hydrate(sessionId: string): Promise<SessionActor> {
    if (this.closed) throw new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down');
    // Reading the record before an evicted actor's queued writes land would resurrect stale state.
    const stopping = this.stopping.get(sessionId);
    if (stopping) await stopping;
    const { store } = this.deps;
    const record = await store.getSession(sessionId);
    if (!record) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`, { session_id: sessionId });
    const lastSeq = store.persistent ? await store.lastLedgerSeq(sessionId) : 0;
    const { total } = await store.readRows(sessionId, 0, 0);
    const actor = new SessionActor(record, lastSeq, this.deps);
    // A transcript that disagrees with its committed record is quarantined, not served as if intact.
    const hold = total !== record.message_count ? 'evidence_quarantined' : null;
    if (hold) this.deps.log.error({ sessionId, rows: total, expected: record.message_count }, 'session transcript disagrees with its record');
    actor.recover(hold);
    this.insert(actor);
    return actor;
  }

  private insert(actor: SessionActor): void {
    this.actors.set(actor.id, actor);
    this.recent.add(actor);
    if (this.actors.size > this.opts.maxResident) this.evictLru(this.actors.size - this.opts.maxResident);
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

  private evictable(actor: SessionActor): boolean {
    return !actor.isRunning() && actor.subscriberCount === 0;
  }

  private evict(actor: SessionActor): void {
    const id = actor.id;
    this.actors.delete(id);
    this.recent.delete(actor);
    const done: Promise<void> = actor.stop()
      .catch((err) => this.deps.log.error({ err, sessionId: id }, 'evict flush failed'))
      .finally(() => {
        if (this.stopping.get(id) === done) this.stopping.delete(id);
      });
    this.stopping.set(id, done);
  }

  /** Drops a session from the registry (after archive). */
  forget(sessionId: string): void {
    const actor = this.actors.get(sessionId);
    if (actor) this.evict(actor);
  }

  /**
   * Sheds the live parts of recently used sessions that went quiet (only those are visited, so a sweep
   * costs the working set, not the registry), and every EVICT_SWEEP_MS evicts long-idle actors.
   */
  /** @internal exposed for tests (the interval timer calls it too) */
  sweep(): void {
    const now = this.deps.now();
    const shedCutoff = now - this.opts.shedAfterMs;
    for (const actor of this.recent) {
      if (actor.lastUsedMs >= shedCutoff || actor.isRunning()) continue;
      actor.shed();
      this.recent.delete(actor);
    }
    if (now - this.lastEvictSweep < Math.min(this.opts.idleEvictMs, EVICT_SWEEP_MS)) return;
    this.lastEvictSweep = now;
    const cutoff = now - this.opts.idleEvictMs;
    // Deleting the current entry while iterating a Map is safe.
    for (const actor of this.actors.values()) {
      if (actor.lastUsedMs < cutoff && this.evictable(actor)) this.evict(actor);
    }
  }

  /** Measured session dimensions of GET /runtime/health: the number of bad resident sessions each. */
  health(): Record<'session_liveness' | 'session_durability' | 'session_run_start' | 'session_runtime_loop', number> {
    let liveness = 0;
    let durability = 0;
    let runStart = 0;
    let loop = 0;
    const overdue = this.deps.now() - this.opts.overdueRunMs;
    for (const a of this.actors.values()) {
      const st = a.status().state;
      if (st === 'held') liveness++;
      if (a.ledgerHalted) durability++;
      if (a.isRunning() && a.lastUsedMs < overdue) runStart++;
      if (a.machineFailed()) loop++;
    }
    return { session_liveness: liveness, session_durability: durability, session_run_start: runStart, session_runtime_loop: loop };
  }

  /** Interrupts running turns, closes streams, flushes writers. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.actors.values()];
    for (const a of all) {
      a.interrupt();
      a.closeStreams('shutdown');
    }
    await Promise.all(all.map(async (a) => {
      await a.whenSettled();
      await a.stop();
    }));
    // Evicted actors still flushing must finish before the store closes.
    await Promise.all([...this.stopping.values()]);
    this.actors.clear();
    this.recent.clear();
  }
}
