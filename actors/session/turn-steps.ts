// actors/session/turn-steps.ts: the named steps of one turn, run in order by SessionActor.turn()
// (session-actor.ts): beginTurn (rows, pending input, run_started), callModel (credential, compaction at
// the boundary, the model/tool loop of turn-runner.ts, ledger trim), commitTurn (one durable commit with
// run_completed in the same transaction) and failTurn (run_failed and the resting state). Each step reads
// and writes the session through its SessionCore; the turn's own state travels in one TurnRun.
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import type { ContentInput, Message } from '../../contracts/transcript.ts';
import type { TurnOutcome, TurnPhase } from '../../machines/session-machine.ts';
import type { Provider } from '../../providers/provider.ts';
import type { StoreOp } from '../../storage/store.ts';
import { compactAtBoundary } from '../compaction-boundary.ts';
import { ledgerTrimOps, type AgeCheck } from '../ledger-retention.ts';
import type { ActiveTurnRecorder } from '../replay/recorder.ts';
import type { RunFeatures } from '../turn-features/run-features.ts';
import type { TurnCommand } from './session-actor.ts';
import type { SessionCore } from './session-core.ts';
import { runTurn, type TurnRunResult as TurnResult } from './turn-runner.ts';
import { TurnProgress } from './turn-progress.ts';

/**
 * How long a turn's pending-input write (and a new session's creation write) may wait for the turn's
 * commit to share one transaction. Longer turns pay a second commit; live subscribers see the turn's
 * first events at most this much later.
 */
export const PENDING_DEFER_MS = 20;

/** One turn's state between its steps. */
export interface TurnRun {
  readonly id: string;
  readonly cmd: TurnCommand;
  readonly signal: AbortSignal;
  readonly run: RunFeatures | undefined;
  /** When the turn was admitted (epoch ms). */
  readonly started: number;
  readonly nowIso: () => string;
  /** The rows this turn adds before the model's (system append, injected context, the user row). */
  readonly newRows: Message[];
  /** The committed history the model sees (rewritten when compaction runs at the boundary). */
  history: Message[];
  /** Committed rows before this turn (the index its rows are written from). */
  total: number;
  /** The pending-input write (never rejects; failures are logged). */
  pendingWrite: Promise<unknown>;
  /** Reports a phase to the machine (only changes are sent). */
  onPhase(phase: TurnPhase): void;
  /** Set once the commit started: an interrupt no longer cancels. */
  committing: boolean;
}

/** What the model/tool loop produced, ready to commit. */
export interface ModelPass {
  result: TurnResult;
  provider: Provider;
  model: string;
  /** Ledger trim and retention ops that ride in the commit (ledger-retention.ts). */
  trim: StoreOp[];
  /** The turn's recording (actors/replay/recorder.ts): its ops ride the commit, late ones follow extraction. */
  rec?: ActiveTurnRecorder;
}

/** Step 1: the turn's rows, its pending input (deferred to share the commit when the turn is fast) and run_started. */
export async function beginTurn(
  core: SessionCore,
  cmd: TurnCommand,
  generation: number,
  signal: AbortSignal,
  started: number,
  run: RunFeatures | undefined,
): Promise<TurnRun> {
  const { hub } = core;
  const id = core.id;
  const nowIso = () => new Date(core.deps.now()).toISOString();
  const newRows = turnRows(cmd, nowIso);
  const { rows: history, total } = cmd.knownHistory
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
  return { id, cmd, signal, run, started, nowIso, newRows, history, total, pendingWrite, onPhase, committing: false };
}

/** Step 2: credential and provider, compaction at the boundary, the model/tool loop, then what the commit drops from the ledger. */
export async function callModel(core: SessionCore, t: TurnRun, ledgerAge: AgeCheck): Promise<ModelPass> {
  const { deps, hub } = core;
  const { cmd, signal, run, id } = t;
  const settings = core.state.settings;
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
    startedMs: t.started,
    newRows: t.newRows,
    transientContext: cmd.transientContext ?? undefined,
    features: cmd.plan?.request,
  });
  const recorded = rec ? rec.provider(resolved.provider, name) : resolved.provider;
  // Observation (actors/observe: a trace span per model call) sees every call, compaction's included.
  const provider = deps.observer?.wrapProvider?.(core, recorded) ?? recorded;
  const toolset = rec ? rec.toolset(deps.buildToolset(id, settings)) : deps.buildToolset(id, settings);
  // The viewer's live record of this turn (turn-progress.ts), fed by the events the loop publishes.
  const progress = new TurnProgress(cmd.requestId, t.started, name, model);
  core.progress = progress;
  let result: TurnResult;
  try {
    result = await modelLoop(core, t, { provider, providerName: name, model, toolset, progress, deltaSeqs });
  } finally {
    if (core.progress === progress) core.progress = null;
  }
  // The commit also drops the turn's deltas from the ledger and applies retention (ledger-retention.ts).
  const trim = await ledgerTrimOps(deps.store, id, deltaSeqs, hub.lastSeq, cfg.ledger, deps.now(), ledgerAge);
  signal.throwIfAborted();
  deps.compactor?.noteInputTokens(id, result.lastInputTokens);
  if (run) {
    await run.completing(result.text, result.usage);
    signal.throwIfAborted();
  }
  return { result, provider, model, trim, ...(rec ? { rec } : {}) };
}

interface LoopParts {
  provider: Provider;
  providerName: string;
  model: string;
  toolset: ReturnType<SessionCore['deps']['buildToolset']>;
  progress: TurnProgress;
  /** Filled with the seqs of the turn's text deltas (the commit drops them from the ledger). */
  deltaSeqs: number[];
}

/** Compaction at the boundary, then the model/tool loop of turn-runner.ts. */
async function modelLoop(core: SessionCore, t: TurnRun, p: LoopParts): Promise<TurnResult> {
  const { deps, hub } = core;
  const { cmd, signal, run, id } = t;
  const settings = core.state.settings;
  const { provider, model, toolset, progress, deltaSeqs } = p;
  // Context compaction at the turn boundary (actors/compaction-boundary.ts) may rewrite the history.
  const compacted = await compactAtBoundary(core, t.history, {
    provider,
    providerName: p.providerName,
    model,
    specs: toolset?.specs ?? [],
    newRows: t.newRows,
    signal,
  });
  if (compacted) {
    t.history = compacted;
    t.total = compacted.length;
  }
  return runTurn({
    sessionId: id,
    model,
    provider,
    maxTokens: settings.max_tokens,
    history: t.history,
    newRows: t.newRows,
    transientContext: cmd.transientContext ?? undefined,
    toolset,
    contextRoot: deps.contextRoot,
    maxIterations: 64,
    maxConcurrentTools: deps.config().tools.max_concurrent,
    signal,
    emit: (kind, payload) => {
      const entry = hub.publish(kind, payload);
      if (kind === 'text_delta') deltaSeqs.push(entry.seq);
      progress.onEvent(kind, payload, entry.timestamp_ms);
    },
    onPhase: t.onPhase,
    now: t.nowIso,
    guard: run,
    pullSteer: steerRows(() => [...(cmd.pullSteer?.() ?? []), ...(deps.followUps?.pullSteer(id) ?? [])], t.nowIso),
  });
}

/** Step 3: one durable commit of the turn's rows, record, resting snapshot and ledger entries (run_completed included). */
export async function commitTurn(core: SessionCore, t: TurnRun, pass: ModelPass): Promise<{ outcome: TurnOutcome; rows: Message[] }> {
  const { deps, hub } = core;
  const { cmd, id, run } = t;
  const { result } = pass;
  t.committing = true;
  t.onPhase('committing');
  cmd.onCommitting();
  const usage = { ...result.usage, total_tokens: result.usage.input_tokens + result.usage.output_tokens };
  const rows = t.newRows.concat(result.producedRows);
  const outcome: TurnOutcome = { text: result.text, turns: result.turns, toolCalls: result.toolCalls, usage };
  // The turn's state changes are applied now (a write queued meanwhile must carry them) and rolled
  // back if the commit fails. The machine stays busy (committing) until the commit is durable, so no
  // other turn or transcript write can start in between; the snapshot persisted with the commit is
  // already the resting (idle) one the machine reaches when this work returns.
  const before = { record: core.record, revision: core.state.revision };
  delete core.state.pending;
  core.state.revision++;
  core.record = { ...core.record, message_count: t.total + rows.length, total_tokens: core.record.total_tokens + usage.total_tokens };
  // The commit is queued first and run_completed published in the same synchronous block, so the
  // writer's next drain takes both: the event's ledger entry rides in the turn's transaction and is
  // handed to live subscribers as soon as it is durable. The writer orders it after the pending-input write.
  const committed = core.persist(
    [
      { op: 'putRows', sessionId: id, fromIndex: t.total, rows },
      ...(cmd.commitOps?.() ?? []),
      ...(deps.followUps?.commitOps(id, outcome) ?? []),
      ...(cmd.hooks?.commitOps?.(outcome) ?? []),
      ...(pass.rec?.commitOps(t.total, rows.length) ?? []),
      ...pass.trim,
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
  return { outcome, rows };
}

/** On failure: run_failed, the run's features told, the resting state written; returns the error to throw. */
export async function failTurn(core: SessionCore, t: TurnRun, err: unknown): Promise<unknown> {
  const { cmd, signal, run, id, committing } = t;
  // Once committing, an interrupt no longer cancels: a failure there is the commit's own. A run
  // stopped by its time budget fails with that budget's error, not as cancelled.
  if (signal.aborted && isServiceError(signal.reason) && signal.reason.code === 'BUDGET_EXHAUSTED' && !committing) err = signal.reason;
  // An interrupt or request cancel aborts with REQUEST_CANCELLED (the provider may rethrow that very reason).
  const cancelReason = isServiceError(signal.reason) && signal.reason.code === 'REQUEST_CANCELLED';
  const cancelled = signal.aborted && !committing && (cancelReason || err !== signal.reason);
  delete core.state.pending;
  const error = cancelled ? new ServiceError('REQUEST_CANCELLED', 'turn cancelled before commit', { session_id: id }) : err;
  // terminal_cause_kind keeps the reference's enumeration; a cancel is told by error_report.class.
  const interrupted = cancelled && (signal.reason as { details?: { reason?: string } } | undefined)?.details?.reason === 'interrupted';
  core.hub.publish('run_failed', {
    session_id: id,
    error_report: {
      class: interrupted ? 'interrupted' : cancelled ? 'cancelled' : errorCode(err),
      message: err instanceof Error ? err.message : String(err),
    },
    terminal_cause_kind: cancelled ? 'unknown' : errorKind(err),
  });
  await run?.failed(error);
  await t.pendingWrite;
  await core
    .persist(cmd.hooks?.failOps?.(error, cancelled) ?? [], core.restingSnapshot())
    .catch((e) => core.log.error({ err: e, sessionId: id }, 'failed-turn state write failed'));
  return error;
}

/** The rows a turn adds before the model's. SPEC: injected-context rows sit, in order, right before the user row, so a continue's System row (appended at the turn boundary) comes first. */
function turnRows(cmd: TurnCommand, nowIso: () => string): Message[] {
  const rows: Message[] = [];
  if (cmd.systemAppend) rows.push({ role: 'system', content: cmd.systemAppend, created_at: nowIso() });
  for (const ctx of cmd.injectedContext ?? [])
    rows.push({ role: 'user', content: ctx, created_at: nowIso(), transcript_role: 'injected_context' });
  rows.push({
    role: 'user',
    content: cmd.prompt,
    created_at: nowIso(),
    transcript_role: 'conversational',
    ...(cmd.identity ? { identity: cmd.identity } : {}),
  });
  return rows;
}

/** Steering input becomes user rows placed before the next model call. */
function steerRows(pull: () => ContentInput[], now: () => string): () => Message[] {
  return () => pull().map((content): Message => ({ role: 'user', content, created_at: now() }));
}

/** The reference's terminal_cause_kind enumeration; anything else is reported as fatal_failure. */
const TERMINAL_CAUSE_KINDS: ReadonlySet<string> = new Set([
  'unknown',
  'hook_denied',
  'hook_failure',
  'llm_failure',
  'tool_failure',
  'structured_output_validation_failed',
  'budget_exhausted',
  'time_budget_exceeded',
  'retry_exhausted',
  'turn_limit_reached',
  'runtime_apply_failure',
  'fatal_failure',
]);

function errorKind(err: unknown): string {
  const d = err instanceof ServiceError ? (err.details as { error?: { kind?: string } } | undefined) : undefined;
  const kind = d?.error?.kind;
  return kind !== undefined && TERMINAL_CAUSE_KINDS.has(kind) ? kind : 'fatal_failure';
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
