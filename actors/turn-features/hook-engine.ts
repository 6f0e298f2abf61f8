// actors/turn-features/hook-engine.ts: runs a run's hooks at each point. The entries are the `[hooks]`
// config entries minus `hooks_override.disable`, plus `hooks_override.entries`, by priority (lower
// first, then in order). Foreground hooks run one after another and may stop the operation (guardrail
// deny: 403 HOOK_DENIED); background hooks never delay the turn and share a server-wide bound.
import { ServiceError } from '../../contracts/errors.ts';
import type { SessionEventKind, SessionEventPayload } from '../../contracts/session-events.ts';
import {
  HOOK_DENY_REASONS,
  type HookDenyReason,
  type HookEntryConfig,
  type HookPoint,
  type HookRunOverrides,
} from '../../contracts/turn-features.ts';
import { executeHook, HookRunFailure, type HookPayload } from './hook-runtimes.ts';

export interface HookSettings {
  default_timeout_ms: number;
  payload_max_bytes: number;
  background_max_concurrency: number;
  entries: HookEntryConfig[];
}

type Emit = <K extends SessionEventKind>(kind: K, payload: SessionEventPayload<K>) => void;

type Decision =
  | { kind: 'allow' }
  | { kind: 'deny'; reason_code: HookDenyReason; message: string; payload?: unknown }
  | { kind: 'invalid'; message: string };

const DEFAULT_PRIORITY = 100;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `{}` or `{"decision": {"decision": "allow"}}` allow; a deny names a known reason; anything else is invalid. */
export function interpretAnswer(answer: unknown): Decision {
  if (!isObject(answer)) return { kind: 'invalid', message: 'the answer is not a JSON object' };
  const extra = Object.keys(answer).filter((k) => k !== 'decision');
  if (extra.length) return { kind: 'invalid', message: `unexpected answer members: ${extra.join(', ')}` };
  if (answer.decision === undefined) return { kind: 'allow' };
  const d = answer.decision;
  if (!isObject(d)) return { kind: 'invalid', message: '`decision` is not an object' };
  if (d.decision === 'allow') return { kind: 'allow' };
  if (d.decision !== 'deny') return { kind: 'invalid', message: '`decision.decision` must be "allow" or "deny"' };
  if (!(HOOK_DENY_REASONS as readonly unknown[]).includes(d.reason_code)) {
    return { kind: 'invalid', message: `a deny needs reason_code, one of ${HOOK_DENY_REASONS.join(', ')}` };
  }
  if (d.message !== undefined && typeof d.message !== 'string') return { kind: 'invalid', message: '`decision.message` must be a string' };
  return {
    kind: 'deny',
    reason_code: d.reason_code as HookDenyReason,
    message: (d.message as string | undefined) ?? 'denied by hook',
    ...(d.payload !== undefined ? { payload: d.payload } : {}),
  };
}

/** The run's hook entries: config minus disabled ids, plus the override's entries, by priority. */
export function runEntries(config: HookEntryConfig[], override: HookRunOverrides | null | undefined): HookEntryConfig[] {
  const disabled = new Set(override?.disable ?? []);
  const all = config.filter((e) => !disabled.has(e.id)).concat(override?.entries ?? []);
  return all
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.enabled !== false)
    .sort((a, b) => (a.e.priority ?? DEFAULT_PRIORITY) - (b.e.priority ?? DEFAULT_PRIORITY) || a.i - b.i)
    .map(({ e }) => e);
}

/** Server-wide: the bound on background hooks in flight. */
export class BackgroundSlots {
  private running = 0;
  private readonly idle = new Set<() => void>();

  tryAcquire(limit: number): boolean {
    if (this.running >= limit) return false;
    this.running++;
    return true;
  }

  release(): void {
    this.running--;
    if (this.running === 0) for (const r of this.idle) r();
    if (this.running === 0) this.idle.clear();
  }

  /** Resolves when no background hook is running (shutdown). */
  drained(): Promise<void> {
    return this.running === 0 ? Promise.resolve() : new Promise((r) => this.idle.add(r));
  }
}

export interface RunHookContext {
  sessionId: string;
  requestId: string;
  /** The server's environment (a command hook inherits PATH, HOME, LANG and a few more from it). */
  env: NodeJS.ProcessEnv;
  /** The run's signal: a stopped run ends its foreground hooks at once. */
  signal?: AbortSignal;
  emit: Emit;
  now(): number;
}

/** One run's hooks. `fire` resolves when the foreground hooks of a point allowed it. */
export class RunHooks {
  private readonly byPoint = new Map<HookPoint, HookEntryConfig[]>();

  constructor(
    entries: HookEntryConfig[],
    private readonly settings: HookSettings,
    private readonly slots: BackgroundSlots,
    private readonly ctx: RunHookContext,
  ) {
    for (const e of entries) {
      const list = this.byPoint.get(e.point) ?? [];
      list.push(e);
      this.byPoint.set(e.point, list);
    }
  }

  has(point: HookPoint): boolean {
    return this.byPoint.has(point);
  }

  /** Runs the point's hooks with `data`. Throws 403 HOOK_DENIED when a guardrail stops the operation. */
  async fire(point: HookPoint, data: Record<string, unknown>): Promise<void> {
    const entries = this.byPoint.get(point);
    if (!entries) return;
    for (const entry of entries) {
      if (entry.mode === 'background') this.startBackground(entry, point, data);
      else await this.runOne(entry, point, data);
    }
  }

  private startBackground(entry: HookEntryConfig, point: HookPoint, data: Record<string, unknown>): void {
    const { emit } = this.ctx;
    if (entry.capability === 'guardrail') {
      emit('hook_started', { hook_id: entry.id, point });
      emit('hook_failed', {
        hook_id: entry.id,
        point,
        reason: { reason_code: 'config_invalid', message: 'a background hook cannot be a guardrail' },
      });
      return;
    }
    if (!this.slots.tryAcquire(this.settings.background_max_concurrency)) {
      emit('hook_failed', {
        hook_id: entry.id,
        point,
        reason: {
          reason_code: 'execution_failed',
          message: `background hook limit (${this.settings.background_max_concurrency}) reached; not run`,
        },
      });
      return;
    }
    void this.runOne(entry, point, data)
      .catch(() => {})
      .finally(() => this.slots.release());
  }

  private async runOne(entry: HookEntryConfig, point: HookPoint, data: Record<string, unknown>): Promise<void> {
    const { emit } = this.ctx;
    const guardrail = entry.capability === 'guardrail';
    const timeoutMs = entry.timeout_ms ?? this.settings.default_timeout_ms;
    const started = this.ctx.now();
    emit('hook_started', { hook_id: entry.id, point });
    const payload: HookPayload = { hook_id: entry.id, point, session_id: this.ctx.sessionId, request_id: this.ctx.requestId, data };
    const body = JSON.stringify(payload);
    const size = Buffer.byteLength(body);
    let decision: Decision;
    if (size > this.settings.payload_max_bytes) {
      decision = {
        kind: 'invalid',
        message: `payload of ${size} bytes exceeds hooks.payload_max_bytes (${this.settings.payload_max_bytes}); not sent`,
      };
    } else {
      try {
        const stop = entry.mode === 'background' ? undefined : this.ctx.signal;
        decision = interpretAnswer(await executeHook(entry.runtime, payload, body, timeoutMs, this.ctx.env, stop));
      } catch (err) {
        const failure = err instanceof HookRunFailure ? err : new HookRunFailure('execution_failed', String(err));
        // A run stopped meanwhile ends with its own reason (cancelled, budget), not a hook verdict.
        if (entry.mode !== 'background' && this.ctx.signal?.aborted) {
          emit('hook_failed', { hook_id: entry.id, point, reason: { reason_code: 'execution_failed', message: failure.message } });
          throw this.ctx.signal.reason;
        }
        const reason =
          failure.reason === 'timeout'
            ? { reason_code: 'timeout' as const, timeout_ms: timeoutMs }
            : { reason_code: failure.reason, message: failure.message };
        emit('hook_failed', { hook_id: entry.id, point, reason });
        // A guardrail that cannot decide fails closed.
        if (guardrail)
          this.deny(entry, point, failure.reason === 'timeout' ? 'timeout' : 'runtime_error', `guardrail hook failed: ${failure.message}`);
        return;
      }
    }
    if (decision.kind === 'invalid') {
      emit('hook_failed', { hook_id: entry.id, point, reason: { reason_code: 'execution_failed', message: decision.message } });
      if (guardrail) this.deny(entry, point, 'runtime_error', `guardrail hook failed: ${decision.message}`);
      return;
    }
    if (decision.kind === 'deny') {
      if (!guardrail) {
        emit('hook_failed', { hook_id: entry.id, point, reason: { reason_code: 'observe_only_violation' } });
        return;
      }
      this.deny(entry, point, decision.reason_code, decision.message, decision.payload);
    }
    emit('hook_completed', { hook_id: entry.id, point, duration_ms: Math.max(0, this.ctx.now() - started) });
  }

  private deny(entry: HookEntryConfig, point: HookPoint, reason_code: HookDenyReason, message: string, payload?: unknown): never {
    const event = { hook_id: entry.id, point, reason_code, message, ...(payload !== undefined ? { payload } : {}) };
    this.ctx.emit('hook_denied', event);
    throw new ServiceError('HOOK_DENIED', `hook ${entry.id} denied ${point}: ${message}`, {
      session_id: this.ctx.sessionId,
      ...event,
      error: { kind: 'hook_denied', terminal: true },
    });
  }
}
