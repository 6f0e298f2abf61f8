// actors/session-actor.ts: one session's commands: turns, interrupt, archive and state mutations. A turn
// request goes to the session machine, which decides busy and starts the turn's work defined here (the
// model/tool loop through turn-runner.ts, then one durable commit); its end comes back as an emitted
// event. Session IO lives here and in session-core.ts (composed); http/handlers never touch it directly.
import { busyOnCreate, durableResumeHold, isServiceError, ServiceError, sessionNotFound } from '../contracts/errors.ts';
import type { ContentInput, Message } from '../contracts/transcript.ts';
import type { HoldClass, SessionEmitted, TurnOutcome, TurnPhase, TurnWork, Verdict } from '../machines/session-machine.ts';
import type { SessionRecord, StoreOp } from '../storage/store.ts';
import { SessionCore } from './session-core.ts';
import { ledgerTrimOps, type AgeCheck } from './ledger-retention.ts';
import { projectForProvider, runTurn } from './turn-runner.ts';
import type { ExtraOutcome, RunFeatures, RunPlan } from './turn-features/run-features.ts';
import { compactAtBoundary } from './compaction-boundary.ts';
import { extendHistory } from './compaction-policy.ts';
import type { PersistedState, SessionDeps, SessionSettings } from './session-types.ts';

export type { TurnOutcome };

/**
 * How long a turn's pending-input write (and a new session's creation write) may wait for the turn's
 * commit to share one transaction. Longer turns pay a second commit; live subscribers see the turn's
 * first events at most this much later.
 */
export const PENDING_DEFER_MS = 20;

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

  /** Model/tool loop, then one durable commit (phases reported to the machine as it goes). */
  private async turn(cmd: TurnCommand, generation: number, signal: AbortSignal, started: number, run?: RunFeatures): Promise<TurnOutcome> {
    const core = this.core;
    const { deps, hub } = core;
    const settings = core.state.settings;
    const id = core.id;
    const nowIso = () => new Date(deps.now()).toISOString();
    const newRows: Message[] = [];
    // SPEC: injected-context rows sit, in order, right before the user row, so a continue's System row
    // (appended at the turn boundary) comes first.
    if (cmd.systemAppend) newRows.push({ role: 'system', content: cmd.systemAppend, created_at: nowIso() });
    for (const ctx of cmd.injectedContext ?? [])
      newRows.push({ role: 'user', content: ctx, created_at: nowIso(), transcript_role: 'injected_context' });
    newRows.push({
      role: 'user',
      content: cmd.prompt,
      created_at: nowIso(),
      transcript_role: 'conversational',
      ...(cmd.identity ? { identity: cmd.identity } : {}),
    });
    let { rows: history, total } = cmd.knownHistory
      ? { rows: cmd.knownHistory, total: cmd.knownHistory.length }
      : await core.readCommitted();
    core.state.pending = {
      request_id: cmd.requestId,
      started_at_ms: started,
      prompt: cmd.prompt,
      ...(cmd.transientContext ? { transient_turn_context: cmd.transientContext } : {}),
    };
    // The pending input rides the next write; the turn does not wait for it (the commit is chained after it).
    // Snapshots are persisted at rest only: the pending input itself marks the turn as in flight, so this
    // write keeps the pre-turn snapshot.
    // A fast turn's pending input shares the commit's transaction (PENDING_DEFER_MS); a slower one, or
    // one that reaches a tool call, makes it durable first. A hook waiting on it is never kept waiting.
    const pendingOps = cmd.hooks?.pendingOps?.(id, hub.lastSeq + 1) ?? [];
    const deferMs = pendingOps.length || cmd.hooks?.onPendingDurable ? 0 : PENDING_DEFER_MS;
    const pendingRaw = core.persist(pendingOps, core.state.machine ?? null, deferMs);
    if (cmd.hooks?.onPendingDurable) pendingRaw.then(cmd.hooks.onPendingDurable, () => {});
    const pendingWrite = pendingRaw.catch((err) => core.log.error({ err, sessionId: id }, 'pending input write failed'));
    hub.publish('run_started', { session_id: id, input: { kind: 'content', content: cmd.prompt } });
    // The machine enters `running` in calling_model: only a change of phase is worth a transition.
    let phaseNow: TurnPhase = 'calling_model';
    const onPhase = (phase: TurnPhase) => {
      // Tools act outside the store: the turn's pending input is durable before the first one runs.
      if (phase === 'executing_tools') core.releaseDeferred();
      if (phase === phaseNow) return;
      phaseNow = phase;
      core.machine.send({ type: 'turn.phase', generation, phase });
    };
    let committing = false;
    try {
      await run?.started(cmd.prompt);
      const credential = await deps.credentials?.credentialFor(settings.auth_binding, settings.provider, settings.model);
      const deltaSeqs: number[] = [];
      const resolved = deps.providers.resolve(settings.model, settings.provider, credential);
      const { model, name } = resolved;
      const cfg = deps.config();
      // The turn's recording (actors/replay/recorder.ts) wraps the provider and tools and rides the commit.
      const rec = deps.recorder?.begin({
        sessionId: id,
        requestId: cmd.requestId,
        startedMs: started,
        newRows,
        transientContext: cmd.transientContext ?? undefined,
      });
      const provider = rec ? rec.provider(resolved.provider, name) : resolved.provider;
      const toolset = rec ? rec.toolset(deps.buildToolset(id, settings)) : deps.buildToolset(id, settings);
      // Context compaction at the turn boundary (actors/compaction-boundary.ts) may rewrite the history.
      const compacted = await compactAtBoundary(core, history, {
        provider,
        providerName: name,
        model,
        specs: toolset?.specs ?? [],
        newRows,
        signal,
      });
      if (compacted) ({ rows: history, total } = { rows: compacted, total: compacted.length });
      const result = await runTurn({
        sessionId: id,
        model,
        provider,
        maxTokens: settings.max_tokens,
        history,
        newRows,
        transientContext: cmd.transientContext ?? undefined,
        toolset,
        contextRoot: deps.contextRoot,
        maxIterations: 64,
        maxConcurrentTools: cfg.tools.max_concurrent,
        signal,
        emit: (kind, payload) => {
          const entry = hub.publish(kind, payload);
          if (kind === 'text_delta') deltaSeqs.push(entry.seq);
        },
        onPhase,
        now: nowIso,
        guard: run,
        pullSteer: steerRows(() => [...(cmd.pullSteer?.() ?? []), ...(deps.followUps?.pullSteer(id) ?? [])], nowIso),
      });
      // The commit also drops the turn's deltas from the ledger and applies retention (ledger-retention.ts).
      const trim = await ledgerTrimOps(deps.store, id, deltaSeqs, hub.lastSeq, cfg.ledger, deps.now(), this.ledgerAge);
      signal.throwIfAborted();
      deps.compactor?.noteInputTokens(id, result.lastInputTokens);
      if (run) {
        await run.completing(result.text, result.usage);
        signal.throwIfAborted();
      }
      committing = true;
      onPhase('committing');
      cmd.onCommitting();
      const usage = {
        ...result.usage,
        total_tokens: result.usage.input_tokens + result.usage.output_tokens,
      };
      const rows = newRows.concat(result.producedRows);
      const outcome: TurnOutcome = { text: result.text, turns: result.turns, toolCalls: result.toolCalls, usage };
      // The turn's state changes are applied now (a write queued meanwhile must carry them) and rolled
      // back if the commit fails. The machine stays busy (committing) until the commit is durable, so no
      // other turn or transcript write can start in between; the snapshot persisted with the commit is
      // already the resting (idle) one the machine reaches when this work returns.
      const before = { record: core.record, revision: core.state.revision };
      delete core.state.pending;
      core.state.revision++;
      core.record = {
        ...core.record,
        message_count: total + rows.length,
        total_tokens: core.record.total_tokens + usage.total_tokens,
      };
      // The commit is queued first and run_completed published in the same synchronous block, so the
      // writer's next drain takes both: the event's ledger entry rides in the turn's transaction and is
      // handed to live subscribers as soon as it is durable. The writer orders it after the pending-input write.
      const committed = core.persist(
        [
          { op: 'putRows', sessionId: id, fromIndex: total, rows },
          ...(cmd.commitOps?.() ?? []),
          ...(deps.followUps?.commitOps(id, outcome) ?? []),
          ...(cmd.hooks?.commitOps?.(outcome) ?? []),
          ...(rec?.commitOps(total, rows.length) ?? []),
          ...trim,
        ],
        core.restingSnapshot(),
      );
      hub.publish('run_completed', { session_id: id, result: result.text, extraction_required: run?.extractionRequired ?? false, usage });
      try {
        await committed;
      } catch (err) {
        core.record = { ...before.record, updated_at_ms: core.record.updated_at_ms };
        core.state.revision = before.revision;
        throw storeErrorOf(err, id);
      }
      core.cacheRows(extendHistory(history, rows));
      // Structured output is extracted from the committed turn, then committed after it.
      const extra = await run?.extract({
        provider,
        model,
        maxTokens: settings.max_tokens,
        committedText: result.text,
        signal,
        now: nowIso,
        ...projectForProvider({ history, newRows, now: nowIso }, result.producedRows),
      });
      if (extra) await this.commitExtra(extra, history.concat(rows));
      const lateRec = rec?.lateOps() ?? [];
      if (lateRec.length)
        await core.persist(lateRec).catch((e) => core.log.error({ err: e, sessionId: id }, 'turn recording write failed'));
      const final = withExtra(outcome, extra);
      // The extension hooks' record follows the extraction result (the turn's commit carried the plain one).
      if (extra && cmd.hooks?.commitOps)
        await core.persist(cmd.hooks.commitOps(final)).catch((e) => core.log.error({ err: e, sessionId: id }, 'turn hook write failed'));
      return final;
    } catch (err) {
      // Once committing, an interrupt no longer cancels: a failure there is the commit's own. A run
      // stopped by its time budget fails with that budget's error, not as cancelled.
      if (signal.aborted && isServiceError(signal.reason) && signal.reason.code === 'BUDGET_EXHAUSTED' && !committing) err = signal.reason;
      const cancelled = signal.aborted && !committing && err !== signal.reason;
      delete core.state.pending;
      const error = cancelled ? new ServiceError('REQUEST_CANCELLED', 'turn cancelled before commit', { session_id: id }) : err;
      const kind = cancelled ? 'cancelled' : errorKind(err);
      hub.publish('run_failed', {
        session_id: id,
        error_report: { class: cancelled ? 'cancelled' : errorCode(err), message: err instanceof Error ? err.message : String(err) },
        terminal_cause_kind: kind,
      });
      await run?.failed(error);
      await pendingWrite;
      await core
        .persist(cmd.hooks?.failOps?.(error, cancelled) ?? [], core.restingSnapshot())
        .catch((e) => core.log.error({ err: e, sessionId: id }, 'failed-turn state write failed'));
      throw error;
    }
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
    this.abort?.abort(new ServiceError('REQUEST_CANCELLED', 'interrupted'));
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

/** Steering input becomes user rows placed before the next model call. */
function steerRows(pull: () => ContentInput[], now: () => string): () => Message[] {
  return () => pull().map((content): Message => ({ role: 'user', content, created_at: now() }));
}

function errorKind(err: unknown): string {
  const d = err instanceof ServiceError ? (err.details as { error?: { kind?: string } } | undefined) : undefined;
  return d?.error?.kind ?? 'fatal_failure';
}

function errorCode(err: unknown): string {
  return err instanceof ServiceError ? err.code : 'INTERNAL_ERROR';
}

/** The commit's failure as the request's error: SESSION_STORE_ERROR naming the store's cause. */
function storeErrorOf(err: unknown, sessionId: string): ServiceError {
  const cause = err instanceof ServiceError ? err : undefined;
  const details = { session_id: sessionId, ...(cause?.details && typeof cause.details === 'object' ? cause.details : {}) };
  const why = err instanceof Error ? `: ${err.message}` : '';
  return new ServiceError('SESSION_STORE_ERROR', `the turn could not be committed${why}`, details, { cause: err });
}
