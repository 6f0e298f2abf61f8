// actors/session/session-actor.ts: one session's commands: turns, interrupt, archive and state mutations. A turn
// request goes to the session machine, which decides busy and starts the turn's work defined here (the
// model/tool loop through turn-runner.ts, then one durable commit); its end comes back as an emitted
// event. Session IO lives here and in session-core.ts (composed); http/handlers never touch it directly.
import { busyOnCreate, durableResumeHold, ServiceError, sessionNotFound } from '../../contracts/errors.ts';
import type { ContentInput, Message } from '../../contracts/transcript.ts';
import type { HoldClass, SessionEmitted, TurnOutcome, TurnWork, Verdict } from '../../machines/session-machine.ts';
import type { SessionRecord, StoreOp } from '../../storage/store.ts';
import { SessionCore } from './session-core.ts';
import type { AgeCheck } from '../ledger-retention.ts';
import { projectForProvider } from './turn-runner.ts';
import { beginTurn, callModel, commitTurn, failTurn, PENDING_DEFER_MS, type ModelPass, type TurnRun } from './turn-steps.ts';
import type { ExtraOutcome, RunFeatures, RunPlan } from '../turn-features/run-features.ts';
import { extendHistory } from '../compaction-policy.ts';
import type { PersistedState, SessionDeps, SessionSettings } from './session-types.ts';

export type { TurnOutcome };

export { PENDING_DEFER_MS };

/** What a caller asks a turn to do (create's first turn or a continue). */
export interface TurnCommand {
  requestId: string;
  kind: 'create' | 'continue';
  prompt: ContentInput;
  injectedContext?: ContentInput[] | null;
  transientContext?: string | null;
  /** The transcript when the caller already knows it (a new session), so the turn need not read it. */
  knownHistory?: Message[];
  /** Continue only: appends one System message at this turn boundary. */
  systemAppend?: string | null;
  /** Continue only: model/provider/max_tokens hot-swap, applied only once the machine accepts the turn. */
  settingsPatch?: Partial<SessionSettings>;
  /** Structured output, retries and hook overrides, checked before the turn (actors/turn-features). */
  plan?: RunPlan;
  signal: AbortSignal;
  /** Called when the turn enters its commit (cancel can no longer stop it). */
  onCommitting(): void;
  /** Extension hooks (detached turns): ops that ride the turn's own writes. */
  hooks?: TurnHooks;
  /** Stored on the user row (a scheduled turn's occurrence marker). */
  identity?: { idempotency_key?: string; source?: string };
  /** Called once the machine accepted the turn. */
  onAdmitted?: () => void;
  /** Extra store ops committed atomically with the turn (asked at commit time: inbox deletions). */
  commitOps?: () => StoreOp[];
  /** Steering input injected before each later model call of this turn. */
  pullSteer?: () => ContentInput[];
  /** A follow-up from the session's queue (busy_policy enqueue): admitted between queued turns. */
  followUp?: boolean;
  /** The request's `verbose`: every event published while the turn runs is logged at info. */
  verbose?: boolean;
}

/** Ops that ride a turn's writes: its pending-input write, its commit, or its failure write. */
export interface TurnHooks {
  /** Ops for the pending-input write; `firstSeq` is the seq the turn's run_started event gets. */
  pendingOps?(sessionId: string, firstSeq: number): StoreOp[];
  /** The pending-input write is durable. */
  onPendingDurable?(): void;
  commitOps?(outcome: TurnOutcome): StoreOp[];
  failOps?(err: unknown, cancelled: boolean): StoreOp[];
}

/** The caller of one turn request, answered from the machine's decisions. */
interface Waiter {
  ticket: number;
  kind: 'create' | 'continue';
  generation: number;
  resolve(outcome: TurnOutcome): void;
  reject(err: unknown): void;
}

/**
 * A live session: its SessionCore (record, state, persistence, lazily made machine, hub and writer) plus
 * the commands. A turn request goes to the machine, which rejects it (busy, held, archived) or starts
 * the request's work (below: the model/tool loop, then one durable commit) and reports its end.
 */
export class SessionActor {
  readonly core: SessionCore;
  private abort: AbortController | null = null;
  /** The request being offered to the machine (a rejection is emitted synchronously during send). */
  private admitting: Waiter | null = null;
  /** The accepted turn's caller. */
  private current: Waiter | null = null;
  private tickets = 0;
  private settledTurn: Promise<void> = Promise.resolve();
  private settle: () => void = () => {};
  /** When the ledger's age pruning next needs a look (ledger-retention.ts). */
  private readonly ledgerAge: AgeCheck;

  constructor(record: SessionRecord, lastSeq: number, deps: SessionDeps) {
    this.core = new SessionCore(record, lastSeq, deps, (e) => this.decided(e));
    // No event of a session predates its creation (an hour of margin for clocks set back).
    this.ledgerAge = { oldestMs: record.created_at_ms - 3_600_000 };
  }

  /** Runs one turn: the machine decides busy and starts the turn, then answers with its outcome. */
  runTurn(cmd: TurnCommand): Promise<TurnOutcome> {
    const { core } = this;
    core.lastUsedMs = core.deps.now();
    return new Promise<TurnOutcome>((resolve, reject) => {
      const waiter: Waiter = { ticket: ++this.tickets, kind: cmd.kind, generation: -1, resolve, reject };
      const work: TurnWork = { run: (generation, signal) => this.executeTurn(cmd, waiter, generation, signal) };
      this.admitting = waiter;
      try {
        core.machine.send({
          type: 'turn.requested',
          requestId: cmd.requestId,
          ticket: waiter.ticket,
          work,
          ...(cmd.followUp ? { queued: true } : {}),
        });
      } finally {
        this.admitting = null;
      }
    });
  }

  /** The machine's decisions: a rejected request, or the end of the running turn (then at rest). */
  private decided(e: SessionEmitted): void {
    if (e.type === 'turn.rejected') {
      const w = this.admitting;
      if (w && w.ticket === e.ticket) w.reject(this.rejection(e.verdict, w.kind));
      return;
    }
    const w = this.current;
    if (!w || w.generation !== e.generation) return;
    this.current = null;
    if (e.type === 'turn.finished') w.resolve(e.output);
    else w.reject(e.error);
    this.settle();
    this.core.deps.followUps?.turnEnded(this.core.id, e.type === 'turn.finished' ? { outcome: e.output } : { error: e.error });
  }

  /** The turn's work (started by the machine's startTurn action): runs with the machine's generation and abort signal (stopped on recovery). */
  private async executeTurn(cmd: TurnCommand, waiter: Waiter, generation: number, machineSignal: AbortSignal): Promise<TurnOutcome> {
    const { core } = this;
    waiter.generation = generation;
    this.current = waiter;
    this.settledTurn = new Promise<void>((r) => (this.settle = r));
    // Only an accepted turn may change the session: a rejected (busy) continue must not hot-swap the model.
    if (cmd.settingsPatch) Object.assign(core.state.settings, cmd.settingsPatch);
    cmd.onAdmitted?.();
    const abort = new AbortController();
    this.abort = abort;
    const onExternalAbort = () => abort.abort(cmd.signal.reason);
    const onMachineAbort = () => abort.abort(machineSignal.reason);
    if (cmd.signal.aborted) abort.abort(cmd.signal.reason);
    else cmd.signal.addEventListener('abort', onExternalAbort, { once: true });
    machineSignal.addEventListener('abort', onMachineAbort, { once: true });
    const hub = core.hub;
    if (cmd.verbose)
      hub.verboseLog = (e) =>
        core.log.info(
          { sessionId: core.id, requestId: cmd.requestId, seq: e.seq, event: e.kind, payload: e.payload },
          'session event (verbose)',
        );
    const run = core.deps.turnFeatures?.begin({
      sessionId: core.id,
      requestId: cmd.requestId,
      plan: cmd.plan,
      emit: (kind, payload) => core.hub.publish(kind, payload),
      abort: (reason) => abort.abort(reason),
      signal: abort.signal,
    });
    try {
      return await this.turn(cmd, generation, abort.signal, core.deps.now(), run);
    } finally {
      if (cmd.verbose) hub.verboseLog = null;
      run?.dispose();
      cmd.signal.removeEventListener('abort', onExternalAbort);
      machineSignal.removeEventListener('abort', onMachineAbort);
      if (this.abort === abort) this.abort = null;
    }
  }

  /**
   * One turn, in named steps (actors/session/turn-steps.ts): begin (rows, pending input, run_started), the
   * model/tool loop, one durable commit, then structured-output extraction committed after it; a failure
   * at any step ends in failTurn (phases reported to the machine as it goes).
   */
  private async turn(cmd: TurnCommand, generation: number, signal: AbortSignal, started: number, run?: RunFeatures): Promise<TurnOutcome> {
    const core = this.core;
    const t = await beginTurn(core, cmd, generation, signal, started, run);
    try {
      const pass = await callModel(core, t, this.ledgerAge);
      const { outcome, rows } = await commitTurn(core, t, pass);
      core.cacheRows(extendHistory(t.history, rows));
      return await this.extractAfterCommit(t, pass, outcome, rows);
    } catch (err) {
      throw await failTurn(core, t, err);
    }
  }

  /** Structured output is extracted from the committed turn, then committed after it. */
  private async extractAfterCommit(t: TurnRun, pass: ModelPass, outcome: TurnOutcome, rows: Message[]): Promise<TurnOutcome> {
    const { core } = this;
    const { cmd, run, signal, nowIso, history, newRows } = t;
    const extra = await run?.extract({
      provider: pass.provider,
      model: pass.model,
      maxTokens: core.state.settings.max_tokens,
      committedText: pass.result.text,
      signal,
      now: nowIso,
      ...projectForProvider({ history, newRows, now: nowIso }, pass.result.producedRows),
    });
    if (extra) await this.commitExtra(extra, history.concat(rows));
    const lateRec = pass.rec?.lateOps() ?? [];
    if (lateRec.length)
      await core.persist(lateRec).catch((e) => core.log.error({ err: e, sessionId: core.id }, 'turn recording write failed'));
    const final = withExtra(outcome, extra);
    // The extension hooks' record follows the extraction result (the turn's commit carried the plain one).
    if (extra && cmd.hooks?.commitOps)
      await core.persist(cmd.hooks.commitOps(final)).catch((e) => core.log.error({ err: e, sessionId: core.id }, 'turn hook write failed'));
    return final;
  }

  /** Commits the extraction rows after the turn's own commit (the session is still busy). */
  private async commitExtra(extra: ExtraOutcome, committed: Message[]): Promise<void> {
    const { core } = this;
    if (extra.rows.length === 0) return;
    const from = core.record.message_count;
    const before = { record: core.record, revision: core.state.revision };
    core.state.revision++;
    core.record = {
      ...core.record,
      message_count: from + extra.rows.length,
      total_tokens: core.record.total_tokens + extra.usage.input_tokens + extra.usage.output_tokens,
    };
    try {
      await core.persist([{ op: 'putRows', sessionId: core.id, fromIndex: from, rows: extra.rows }], core.restingSnapshot());
      core.cacheRows(extendHistory(committed, extra.rows));
    } catch (err) {
      core.record = { ...before.record, updated_at_ms: core.record.updated_at_ms };
      core.state.revision = before.revision;
      core.log.error({ err, sessionId: core.id }, 'extraction rows could not be committed');
    }
  }

  private rejection(verdict: Verdict, kind: 'create' | 'continue'): ServiceError {
    const id = this.core.id;
    if (verdict === 'archived') return sessionNotFound(id);
    if (verdict === 'held') return durableResumeHold(id, this.core.machine.getSnapshot().context.hold ?? 'tail_held_for_recovery');
    // SPEC "Errors": busy during create maps to 400 BAD_REQUEST, a busy continue to 409 SESSION_BUSY.
    if (kind === 'create') return busyOnCreate(id);
    return new ServiceError('SESSION_BUSY', 'a turn is already running on this session', { session_id: id });
  }

  /** Stops a running turn (the machine moves to cancelling; the turn's signal aborts). Idle: a no-op. */
  interrupt(): 'interrupted' | 'staged_noop' {
    const { core } = this;
    core.lastUsedMs = core.deps.now();
    if (!core.isRunning()) return 'staged_noop';
    core.machine.send({ type: 'interrupt.requested' });
    this.abort?.abort(new ServiceError('REQUEST_CANCELLED', 'interrupted', { reason: 'interrupted' }));
    return 'interrupted';
  }

  /** Resolves when no turn is running. */
  async whenSettled(): Promise<void> {
    while (this.core.isRunning()) await this.settledTurn;
  }

  async archive(): Promise<void> {
    const { core } = this;
    // Archive drops the session's queued follow-ups (busy policies) before stopping its turn.
    core.deps.followUps?.drop(core.id);
    // A loop: another turn may be admitted between the settle and this continuation.
    while (core.isRunning()) {
      this.interrupt();
      await this.whenSettled();
    }
    core.machine.send({ type: 'archive.requested' });
    core.record = { ...core.record, archived: true, archived_at_ms: core.deps.now() };
    await core.persist();
    core.closeStreams('archived');
  }

  /** Applies a state-only mutation then persists it with optional row writes. */
  async mutate(fn: (state: PersistedState, record: SessionRecord) => { ops?: StoreOp[]; record?: Partial<SessionRecord> }): Promise<void> {
    const { core } = this;
    const { ops = [], record } = fn(core.state, core.record);
    if (record) core.record = { ...core.record, ...record };
    await core.persist(ops);
  }

  // Reads and lifecycle, answered by the composed core.
  get id(): string {
    return this.core.id;
  }
  get lastUsedMs(): number {
    return this.core.lastUsedMs;
  }
  get snapshotRecord(): SessionRecord {
    return this.core.snapshotRecord;
  }
  get settings(): SessionSettings {
    return this.core.settings;
  }
  get revision(): number {
    return this.core.revision;
  }
  get machine() {
    return this.core.machine;
  }
  get hub() {
    return this.core.hub;
  }
  get writer() {
    return this.core.writer;
  }
  get dormant(): boolean {
    return this.core.dormant;
  }
  get liveMachine() {
    return this.core.liveMachine;
  }
  get mailboxDepth(): number {
    return this.core.mailboxDepth;
  }
  get subscriberCount(): number {
    return this.core.subscriberCount;
  }
  get ledgerHalted(): boolean {
    return this.core.ledgerHalted;
  }
  status() {
    return this.core.status();
  }
  stateValue(): unknown {
    return this.core.stateValue();
  }
  stateSinceMs(): number {
    return this.core.stateSinceMs();
  }
  isRunning(): boolean {
    return this.core.isRunning();
  }
  machineFailed(): boolean {
    return this.core.machineFailed();
  }
  recover(hold: HoldClass | null): void {
    this.core.recover(hold);
  }
  persist(extra: StoreOp[] = [], deferMs = 0): Promise<void> {
    return this.core.persist(extra, undefined, deferMs);
  }
  shed(): boolean {
    return this.core.shed();
  }
  closeStreams(reason: 'archived' | 'shutdown'): void {
    this.core.closeStreams(reason);
  }
  stop(): Promise<void> {
    return this.core.stop();
  }
}

/** Adds a run's extraction turns, usage and result to its outcome (optional members omitted). */
function withExtra(out: TurnOutcome, extra: ExtraOutcome | undefined): TurnOutcome {
  if (!extra) return out;
  const input = out.usage.input_tokens + extra.usage.input_tokens;
  const output = out.usage.output_tokens + extra.usage.output_tokens;
  out.usage = { ...out.usage, input_tokens: input, output_tokens: output, total_tokens: input + output };
  out.turns += extra.turns;
  if ('structured_output' in extra) out.structured_output = extra.structured_output;
  if (extra.extraction_error) out.extraction_error = extra.extraction_error;
  if (extra.schema_warnings) out.schema_warnings = extra.schema_warnings;
  return out;
}
