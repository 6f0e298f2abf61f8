// actors/schedules/schedule-validate.ts: turns a create or update body into a checked schedule: trigger
// (trigger-plan.ts), target (session targets only until mobs and identities exist), policies and
// planning horizons with their wire defaults (skip / skip_if_running / mark_misfired / 30 days / 64).
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../../contracts/errors.ts';
import {
  MaterializeTarget,
  MobTarget,
  SessionTarget,
  type CreateScheduleRequest,
  type SessionTargetBinding,
  type MisfirePolicy,
  type MissingTargetPolicy,
  type OverlapPolicy,
  type Schedule,
  type TargetBinding,
  type TriggerSpec,
  type UpdateScheduleRequest,
} from '../../contracts/schedule.ts';
import { isUuid } from './schedule-records.ts';
import { validateTrigger, variantChecker } from './trigger-plan.ts';

const DEFAULTS = {
  misfire_policy: { type: 'skip' } as MisfirePolicy,
  overlap_policy: 'skip_if_running' as OverlapPolicy,
  missing_target_policy: 'mark_misfired' as MissingTargetPolicy,
  planning_horizon_days: 30,
  planning_horizon_occurrences: 64,
};

const checkSessionTarget = variantChecker('target', {
  exact_session: SessionTarget,
  resumable_session: SessionTarget,
  materialize_on_demand_session: MaterializeTarget,
});

const checkMobTarget = Compile(MobTarget);

/** The fields each mob target type needs beyond `mob_id` (wire-notes §2.4). */
const MOB_NEEDS: Record<MobTarget['type'], Array<keyof MobTarget>> = {
  member: ['agent_identity', 'action'],
  flow: ['flow_id'],
  spawn_helper: ['action'],
  fork_helper: ['action', 'source_member_id'],
};

function validateMobTarget(raw: unknown): MobTarget {
  if (!checkMobTarget.Check(raw)) {
    const first = [...checkMobTarget.Errors(raw)][0];
    throw new ServiceError(
      'BAD_REQUEST',
      `invalid target: mob target ${first ? `${first.instancePath || '/'} ${first.message}` : 'malformed'}`,
    );
  }
  for (const field of MOB_NEEDS[raw.type]) {
    if (raw[field] === undefined) throw new ServiceError('BAD_REQUEST', `invalid target: a mob ${raw.type} target needs ${field}`);
  }
  if ((raw.type === 'spawn_helper' || raw.type === 'fork_helper') && raw.action?.type !== 'prompt')
    throw new ServiceError('BAD_REQUEST', 'invalid target: a helper target needs a prompt action');
  return raw;
}

const NOT_YET: Record<string, string> = {
  identity: 'identity targets are not available: this build of Warren has no durable identities yet',
  host_runnable: 'host_runnable targets are not available in this build of Warren',
};

/** Validates a target binding; only session targets exist in this build. */
function validateTarget(raw: unknown): TargetBinding {
  const kind = typeof raw === 'object' && raw !== null ? (raw as { target_kind?: unknown }).target_kind : undefined;
  if (typeof kind === 'string' && NOT_YET[kind])
    throw new ServiceError('BAD_REQUEST', `invalid target: ${NOT_YET[kind]}`, { target_kind: kind });
  if (kind === 'mob') return validateMobTarget(raw);
  if (kind !== 'session')
    throw new ServiceError('BAD_REQUEST', `invalid target: target_kind must be 'session' or 'mob', got ${JSON.stringify(kind ?? null)}`);
  const target = checkSessionTarget(raw) as SessionTargetBinding;
  if (target.type !== 'materialize_on_demand_session' && !isUuid(target.session_id.slice(target.session_id.lastIndexOf(':') + 1))) {
    throw new ServiceError('BAD_REQUEST', `invalid target: session_id is not a session id: ${target.session_id}`);
  }
  if (target.type === 'materialize_on_demand_session') {
    if (target.create.keep_alive === true)
      throw new ServiceError(
        'BAD_REQUEST',
        'invalid target: keep_alive sessions need the comms capability, which this build does not include',
      );
    if (target.bound_session_id !== undefined && !isUuid(target.bound_session_id))
      throw new ServiceError('BAD_REQUEST', `invalid target: bound_session_id is not a session id: ${target.bound_session_id}`);
  }
  if (target.action.type === 'prompt' && target.action.skill_refs?.length) {
    throw new ServiceError('BAD_REQUEST', 'invalid target: skill_refs need the skills capability, which this build does not include');
  }
  return target;
}

/** The bare session id of a session target (drops a `<realm>:` prefix). */
export function targetSessionId(target: TargetBinding): string | undefined {
  if (target.target_kind === 'mob') return undefined;
  if (target.type === 'materialize_on_demand_session') return target.bound_session_id;
  return target.session_id.slice(target.session_id.lastIndexOf(':') + 1).toLowerCase();
}

type Fields = Omit<
  Schedule,
  | 'schedule_id'
  | 'phase'
  | 'revision'
  | 'next_occurrence_ordinal'
  | 'planning_cursor_utc'
  | 'created_at_utc'
  | 'updated_at_utc'
  | 'deleted_at_utc'
>;

/** A create body as schedule fields, defaults applied. */
export function fieldsForCreate(body: CreateScheduleRequest, nowMs: number): Fields {
  const trigger: TriggerSpec = validateTrigger(body.trigger, nowMs);
  const out: Fields = {
    trigger,
    target: validateTarget(body.target),
    misfire_policy: body.misfire_policy ?? DEFAULTS.misfire_policy,
    overlap_policy: body.overlap_policy ?? DEFAULTS.overlap_policy,
    missing_target_policy: body.missing_target_policy ?? DEFAULTS.missing_target_policy,
    planning_horizon_days: body.planning_horizon_days ?? DEFAULTS.planning_horizon_days,
    planning_horizon_occurrences: body.planning_horizon_occurrences ?? DEFAULTS.planning_horizon_occurrences,
  };
  if (body.name !== undefined) out.name = body.name;
  if (body.description !== undefined) out.description = body.description;
  if (body.labels !== undefined) out.labels = body.labels;
  return out;
}

/** Applies an update body to a schedule; `replan` is true when planned occurrences no longer hold. */
export function applyUpdate(current: Schedule, body: UpdateScheduleRequest, nowMs: number): { next: Schedule; replan: boolean } {
  const next: Schedule = { ...current };
  if (body.trigger !== undefined) next.trigger = validateTrigger(body.trigger, nowMs);
  if (body.target !== undefined) next.target = validateTarget(body.target);
  if (body.name !== undefined) next.name = body.name;
  if (body.description !== undefined) next.description = body.description;
  if (body.labels !== undefined) next.labels = body.labels;
  if (body.misfire_policy !== undefined) next.misfire_policy = body.misfire_policy;
  if (body.overlap_policy !== undefined) next.overlap_policy = body.overlap_policy;
  if (body.missing_target_policy !== undefined) next.missing_target_policy = body.missing_target_policy;
  if (body.planning_horizon_days !== undefined) next.planning_horizon_days = body.planning_horizon_days;
  if (body.planning_horizon_occurrences !== undefined) next.planning_horizon_occurrences = body.planning_horizon_occurrences;
  // Occurrences snapshot the trigger's times, the target and the policies: any of them changing supersedes them.
  const replan = [
    'trigger',
    'target',
    'misfire_policy',
    'overlap_policy',
    'missing_target_policy',
    'planning_horizon_days',
    'planning_horizon_occurrences',
  ].some((k) => body[k as keyof UpdateScheduleRequest] !== undefined);
  return { next, replan };
}

/** A compiled check of a whole body (the tool path validates what the HTTP router validates). */
export function bodyChecker(what: string, schema: TSchema): (value: unknown) => void {
  const check = Compile(schema);
  return (value) => {
    if (check.Check(value)) return;
    const first = [...check.Errors(value)][0];
    throw new ServiceError('BAD_REQUEST', `invalid ${what}: ${first ? `${first.instancePath || '/'} ${first.message}` : 'does not match'}`);
  };
}
