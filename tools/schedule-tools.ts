// tools/schedule-tools.ts: the schedule tools (`warren_schedule_create`, `_get`, `_list`, `_update`,
// `_pause`, `_resume`, `_delete`, `_occurrences`): their declarations (also served by GET /schedule/tools)
// and the session-facing Tool objects. The calls themselves run in actors/schedules/ through `ScheduleCall`.
import { Type, type TSchema } from 'typebox';
import type { ToolSpec } from '../contracts/tool.ts';
import type { Tool } from './tool.ts';

// Compact model-facing schemas (every turn carries them): the variants are described in words, and the
// call itself is validated against the full wire schemas (contracts/schedule.ts), naming the problem.
const Trigger = Type.Object(
  {
    type: Type.String({ enum: ['once', 'interval', 'calendar', 'cron'] }),
  },
  {
    additionalProperties: true,
    description:
      'once: {type, due_at_utc}. interval: {type, start_at_utc, every_seconds, end_at_utc?}. ' +
      'calendar: {type, timezone (IANA), minute?, hour?, day_of_month?, month?, day_of_week? (0=Sunday), year?, day_match? ("all" default: both day fields must match; "any": either)}, each field {kind:"any"} or {kind:"values", values:[numbers]}. ' +
      'cron: {type, expression: "m h dom mon dow" (5 fields), timezone?}, with cron\'s meaning (day of month OR day of week when both are set). Times are RFC 3339 UTC.',
  },
);
const Target = Type.Object(
  {
    type: Type.String({ enum: ['current_session', 'exact_session', 'resumable_session', 'materialize_on_demand_session'] }),
  },
  {
    additionalProperties: true,
    description:
      'current_session: {type, action} runs in this session. exact_session / resumable_session: {target_kind:"session", type, session_id, action}. ' +
      'materialize_on_demand_session: {target_kind:"session", type, create:{model?, provider?, system_prompt?}, action}. ' +
      'action: {type:"prompt", prompt, additional_instructions?} or {type:"event", event_type, payload}.',
  },
);
const SameAsCreate = (what: string) =>
  Type.Object({}, { additionalProperties: true, description: `${what}, in the forms of warren_schedule_create` });
const Id = { schedule_id: Type.String({ description: 'Schedule id (UUID)' }) };
const Editable = {
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  misfire_policy: Type.Optional(
    Type.Object({ type: Type.String({ enum: ['skip', 'catch_up_within'] }), window_seconds: Type.Optional(Type.Integer({ minimum: 0 })) }),
  ),
  overlap_policy: Type.Optional(Type.String({ enum: ['skip_if_running', 'allow_concurrent'] })),
  missing_target_policy: Type.Optional(Type.String({ enum: ['mark_misfired', 'skip'] })),
  planning_horizon_days: Type.Optional(Type.Integer({ minimum: 1 })),
  planning_horizon_occurrences: Type.Optional(Type.Integer({ minimum: 1 })),
};
const Phase = Type.String({
  enum: ['pending', 'claimed', 'dispatching', 'awaiting_completion', 'completed', 'skipped', 'misfired', 'superseded', 'delivery_failed'],
});

const DECLS: Array<[string, string, TSchema]> = [
  [
    'create',
    'Create a schedule that runs a prompt (or delivers an event) in a session at given times, e.g. trigger {type:"cron", expression:"0 9 * * MON-FRI", timezone:"Europe/Berlin"} and target {type:"current_session", action:{type:"prompt", prompt:"..."}}.',
    Type.Object({ ...Editable, trigger: Trigger, target: Target }),
  ],
  ['get', 'Read one schedule.', Type.Object(Id)],
  ['list', 'List every schedule (paused and deleted included).', Type.Object({})],
  [
    'update',
    'Change a schedule. Pass expected_revision to update only if nobody changed it meanwhile.',
    Type.Object({
      ...Id,
      ...Editable,
      trigger: Type.Optional(SameAsCreate('new trigger')),
      target: Type.Optional(SameAsCreate('new target')),
      expected_revision: Type.Optional(Type.Integer({ minimum: 1 })),
    }),
  ],
  ['pause', 'Pause a schedule (nothing fires until it is resumed).', Type.Object(Id)],
  ['resume', 'Resume a paused schedule.', Type.Object(Id)],
  ['delete', 'Delete a schedule (soft delete: it stays listed with phase deleted).', Type.Object(Id)],
  [
    'occurrences',
    "List a schedule's planned and past occurrences.",
    Type.Object({ ...Id, phase: Type.Optional(Phase), limit: Type.Optional(Type.Integer({ minimum: 0 })) }),
  ],
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
