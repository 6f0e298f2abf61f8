// actors/skills/turn-skills.ts: a turn's skills. Session commands call resolveTurnSkills with the
// request's `preload_skills` + `skill_refs` before the turn starts; the result becomes skill_context
// injected-context entries, the `skills_resolved` event and the turn response's `skill_diagnostics`.
import { ServiceError } from '../../contracts/errors.ts';
import type { SkillDiagnostics, SkillRef } from '../../contracts/skills.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { SessionEventPayload } from '../../contracts/session-events.ts';
import type { Resolution } from './skill-catalog.ts';

/** What session commands need of the skills subsystem (set on RuntimeDeps by the skills module). */
export interface SkillResolver {
  /** False while `[skills] enabled = false`. */
  enabled(): boolean;
  maxInjectionBytes(): number;
  resolve(refs: readonly SkillRef[], maxBytes: number): Promise<Resolution>;
}

export interface TurnSkills {
  /** One injected-context entry per skill (a skill_context block), placed before the caller's own. */
  injected: ContentInput[];
  diagnostics: SkillDiagnostics;
  /** The `skills_resolved` payload. */
  event: { skills: Array<{ source_uuid: string; skill_name: string }>; injection_bytes: number };
}

/** The `skill_resolution_failed` payload for a resolution error. */
export function skillFailureEvent(err: unknown): SessionEventPayload<'skill_resolution_failed'> {
  const details =
    err instanceof ServiceError
      ? (err.details as { skill_key?: { source_uuid?: string; skill_name: string }; reason?: { reason_type?: string } } | undefined)
      : undefined;
  const reasonType =
    details?.reason?.reason_type ?? (err instanceof ServiceError && err.code === 'SKILL_NOT_FOUND' ? 'not_found' : 'resolution_failed');
  return {
    ...(details?.skill_key ? { skill_key: details.skill_key } : {}),
    reason: { ...(details?.reason ?? {}), reason_type: reasonType, message: err instanceof Error ? err.message : String(err) },
  };
}

/**
 * Resolves the refs of one turn. Undefined when none were given. Throws 404 SKILL_NOT_FOUND, 422
 * SKILL_RESOLUTION_FAILED, or 501 when the skills capability is off.
 */
export async function resolveTurnSkills(
  resolver: SkillResolver | undefined,
  refs: readonly SkillRef[],
  unavailable: () => ServiceError,
): Promise<TurnSkills | undefined> {
  if (refs.length === 0) return undefined;
  if (!resolver || !resolver.enabled()) throw unavailable();
  const max = resolver.maxInjectionBytes();
  const r = await resolver.resolve(refs, max);
  const keys = r.skills.map((s) => ({ ...s.key }));
  return {
    injected: r.skills.map((s) => [{ type: 'skill_context' as const, skill_key: { ...s.key }, text: s.text }]),
    diagnostics: { resolved: keys, injection_bytes: r.injection_bytes, max_injection_bytes: max },
    event: { skills: keys, injection_bytes: r.injection_bytes },
  };
}
