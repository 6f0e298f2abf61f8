// actors/session/session-core.ts: a session's record, persisted state and persistence, with its live parts made
// lazily. The XState actor, the event hub and the writer exist only while the session is in use: an idle
// session can shed them (the actor registry's sweep) and is then held as its record plus the machine's
// persisted snapshot, which wakes into a live actor on the next event. SessionActor (session-actor.ts)
// composes one and adds the commands; this file also provides the machine's `startTurn`/`stopTurn` actions.
import { createActor, type ActorRefFrom } from 'xstate';
import type { Logger } from 'pino';
import type { Message } from '../../contracts/transcript.ts';
import {
  restingSnapshot,
  sessionMachine,
  type HoldClass,
  type SessionContext,
  type SessionEmitted,
} from '../../machines/session-machine.ts';
import type { SessionRecord, StoreOp } from '../../storage/store.ts';
import { EventHub, type HubEntry } from '../event-hub.ts';
import { StateClock } from '../state-clock.ts';
import type { TurnProgress } from './turn-progress.ts';
import { SessionWriter } from './session-writer.ts';
import { SESSION_KIND, type PersistedState, type SessionDeps, type SessionSettings } from './session-types.ts';

/** The turn in flight of each live session machine: the controller `stopTurn` aborts. */
const inFlight = new WeakMap<object, AbortController>();

/**
 * The session machine with its turn attached, provided once per process: entering `running` starts the
 * turn's work (built by SessionActor for each accepted request) with the new generation; its end comes
 * back as turn.done / turn.failed. Leaving `running` first (recovery) aborts it.
 */
const liveSessionMachine = sessionMachine.provide({
  actions: {
    startTurn: ({ context, event, self }) => {
      if (event.type !== 'turn.requested') return;
      const { generation } = context;
      const controller = new AbortController();
      inFlight.set(self, controller);
      const ended = () => {
        if (inFlight.get(self) === controller) inFlight.delete(self);
      };
      // Started once this transition is applied (XState runs custom actions while it computes the next
      // snapshot): the work sees the machine already in `running`, as an invoked actor would.
      // A work that throws at once fails the turn like one that rejects.
      Promise.resolve(generation)
        .then((g) => event.work.run(g, controller.signal))
        .then(
          (output) => {
            ended();
            self.send({ type: 'turn.done', generation, output });
          },
          (error: unknown) => {
            ended();
            self.send({ type: 'turn.failed', generation, error });
          },
        );
    },
    stopTurn: ({ self }) => {
      const controller = inFlight.get(self);
      if (!controller) return;
      inFlight.delete(self);
      controller.abort();
    },
  },
});

type MachineRef = ActorRefFrom<typeof liveSessionMachine>;
type PersistedMachine = ReturnType<MachineRef['getPersistedSnapshot']>;

export class SessionCore {
  record: SessionRecord;
  state: PersistedState;
  readonly log: Logger;
  private live: MachineRef | null = null;
  private liveHub: EventHub | null = null;
  private liveWriter: SessionWriter | null = null;
  /**
   * The committed transcript while the session is awake (set after a turn commit, dropped by any other
   * row write and by shedding), so consecutive turns do not re-read and re-decode the whole history.
   */
  private rowsCache: Message[] | null = null;
  /** Ledger high-water mark while the hub is shed. */
  private lastSeq: number;
  lastUsedMs: number;
  /** When the machine entered its current state (the viewer's time in state). */
  private readonly clock: StateClock;
  /** The running turn's live progress (model call, pending tools) for the viewer; null between turns. */
  progress: TurnProgress | null = null;

  constructor(
    record: SessionRecord,
    lastSeq: number,
    readonly deps: SessionDeps,
    /** Receives the machine's decisions (turn.rejected, turn.finished, turn.failed). */
    private readonly onDecision: (e: SessionEmitted) => void,
  ) {
    this.record = record;
    this.state = record.state as PersistedState;
    this.log = deps.log;
    this.lastSeq = lastSeq;
    this.lastUsedMs = deps.now();
    // A session loaded at rest has been in its state at least since its record's last write.
    this.clock = new StateClock(this.view().value, Math.min(record.updated_at_ms, this.lastUsedMs));
  }

  /** The live XState actor, woken from the persisted snapshot when shed. */
  get machine(): MachineRef {
    if (!this.live) {
      const snapshot = (this.state.machine ?? undefined) as PersistedMachine | undefined;
      const actor = createActor(liveSessionMachine, { input: { sessionId: this.record.session_id }, ...(snapshot ? { snapshot } : {}) });
      // Hazard 2 (dependencies.md): an actor error with no observer becomes an uncaughtException.
      actor.subscribe({
        next: (snap) => this.clock.note(snap.value, this.deps.now()),
        error: (err) => this.log.error({ err, sessionId: this.id }, 'session machine error'),
      });
      actor.on('turn.rejected', this.onDecision);
      actor.on('turn.finished', this.onDecision);
      actor.on('turn.failed', this.onDecision);
      this.deps.observer?.machineCreated?.(SESSION_KIND, this.id, actor);
      actor.start();
      this.live = actor;
    }
    return this.live;
  }

  get hub(): EventHub {
    if (!this.liveHub) {
      const writer = this.writer;
      const observer = this.deps.observer;
      const observe = observer?.sessionEvent ? (e: HubEntry) => observer.sessionEvent!(this, e) : null;
      // Memory realms have no writer: their outbox entries are committed on their own as events happen.
      const outbox = writer ? undefined : this.deps.ledgerOutbox;
      const tap = outbox
        ? (e: HubEntry) => {
            observe?.(e);
            this.volatileOutbox(e);
          }
        : observe;
      this.liveHub = new EventHub(this.id, this.lastSeq, writer ? (e) => writer.appendEvent(e) : null, this.deps.now, tap);
    }
    return this.liveHub;
  }

  /** The chained writer (persistent realms only). */
  get writer(): SessionWriter | null {
    if (!this.liveWriter && this.deps.store.persistent) {
      const tap = this.deps.ledgerOutbox;
      const outbox = tap ? { tap, labels: () => this.record.labels } : null;
      this.liveWriter = new SessionWriter(this.deps.store, this.id, (entries) => this.hub.deliver(entries), this.log, outbox);
    }
    return this.liveWriter;
  }

  get id(): string {
    return this.record.session_id;
  }

  /** Memory realms: commits an event's outbox entries at once (nothing is durable there anyway). */
  private volatileOutbox(e: HubEntry): void {
    const outbox = this.deps.ledgerOutbox;
    const ops = outbox?.opsFor({ id: this.id, labels: this.record.labels }, [e]) ?? [];
    if (!outbox || ops.length === 0) return;
    this.deps.store.commit(ops).then(
      () => outbox.committed(ops),
      (err: unknown) => this.log.error({ err, sessionId: this.id }, 'outbox write failed'),
    );
  }

  get snapshotRecord(): SessionRecord {
    return this.record;
  }

  get settings(): SessionSettings {
    return this.state.settings;
  }

  get revision(): number {
    return this.state.revision;
  }

  /** The machine's state without waking it. */
  private view(): { value: unknown; context: SessionContext; status: string } {
    if (this.live) return this.live.getSnapshot();
    const persisted = this.state.machine as { value: unknown; context: SessionContext; status: string } | null;
    return persisted ?? { value: 'idle', context: { hold: null } as SessionContext, status: 'active' };
  }

  /** The machine's state value without waking it (for the viewer's actor list). */
  stateValue(): unknown {
    return this.view().value;
  }

  /** 'idle' | 'running' | 'held' | 'archived', plus the running sub-step and the busy-policy queue. */
  status(): { state: string; phase?: string; hold?: HoldClass; followUps?: { queued: number; steering: number } } {
    const { value, context } = this.view();
    const queued = context.queued ?? 0;
    const steering = context.steering ?? 0;
    const followUps = queued + steering > 0 ? { followUps: { queued, steering } } : {};
    // Between two queued follow-up turns the session is still busy (busy policies, actors/busy).
    if (value === 'draining') return { state: 'running', phase: 'draining', ...followUps };
    if (typeof value === 'string') return context.hold ? { state: value, hold: context.hold } : { state: value };
    return { state: 'running', phase: (value as { running: string }).running, ...followUps };
  }

  /** When the machine entered its current state (epoch ms). */
  stateSinceMs(): number {
    return this.clock.sinceMs(this.view().value, this.deps.now());
  }

  isRunning(): boolean {
    const { value } = this.view();
    return typeof value === 'object' && value !== null && 'running' in value;
  }

  isIdle(): boolean {
    return this.view().value === 'idle';
  }

  /** True when the live machine stopped on an error (runtime-loop health). */
  machineFailed(): boolean {
    return this.live !== null && this.live.getSnapshot().status !== 'active';
  }

  /** True when no live machine, hub or writer is held (only the record and its snapshot). */
  get dormant(): boolean {
    return this.live === null && this.liveHub === null && this.liveWriter === null;
  }

  /** Writes queued and not yet durable, plus the running turn: what waits on this actor. */
  get mailboxDepth(): number {
    return (this.isRunning() ? 1 : 0) + (this.liveWriter?.backlog ?? 0);
  }

  /** The live XState actor if awake (never wakes it; the inspector attaches to it). */
  get liveMachine(): MachineRef | null {
    return this.live;
  }

  get subscriberCount(): number {
    return this.liveHub?.subscriberCount ?? 0;
  }

  get ledgerHalted(): boolean {
    return this.liveWriter?.halted ?? false;
  }

  /** Restore path: a snapshot persisted mid-turn comes back resumable or held (never re-runs the call). */
  recover(hold: HoldClass | null): void {
    // A turn in flight is marked by its pending input (its snapshot stays the one at rest); a snapshot
    // persisted in `running` (older data) means the same.
    const wasRunning = this.isRunning() || this.state.pending !== undefined;
    // A snapshot shed while draining claims follow-ups: the durable queue decides them (actors/busy).
    const draining = this.view().value === 'draining';
    if (!wasRunning && !hold && !draining) return;
    if (this.isRunning() || hold || draining) this.machine.send({ type: 'recovery.detected', hold });
    if (wasRunning) this.log.warn({ sessionId: this.id, requestId: this.state.pending?.request_id, hold }, 'turn interrupted by restart');
    delete this.state.pending;
  }

  /** The committed transcript; earlier writes (a previous turn, a system-context append) land first. */
  async readCommitted(): Promise<{ rows: Message[]; total: number }> {
    const cached = this.rowsCache;
    if (cached && cached.length === this.record.message_count) return { rows: cached, total: cached.length };
    await this.liveWriter?.flushed();
    return this.deps.store.readRows(this.id);
  }

  /**
   * Persists the current record (creation and state changes), with optional extra ops, in one write.
   * `machineSnapshot` overrides the persisted machine (undefined: the live machine's, if awake).
   */
  persist(extra: StoreOp[] = [], machineSnapshot?: unknown, deferMs = 0): Promise<void> {
    if (this.abandoned !== undefined) return Promise.reject(this.abandoned);
    if (extra.some((op) => op.op === 'putRows' || op.op === 'truncateRows')) this.rowsCache = null;
    const ops: StoreOp[] = [{ op: 'putSession', session: this.freshRecord(machineSnapshot) }, ...extra];
    const writer = this.writer;
    if (!writer) return this.deps.store.commit(ops);
    // deferMs: the write may wait that long for the next one to share its transaction (session-writer.ts).
    return deferMs > 0 ? writer.commitDeferred(ops, deferMs) : writer.commit(ops);
  }

  /** Issues a deferred write now (before anything with effects outside the store, e.g. a tool call). */
  releaseDeferred(): void {
    this.liveWriter?.release();
  }

  /** The creation write failed: the session never existed, so nothing of it may be written later. */
  abandon(err: unknown): void {
    this.abandoned = err ?? new Error('session creation failed');
    this.liveWriter?.abandon(this.abandoned);
  }

  private abandoned: unknown = undefined;

  private freshRecord(machineSnapshot?: unknown): SessionRecord {
    // Snapshots are persisted at rest only (dependencies.md hazard 3): while a turn runs, the last
    // resting snapshot stays (the pending input marks the turn as in flight).
    if (machineSnapshot !== undefined) this.state.machine = machineSnapshot;
    else if (this.live && !this.isRunning()) this.state.machine = this.live.getPersistedSnapshot();
    // The queued record gets its own copy of the state: later in-place edits (e.g. clearing the
    // pending input) must not reach a write that the store has not encoded yet.
    this.record = { ...this.record, updated_at_ms: this.deps.now(), state: { ...this.state } };
    return this.record;
  }

  /** Remembers the committed transcript after a turn commit (see rowsCache). */
  cacheRows(rows: Message[]): void {
    this.rowsCache = rows;
  }

  /**
   * The persisted form of the machine as it will be once the running turn ends (done or failed): what
   * a turn's last write stores, since the machine reaches that state only after the write is durable.
   */
  restingSnapshot(): unknown {
    return restingSnapshot(this.machine.getSnapshot().context);
  }

  /**
   * Drops the live actor, hub and writer of a quiet session (no turn, no subscriber, nothing queued),
   * keeping the persisted snapshot. Returns whether anything was shed.
   */
  shed(): boolean {
    if (this.isRunning()) return false;
    let shed = false;
    if (this.live) {
      this.state.machine = this.live.getPersistedSnapshot();
      this.record = { ...this.record, state: { ...this.state } };
      this.live.stop();
      this.live = null;
      this.rowsCache = null;
      shed = true;
    }
    // The hub and writer go only when nothing would be lost (a memory realm's replay ring stays).
    if (this.liveHub?.quiet && (!this.liveWriter || this.liveWriter.idle)) {
      this.lastSeq = this.liveHub.lastSeq;
      this.liveHub = null;
      this.liveWriter = null;
      shed = true;
    } else if (!this.liveHub && this.liveWriter?.idle) {
      this.liveWriter = null;
      shed = true;
    }
    return shed;
  }

  /** Ends every live event stream of this session (archive, shutdown). */
  closeStreams(reason: 'archived' | 'shutdown'): void {
    this.liveHub?.closeAll(reason);
  }

  /** Flushes pending writes and stops the machine (eviction or shutdown). */
  async stop(): Promise<void> {
    await this.liveWriter?.flushed();
    this.live?.stop();
  }
}
