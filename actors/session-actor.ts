// actors/session-actor.ts: one session's commands: turns (through turn-runner.ts), interrupt, archive
// and state mutations. The XState machine (in SessionCore) decides busy. All session IO lives here and
// in session-core.ts; the supervisor routes commands in, http/handlers never touch it directly.
import { busyOnCreate, durableResumeHold, ServiceError, sessionNotFound } from '../contracts/errors.ts';
import type { ContentInput, Message } from '../contracts/transcript.ts';
import type { TurnPhase } from '../machines/session-machine.ts';
import type { SessionRecord, StoreOp } from '../storage/store.ts';
import { SessionCore } from './session-core.ts';
import { runTurn } from './turn-runner.ts';
import type { PersistedState, SessionSettings } from './session-types.ts';

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
  signal: AbortSignal;
  /** Called when the turn enters its commit (cancel can no longer stop it). */
  onCommitting(): void;
}

export interface TurnOutcome {
  text: string;
  turns: number;
  toolCalls: number;
  usage: { input_tokens: number; output_tokens: number; total_tokens: number; cache_creation_tokens?: number; cache_read_tokens?: number };
}

export class SessionActor extends SessionCore {
  private abort: AbortController | null = null;
  private settledTurn: Promise<void> = Promise.resolve();

  /** Runs one turn: the machine decides busy, then model/tool loop, then one durable commit. */
  async runTurn(cmd: TurnCommand): Promise<TurnOutcome> {
    this.lastUsedMs = this.deps.now();
    this.machine.send({ type: 'turn.requested', requestId: cmd.requestId });
    const decision = this.machine.getSnapshot().context.lastDecision;
    if (!decision || decision.requestId !== cmd.requestId || decision.verdict !== 'accepted') {
      throw this.rejection(decision?.verdict ?? 'busy', cmd.kind);
    }
    // Only an accepted turn may change the session: a rejected (busy) continue must not hot-swap the model.
    if (cmd.settingsPatch) Object.assign(this.state.settings, cmd.settingsPatch);
    const generation = this.machine.getSnapshot().context.generation;
    const abort = new AbortController();
    this.abort = abort;
    const onExternalAbort = () => abort.abort(cmd.signal.reason);
    if (cmd.signal.aborted) abort.abort(cmd.signal.reason);
    else cmd.signal.addEventListener('abort', onExternalAbort, { once: true });
    let settle!: () => void;
    this.settledTurn = new Promise<void>((r) => (settle = r));
    const started = this.deps.now();
    try {
      return await this.executeTurn(cmd, generation, abort.signal, started);
    } finally {
      cmd.signal.removeEventListener('abort', onExternalAbort);
      if (this.abort === abort) this.abort = null;
      // Safety net: whatever failed, this generation must not leave the machine busy.
      if (this.isRunning() && this.machine.getSnapshot().context.generation === generation) {
        this.machine.send({ type: 'turn.settled', generation, outcome: 'failed' });
      }
      settle();
    }
  }

  private async executeTurn(cmd: TurnCommand, generation: number, signal: AbortSignal, started: number): Promise<TurnOutcome> {
    const settings = this.state.settings;
    const nowIso = () => new Date(this.deps.now()).toISOString();
    const newRows: Message[] = [];
    // SPEC: injected-context rows sit, in order, right before the user row, so a continue's System row
    // (appended at the turn boundary) comes first.
    if (cmd.systemAppend) newRows.push({ role: 'system', content: cmd.systemAppend, created_at: nowIso() });
    for (const ctx of cmd.injectedContext ?? []) newRows.push({ role: 'user', content: ctx, created_at: nowIso(), transcript_role: 'injected_context' });
    newRows.push({ role: 'user', content: cmd.prompt, created_at: nowIso() });
    const { rows: history, total } = cmd.knownHistory
      ? { rows: cmd.knownHistory, total: cmd.knownHistory.length }
      : await this.readCommitted();
    this.state.pending = {
      request_id: cmd.requestId,
      started_at_ms: started,
      prompt: cmd.prompt,
      ...(cmd.transientContext ? { transient_turn_context: cmd.transientContext } : {}),
    };
    // The pending input rides the next write; the turn does not wait for it (the commit is chained after it).
    // Snapshots are persisted at rest only: the pending input itself marks the turn as in flight, so this
    // write keeps the pre-turn snapshot (and skips serializing the live one).
    const pendingWrite = this.persist([], this.state.machine ?? null).catch((err) => this.log.error({ err, sessionId: this.id }, 'pending input write failed'));
    this.hub.publish('run_started', { session_id: this.id, input: { kind: 'content', content: cmd.prompt } });
    const onPhase = (phase: TurnPhase) => this.machine.send({ type: 'turn.phase', generation, phase });
    let committing = false;
    try {
      const credential = await this.deps.credentials?.credentialFor(settings.auth_binding, settings.provider, settings.model);
      const { provider, model } = this.deps.providers.resolve(settings.model, settings.provider, credential);
      const cfg = this.deps.config();
      const result = await runTurn({
        sessionId: this.id,
        model,
        provider,
        maxTokens: settings.max_tokens,
        history,
        newRows,
        transientContext: cmd.transientContext ?? undefined,
        toolset: this.deps.buildToolset(this.id, settings),
        contextRoot: this.deps.contextRoot,
        maxIterations: 64,
        maxConcurrentTools: cfg.tools.max_concurrent,
        signal,
        emit: (kind, payload) => this.hub.publish(kind, payload),
        onPhase,
        now: nowIso,
      });
      signal.throwIfAborted();
      committing = true;
      onPhase('committing');
      cmd.onCommitting();
      const usage = {
        ...result.usage,
        total_tokens: result.usage.input_tokens + result.usage.output_tokens,
      };
      if (usage.output_tokens >= cfg.agent.budget_warning_threshold * settings.max_tokens * result.turns) {
        this.hub.publish('budget_warning', { budget_type: 'tokens', used: usage.output_tokens, limit: settings.max_tokens * result.turns, percent: usage.output_tokens / (settings.max_tokens * result.turns) });
      }
      const rows = newRows.concat(result.producedRows);
      // The turn's state changes are applied now (a write queued meanwhile must carry them) and rolled
      // back if the commit fails. The machine stays busy (committing) until the commit is durable, so no
      // other turn or transcript write can start in between; the snapshot persisted with the commit is
      // already the settled (idle) one.
      const before = { record: this.record, revision: this.state.revision };
      delete this.state.pending;
      this.state.revision++;
      this.record = {
        ...this.record,
        message_count: total + rows.length,
        total_tokens: this.record.total_tokens + usage.total_tokens,
      };
      // The commit is queued first and run_completed published in the same synchronous block, so the
      // writer's next drain takes both: the event's ledger entry rides in the turn's transaction and is handed to live subscribers
      // as soon as it is durable. The writer orders the commit after the pending-input write.
      const committed = this.persist([{ op: 'putRows', sessionId: this.id, fromIndex: total, rows }], this.settledSnapshot(generation));
      this.hub.publish('run_completed', { session_id: this.id, result: result.text, extraction_required: false, usage });
      try {
        await committed;
      } catch (err) {
        this.record = { ...before.record, updated_at_ms: this.record.updated_at_ms };
        this.state.revision = before.revision;
        throw new ServiceError('SESSION_STORE_ERROR', 'the turn could not be committed', { session_id: this.id }, { cause: err });
      }
      this.cacheRows(history.concat(rows));
      this.machine.send({ type: 'turn.settled', generation, outcome: 'succeeded' });
      return { text: result.text, turns: result.turns, toolCalls: result.toolCalls, usage };
    } catch (err) {
      // Once committing, an interrupt no longer cancels: a failure there is the commit's own.
      const cancelled = signal.aborted && !committing;
      delete this.state.pending;
      if (this.isRunning() && this.machine.getSnapshot().context.generation === generation) {
        this.machine.send({ type: 'turn.settled', generation, outcome: cancelled ? 'cancelled' : 'failed' });
      }
      const error = cancelled ? new ServiceError('REQUEST_CANCELLED', 'turn cancelled before commit', { session_id: this.id }) : err;
      const kind = cancelled ? 'cancelled' : errorKind(err);
      this.hub.publish('run_failed', {
        session_id: this.id,
        error_report: { class: cancelled ? 'cancelled' : errorCode(err), message: err instanceof Error ? err.message : String(err) },
        terminal_cause_kind: kind,
      });
      await pendingWrite;
      await this.persist().catch((e) => this.log.error({ err: e, sessionId: this.id }, 'failed-turn state write failed'));
      throw error;
    }
  }

  private rejection(verdict: string, kind: 'create' | 'continue'): ServiceError {
    if (verdict === 'archived') return sessionNotFound(this.id);
    if (verdict === 'held') return durableResumeHold(this.id, this.machine.getSnapshot().context.hold ?? 'tail_held_for_recovery');
    // SPEC "Errors": busy during create maps to 400 BAD_REQUEST, a busy continue to 409 SESSION_BUSY.
    if (kind === 'create') return busyOnCreate(this.id);
    return new ServiceError('SESSION_BUSY', 'a turn is already running on this session', { session_id: this.id });
  }

  /** Stops a running turn (its late results are dropped by generation). Idle: a no-op. */
  interrupt(): 'interrupted' | 'staged_noop' {
    this.lastUsedMs = this.deps.now();
    if (!this.isRunning()) return 'staged_noop';
    this.machine.send({ type: 'interrupt.requested' });
    this.abort?.abort(new ServiceError('REQUEST_CANCELLED', 'interrupted'));
    return 'interrupted';
  }

  /** Resolves when no turn is running. */
  async whenSettled(): Promise<void> {
    while (this.isRunning()) await this.settledTurn;
  }

  async archive(): Promise<void> {
    // A loop: another turn may be admitted between the settle and this continuation.
    while (this.isRunning()) {
      this.interrupt();
      await this.whenSettled();
    }
    this.machine.send({ type: 'archive.requested' });
    this.record = { ...this.record, archived: true, archived_at_ms: this.deps.now() };
    await this.persist();
    this.closeStreams('archived');
  }

  /** Applies a state-only mutation then persists it with optional row writes. */
  async mutate(fn: (state: PersistedState, record: SessionRecord) => { ops?: StoreOp[]; record?: Partial<SessionRecord> }): Promise<void> {
    const { ops = [], record } = fn(this.state, this.record);
    if (record) this.record = { ...this.record, ...record };
    await this.persist(ops);
  }
}

function errorKind(err: unknown): string {
  const d = err instanceof ServiceError ? (err.details as { error?: { kind?: string } } | undefined) : undefined;
  return d?.error?.kind ?? 'fatal_failure';
}

function errorCode(err: unknown): string {
  return err instanceof ServiceError ? err.code : 'INTERNAL_ERROR';
}
