// tools/schedule-tools.ts: the schedule tools (`warren_schedule_create`, `_get`, `_list`, `_update`,
// `_pause`, `_resume`, `_delete`, `_occurrences`): their declarations (also served by GET /schedule/tools)
// and the session-facing Tool objects. The calls themselves run in actors/schedules/ through `ScheduleCall`.
import { Type, type TSchema } from 'typebox';
import {
  CalendarTrigger, CronAuthoringSpec, CurrentSessionTarget, IntervalTrigger, MaterializeTarget, MisfirePolicy, MissingTargetPolicy,
  OccurrencePhaseSchema, OnceTrigger, OverlapPolicy, SessionTarget,
} from '../contracts/schedule.ts';
import type { ToolSpec } from '../contracts/tool.ts';
import type { Tool } from './tool.ts';

const Trigger = Type.Union([OnceTrigger, IntervalTrigger, CalendarTrigger, CronAuthoringSpec]);
const Target = Type.Union([CurrentSessionTarget, SessionTarget, MaterializeTarget]);
const Id = { schedule_id: Type.String({ description: 'Schedule id (UUID)' }) };
const Editable = {
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  misfire_policy: Type.Optional(MisfirePolicy),
  overlap_policy: Type.Optional(OverlapPolicy),
  missing_target_policy: Type.Optional(MissingTargetPolicy),
  planning_horizon_days: Type.Optional(Type.Integer({ minimum: 1 })),
  planning_horizon_occurrences: Type.Optional(Type.Integer({ minimum: 1 })),
};

const DECLS: Array<[string, string, TSchema]> = [
  ['create', 'Create a schedule that runs a prompt (or delivers an event) into a session at given times. Triggers: once, interval, calendar (IANA time zone) or a 5-field cron expression. Target {type:"current_session", action:{type:"prompt", prompt}} runs in this session.',
    Type.Object({ ...Editable, trigger: Trigger, target: Target })],
  ['get', 'Read one schedule.', Type.Object(Id)],
  ['list', 'List every schedule (paused and deleted included).', Type.Object({})],
  ['update', 'Change a schedule. Pass expected_revision to update only if nobody changed it meanwhile.',
    Type.Object({ ...Id, ...Editable, trigger: Type.Optional(Trigger), target: Type.Optional(Target), expected_revision: Type.Optional(Type.Integer({ minimum: 1 })) })],
  ['pause', 'Pause a schedule (nothing fires until it is resumed).', Type.Object(Id)],
  ['resume', 'Resume a paused schedule.', Type.Object(Id)],
  ['delete', 'Delete a schedule (soft delete: it stays listed with phase deleted).', Type.Object(Id)],
  ['occurrences', 'List a schedule\'s planned and past occurrences.',
    Type.Object({ ...Id, phase: Type.Optional(OccurrencePhaseSchema), limit: Type.Optional(Type.Integer({ minimum: 0 })) })],
];

export const SCHEDULE_TOOL_PREFIX = 'warren_schedule_';

/** The declarations, in a stable order. */
export const SCHEDULE_TOOL_SPECS: readonly ToolSpec[] = DECLS.map(([suffix, description, schema]) => ({
  name: `${SCHEDULE_TOOL_PREFIX}${suffix}`,
  description,
  input_schema: JSON.parse(JSON.stringify(schema)) as Record<string, unknown>,
}));

/** Runs one schedule tool call for a session (or for /schedule/call with no session); rejects with the error. */
export type ScheduleCall = (name: string, args: unknown, currentSessionId: string | null) => Promise<unknown>;

/** The schedule tools of one session; a failed call becomes an `is_error` result the model can read. */
export function createScheduleTools(call: ScheduleCall): Tool[] {
  return SCHEDULE_TOOL_SPECS.map((spec) => ({
    ...spec,
    async execute(args, ctx) {
      try {
        return { content: JSON.stringify(await call(spec.name, args, ctx.sessionId)) };
      } catch (err) {
        return { content: `${spec.name} failed: ${err instanceof Error ? err.message : String(err)}`, is_error: true };
      }
    },
  }));
}
