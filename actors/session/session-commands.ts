// actors/session/session-commands.ts: the session commands the HTTP handlers send (create, continue, system
// context, system prompt). Each resolves its session through the SessionHost (session-host.ts) and lets the session's
// machine decide busy; the reply is built from the committed result.
import { createHash } from 'node:crypto';
import { ServiceError } from '../../contracts/errors.ts';
import type { AuthBinding } from '../../contracts/auth.ts';
import type {
  ContinueSessionRequest,
  CreateSessionRequest,
  SystemContextRequest,
  SystemPromptRequest,
  SystemPromptResult,
  ProviderName,
} from '../../contracts/session.ts';
import { refuseReservedLabels } from '../label-rules.ts';
import type { Message } from '../../contracts/transcript.ts';
import { resolveToolFlags, ToolConfigError } from '../../tools/registry.ts';
import type { SessionRecord } from '../../storage/store.ts';
import { PENDING_DEFER_MS, type TurnHooks, type TurnOutcome } from './session-actor.ts';
import type { PersistedState, SessionSettings } from './session-types.ts';
import type { SessionHost } from './session-host.ts';
import type { RunFeatureRequest, RunPlan } from '../turn-features/run-features.ts';
import { resolveTurnSkills, skillFailureEvent, type TurnSkills } from '../skills/turn-skills.ts';
import type { SkillDiagnostics } from '../../contracts/skills.ts';
import { uuidv7 } from '../uuidv7.ts';

export interface TurnReply extends TurnOutcome {
  sessionId: string;
  skillDiagnostics?: SkillDiagnostics;
}

function turnSkills(sup: SessionHost, body: Pick<CreateSessionRequest, 'skill_refs' | 'preload_skills'>): Promise<TurnSkills | undefined> {
  return resolveTurnSkills(sup.deps.skills, [...(body.preload_skills ?? []), ...(body.skill_refs ?? [])], () =>
    sup.capabilities.unavailable('skills'),
  );
}

function withSkills(skills: TurnSkills | undefined, injected: CreateSessionRequest['injected_context']) {
  return skills ? [...skills.injected, ...(injected ?? [])] : injected;
}

/**
 * One turn's context, built once by whoever starts the turn (an HTTP handler, a schedule, a mob, comms)
 * and passed whole: the request it runs under, how it is cancelled, and what the caller adds.
 */
export interface TurnContext extends TurnExtras {
  /** The request id the turn runs under (request registry, ledger, logs). */
  requestId: string;
  /** Aborts the turn (client cancel, interrupt, shutdown). */
  signal: AbortSignal;
  /** Called once the turn starts its durable commit (a cancel can no longer undo it). */
  onCommitting?: () => void;
  /** Durable hooks of a detached turn (its request record). */
  hooks?: TurnHooks;
  /** create only: settings the caller fixes for the new session (e.g. a mob member's). */
  settings?: Partial<SessionSettings>;
}

const NOOP = (): void => {};

/** Extras of a turn started by Warren itself (a schedule) rather than by an HTTP caller. */
interface TurnExtras {
  /** create only: the new session's id, chosen by the caller (so a crash-retry targets the same session). */
  sessionId?: string;
  /** Marks the turn's user row, so the caller can find out after a crash whether the turn committed. */
  identity?: { idempotency_key?: string; source?: string };
  /** Called once the session's machine admitted the turn (it is running). */
  onAdmitted?: () => void;
  /** continue only: the inbox input a keep-alive session was woken for (comms). */
  wakeKey?: string;
  /** continue only: a follow-up from the session's queue (busy policies, actors/busy). */
  followUp?: boolean;
}

/** Thrown when a session was durably created but its first turn failed (SPEC "States and transitions"). */
export class CreatedWithTurnFailure extends Error {
  constructor(
    readonly sessionId: string,
    readonly cause: unknown,
  ) {
    super('session created but its first turn failed');
  }
}

function resolveFlags(body: CreateSessionRequest, defaults: { builtins_enabled: boolean; shell_enabled: boolean }) {
  try {
    return resolveToolFlags(body, defaults);
  } catch (err) {
    if (err instanceof ToolConfigError) throw new ServiceError('BAD_REQUEST', err.message);
    throw err;
  }
}

/**
 * Request features whose capability is not built answer 501 CAPABILITY_UNAVAILABLE (the capability
 * registry decides) rather than being silently ignored: a caller asking for hooks must not get a run
 * without them. keep_alive needs comms and answers 400 without it (SPEC "Errors").
 */
function requireCapabilities(
  host: SessionHost,
  body: Partial<CreateSessionRequest> & Pick<ContinueSessionRequest, 'output_schema' | 'hooks_override' | 'keep_alive'>,
): void {
  const caps = host.capabilities;
  if (body.keep_alive === true && !caps.isBuilt('comms')) {
    throw new ServiceError('BAD_REQUEST', 'keep_alive requires the comms capability, which this build does not include');
  }
  if (body.output_schema != null) caps.require('structured_output', 'structured output extraction');
  if (body.hooks_override != null) caps.require('hooks', 'hook overrides');
  if (body.enable_memory === true) caps.require('memory_store', 'semantic memory tools');
  if (body.enable_schedule === true) caps.require('schedule', 'schedule tools');
  if (body.enable_workgraph === true) caps.require('work_graph', 'WorkGraph tools');
}

/** Checks structured output and hook overrides before anything runs (400 on a bad schema). */
function planRun(host: SessionHost, body: RunFeatureRequest, provider: ProviderName, persistedRetries?: number): RunPlan | undefined {
  return host.deps.turnFeatures?.prepare(body, provider, persistedRetries);
}

function selectorOf(ref: AuthBinding): AuthBinding {
  return { realm: ref.realm, binding: ref.binding, ...(ref.profile ? { profile: ref.profile } : {}) };
}

async function checkSelector(sup: SessionHost, ref: AuthBinding): Promise<{ provider: string; defaultModel?: string }> {
  if (!sup.deps.credentials) throw sup.capabilities.unavailable('auth');
  return sup.deps.credentials.checkSelector(ref);
}

function sameProvider(bindingProvider: string, sessionProvider: string, binding: string): void {
  if (bindingProvider !== sessionProvider) {
    throw new ServiceError(
      'BAD_REQUEST',
      `auth binding '${binding}' is for provider '${bindingProvider}', but the session uses '${sessionProvider}'`,
    );
  }
}

/** POST /sessions: creates the session durably, then runs its first turn. */
export async function createSession(sup: SessionHost, body: CreateSessionRequest, turn: TurnContext): Promise<TurnReply> {
  const { requestId, signal, onCommitting = NOOP, settings: extras, hooks } = turn;
  const { deps } = sup;
  const cfg = deps.config();
  if (body.keep_alive === true && !body.comms_name) throw new ServiceError('BAD_REQUEST', 'keep_alive requires comms_name');
  requireCapabilities(sup, body);
  refuseReservedLabels(body);
  const selector = body.auth_binding ? selectorOf(body.auth_binding) : undefined;
  const bound = selector ? await checkSelector(sup, selector) : undefined;
  // A selector without model or provider picks the binding's provider (and its default model, if any).
  const resolved =
    bound && body.model == null && body.provider == null
      ? deps.providers.resolve(bound.defaultModel ?? null, bound.provider)
      : deps.providers.resolve(body.model ?? (cfg.agent.model || null), body.provider ?? null);
  if (bound) sameProvider(bound.provider, resolved.name, selector!.binding);
  // A missing key or base URL is known without a call: answer 502 PROVIDER_ERROR before creating anything.
  const credential = await deps.credentials?.credentialFor(selector, resolved.name, resolved.model);
  const problem = (credential ? deps.providers.resolve(resolved.model, resolved.name, credential) : resolved).provider.preflight?.(
    resolved.model,
  );
  if (problem) throw problem;
  const flags = resolveFlags(body, cfg.tools);
  const plan = planRun(sup, body, resolved.name);
  // Unknown or unresolvable skills are refused before anything is created (404 / 422).
  const skills = await turnSkills(sup, body);
  const settings: SessionSettings = {
    model: resolved.model,
    provider: resolved.name,
    max_tokens: body.max_tokens ?? cfg.max_tokens ?? cfg.agent.max_tokens_per_turn,
    system_prompt_disabled: typeof body.system_prompt === 'object' && body.system_prompt !== null,
    builtins: flags.builtins,
    shell: flags.shell,
    ...(sup.capabilities.isBuilt('work_graph') && (body.enable_workgraph ?? cfg.tools.workgraph_enabled) ? { workgraph: true } : {}),
    ...((body.enable_schedule ?? cfg.tools.schedule_enabled) ? { schedule: true } : {}),
    keep_alive: body.keep_alive === true,
    ...(body.comms_name ? { comms_name: body.comms_name } : {}),
    ...((body.enable_memory ?? cfg.memory.enabled_by_default) && sup.capabilities.isBuilt('memory_store') ? { memory: true } : {}),
    ...(body.peer_meta ? { peer_meta: body.peer_meta } : {}),
    // SPEC: null uses the server default on create; the value is persisted so continues inherit it.
    structured_output_retries: body.structured_output_retries ?? cfg.agent.structured_output_retries,
    ...(selector ? { auth_binding: selector } : {}),
    ...extras,
  };
  const now = deps.now();
  const systemText =
    typeof body.system_prompt === 'string' ? body.system_prompt : body.system_prompt == null ? cfg.agent.system_prompt : undefined;
  const rows: Message[] = systemText ? [{ role: 'system', content: systemText, created_at: new Date(now).toISOString() }] : [];
  const sessionId = turn.sessionId ?? uuidv7(now);
  const state: PersistedState = { v: 1, machine: null, settings, sysctx: {}, prompts: {}, revision: rows.length ? 1 : 0 };
  const record: SessionRecord = {
    v: 2,
    session_id: sessionId,
    created_at_ms: now,
    updated_at_ms: now,
    archived: false,
    labels: body.labels ?? {},
    message_count: rows.length,
    total_tokens: 0,
    state,
  };
  const actor = sup.adopt(record);
  // Not awaited: the turn's first write is chained after it. Observed at once so that a failure is
  // never an unhandled rejection; a session whose creation never became durable is not "created".
  // The comms directory entry commits with the session, so a comms name is addressable once created.
  const directory = settings.comms_name ? (sup.extension?.settingsOps(sessionId, settings) ?? []) : [];
  // Without a directory entry, the creation may share the first turn's commit (PENDING_DEFER_MS).
  const created = actor.persist(
    [...(rows.length ? [{ op: 'putRows', sessionId, fromIndex: 0, rows } as const] : []), ...directory],
    directory.length || hooks ? 0 : PENDING_DEFER_MS,
  );
  created.catch((err: unknown) => actor.core.abandon(err));
  sup.noteCreation(created);
  if (skills) actor.hub.publish('skills_resolved', skills.event);
  let outcome: TurnOutcome;
  try {
    outcome = await actor.runTurn({
      requestId,
      kind: 'create',
      prompt: body.prompt,
      injectedContext: withSkills(skills, body.injected_context),
      transientContext: body.transient_turn_context,
      signal,
      onCommitting,
      knownHistory: rows,
      plan,
      hooks,
      identity: turn.identity,
      onAdmitted: turn.onAdmitted,
      verbose: body.verbose === true,
    });
  } catch (err) {
    try {
      await created;
    } catch (createErr) {
      sup.forget(sessionId);
      throw createErr;
    }
    throw new CreatedWithTurnFailure(sessionId, err);
  }
  await created;
  return { sessionId, ...outcome, ...(skills ? { skillDiagnostics: skills.diagnostics } : {}) };
}

/**
 * POST /sessions/{id}/messages. Model, provider and max_tokens hot-swap for the rest of the session.
 * Inputs waiting in the session's inbox ride the turn as injected context (comms, ingress); `wakeKey`
 * (turn.wakeKey) names the inbox input a keep-alive session was woken for (its text is the prompt).
 */
export async function continueSession(
  sup: SessionHost,
  sessionId: string,
  body: ContinueSessionRequest,
  turn: TurnContext,
): Promise<TurnReply> {
  const { requestId, signal, onCommitting = NOOP, hooks } = turn;
  if (body.session_id !== sessionId) {
    throw new ServiceError('BAD_REQUEST', `Session ID mismatch: path=${sessionId} body=${body.session_id}`);
  }
  refuseReservedLabels(body);
  const actor = await sup.getActive(sessionId);
  const s = actor.settings;
  if (body.keep_alive === true && !(body.comms_name ?? s.comms_name))
    throw new ServiceError('BAD_REQUEST', 'keep_alive requires comms_name');
  requireCapabilities(sup, body);
  // Resolved (and validated) now, applied by the actor only once the machine accepts the turn.
  const patch: Partial<SessionSettings> = {};
  if (body.model != null || body.provider != null) {
    const keepProvider = body.provider ?? (body.model != null ? null : s.provider);
    const r = sup.deps.providers.resolve(body.model ?? s.model, keepProvider);
    patch.model = r.model;
    patch.provider = r.name as ProviderName;
  }
  // A new selector swaps credentials from this turn on (wire-notes §1.2 hot swap); an unknown binding
  // or a provider mismatch is refused before the turn starts.
  const selector = body.auth_binding ? selectorOf(body.auth_binding) : s.auth_binding;
  if (selector) {
    const bound = await checkSelector(sup, selector);
    if (body.auth_binding) patch.auth_binding = selector;
    if (body.model == null && body.provider == null && bound.provider !== s.provider) {
      const r = sup.deps.providers.resolve(bound.defaultModel ?? null, bound.provider);
      patch.model = r.model;
      patch.provider = r.name as ProviderName;
    }
    sameProvider(bound.provider, patch.provider ?? s.provider, selector.binding);
  }
  if (body.max_tokens != null) patch.max_tokens = body.max_tokens;
  if (body.comms_name != null) patch.comms_name = body.comms_name;
  if (body.structured_output_retries != null) patch.structured_output_retries = body.structured_output_retries;
  if (body.keep_alive != null) patch.keep_alive = body.keep_alive;
  let skills: TurnSkills | undefined;
  try {
    skills = await turnSkills(sup, body);
  } catch (err) {
    if (err instanceof ServiceError && err.code.startsWith('SKILL_')) actor.hub.publish('skill_resolution_failed', skillFailureEvent(err));
    throw err;
  }
  if (skills) actor.hub.publish('skills_resolved', skills.event);
  const plan = planRun(sup, body, patch.provider ?? s.provider, s.structured_output_retries);
  const ext = sup.extension;
  const commsChanged =
    (patch.comms_name !== undefined && patch.comms_name !== s.comms_name) ||
    (patch.keep_alive !== undefined && patch.keep_alive !== s.keep_alive);
  const settingsOps = ext && commsChanged ? ext.settingsOps(sessionId, { ...s, ...patch }) : [];
  const claim = ext ? await ext.claim(sessionId, { wakeKey: turn.wakeKey }) : null;
  let outcome: TurnOutcome;
  try {
    outcome = await actor.runTurn({
      requestId,
      kind: 'continue',
      prompt: body.prompt,
      injectedContext: withSkills(
        skills,
        claim?.context.length ? [...claim.context, ...(body.injected_context ?? [])] : body.injected_context,
      ),
      transientContext: body.transient_turn_context,
      systemAppend: body.system_prompt,
      settingsPatch: patch,
      plan,
      signal,
      onCommitting,
      hooks,
      identity: turn.identity,
      onAdmitted: turn.onAdmitted,
      followUp: turn.followUp,
      verbose: body.verbose === true,
      ...(claim ? { pullSteer: () => claim.pullSteer() } : {}),
      ...(claim || settingsOps.length ? { commitOps: () => [...settingsOps, ...(claim?.commitOps() ?? [])] } : {}),
    });
  } catch (err) {
    claim?.settle(false);
    throw err;
  }
  claim?.settle(true);
  return { sessionId, ...outcome, ...(skills ? { skillDiagnostics: skills.diagnostics } : {}) };
}

// Idempotency keys and prompt keys are caller strings: `constructor` or `__proto__` are keys like any
// other, never members inherited from Object.prototype.
function ownEntry<T>(map: Record<string, T>, key: string): T | undefined {
  return Object.hasOwn(map, key) ? map[key] : undefined;
}

function setEntry<T>(map: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
}

function fingerprint(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
}

function renderContext(content: SystemContextRequest['content']): string {
  if (content.type === 'text') return content.text;
  if (content.type === 'json') return JSON.stringify(content.value);
  return content.blocks.map((b) => (b.type === 'image' ? `[image: ${b.media_type}]` : b.text)).join('\n');
}

/** POST /sessions/{id}/system_context: one durable System row at the admitted boundary (after a running turn). */
export async function appendSystemContext(
  sup: SessionHost,
  sessionId: string,
  body: SystemContextRequest,
): Promise<'applied' | 'duplicate'> {
  const actor = await sup.getActive(sessionId);
  // Re-checked after each wait: a turn admitted meanwhile reads the transcript before this row is
  // written, so its commit would land on the same index. mutate() runs synchronously after the check.
  do await actor.whenSettled();
  while (actor.isRunning());
  const text = renderContext(body.content);
  const fp = fingerprint(text + '\u0000' + (body.source ?? ''));
  let status: 'applied' | 'duplicate' = 'applied';
  await actor.mutate((state, record) => {
    if (body.idempotency_key) {
      const seen = ownEntry(state.sysctx, body.idempotency_key);
      if (seen === fp) {
        status = 'duplicate';
        return {};
      }
      if (seen)
        throw new ServiceError('CONFLICT', 'idempotency_key reused with different content', { idempotency_key: body.idempotency_key });
      setEntry(state.sysctx, body.idempotency_key, fp);
    }
    const row: Message = { role: 'system', content: text, created_at: new Date(sup.deps.now()).toISOString() };
    if (body.source || body.idempotency_key) {
      row.identity = {
        ...(body.idempotency_key ? { idempotency_key: body.idempotency_key } : {}),
        ...(body.source ? { source: body.source } : {}),
      };
    }
    state.revision++;
    return {
      ops: [{ op: 'putRows', sessionId, fromIndex: record.message_count, rows: [row] }],
      record: { message_count: record.message_count + 1 },
    };
  });
  return status;
}

/** POST /sessions/{id}/system_prompt: keyed, versioned replacement of a System row. */
export async function replaceSystemPrompt(sup: SessionHost, sessionId: string, body: SystemPromptRequest): Promise<SystemPromptResult> {
  const actor = await sup.getActive(sessionId);
  // SPEC: mob-owned system prompts are rejected on this route (a member's prompt belongs to its mob).
  if (actor.settings.mob_member)
    throw new ServiceError('BAD_REQUEST', `the system prompt of session ${sessionId} is owned by mob ${actor.settings.mob_member.mob_id}`, {
      session_id: sessionId,
      mob_id: actor.settings.mob_member.mob_id,
    });
  if (actor.isRunning()) throw new ServiceError('SESSION_BUSY', 'Session has active work', { session_id: sessionId });
  if (body.expected_parent_revision != null && body.expected_parent_revision !== String(actor.revision)) {
    throw new ServiceError(
      'BAD_REQUEST',
      `transcript revision conflict: expected ${body.expected_parent_revision}, current ${actor.revision}`,
    );
  }
  const { rows } = await sup.deps.store.readRows(sessionId);
  let result!: SystemPromptResult;
  await actor.mutate((state, record) => {
    // A turn admitted while the rows were read would commit over an appended row: check again, synchronously.
    if (actor.isRunning()) throw new ServiceError('SESSION_BUSY', 'Session has active work', { session_id: sessionId });
    const existing = ownEntry(state.prompts, body.key);
    const now = new Date(sup.deps.now()).toISOString();
    if (existing) {
      if (body.target_message_index != null)
        throw new ServiceError('BAD_REQUEST', `key '${body.key}' is already adopted; omit target_message_index`);
      if (body.expected_version == null || body.expected_version !== existing.version) {
        throw new ServiceError(
          'BAD_REQUEST',
          `system prompt version conflict: expected ${body.expected_version ?? 'none'}, current ${existing.version}`,
        );
      }
      if (existing.content === body.content) {
        result = {
          version: existing.version,
          message_index: existing.message_index,
          status: 'duplicate',
          transcript_revision: String(state.revision),
        };
        return {};
      }
      const version = existing.version + 1;
      setEntry(state.prompts, body.key, { version, message_index: existing.message_index, content: body.content });
      state.revision++;
      const row: Message = { role: 'system', content: body.content, created_at: now, prompt_version: { key: body.key, version } };
      result = { version, message_index: existing.message_index, status: 'applied', transcript_revision: String(state.revision) };
      return { ops: [{ op: 'putRows', sessionId, fromIndex: existing.message_index, rows: [row] }] };
    }
    if (body.expected_version != null) throw new ServiceError('BAD_REQUEST', `key '${body.key}' has no version yet; omit expected_version`);
    const row: Message = { role: 'system', content: body.content, created_at: now, prompt_version: { key: body.key, version: 1 } };
    let index = record.message_count;
    let kind: 'in_place' | 'appended' = 'appended';
    if (body.target_message_index != null) {
      const target = rows[body.target_message_index];
      if (!target || target.role !== 'system')
        throw new ServiceError('BAD_REQUEST', `message ${body.target_message_index} is not a System row`);
      if (target.prompt_version)
        throw new ServiceError(
          'BAD_REQUEST',
          `message ${body.target_message_index} is already versioned under '${target.prompt_version.key}'`,
        );
      index = body.target_message_index;
      kind = 'in_place';
    }
    setEntry(state.prompts, body.key, { version: 1, message_index: index, content: body.content });
    state.revision++;
    result = { version: 1, message_index: index, status: 'applied', transcript_revision: String(state.revision) };
    return {
      ops: [{ op: 'putRows', sessionId, fromIndex: index, rows: [row] }],
      ...(kind === 'appended' ? { record: { message_count: record.message_count + 1 } } : {}),
    };
  });
  return result;
}
