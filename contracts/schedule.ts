// contracts/schedule.ts: wire schemas of the schedule resource (triggers, targets, policies, the public
// Schedule and Occurrence, the tool call body) and its route catalog. actors/schedules/ validates the
// tagged unions (trigger, target, action) variant by variant so a 400 names the exact reason.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';
import { ContentInput } from './transcript.ts';

const U32 = Type.Integer({ minimum: 0, maximum: 4294967295 });
const Utc = Type.String({ format: 'date-time', description: 'RFC 3339 instant' });
const Labels = Type.Record(Type.String(), Type.String());

// ---- triggers -------------------------------------------------------------------------------------

export const FieldSpec = Type.Union(
  [
    Type.Object({ kind: Type.Literal('any') }),
    Type.Object({ kind: Type.Literal('values'), values: Type.Array(U32, { minItems: 1, maxItems: 366 }) }),
  ],
  { $id: 'CalendarFieldSpec' },
);
export type FieldSpec = Static<typeof FieldSpec>;

export const OnceTrigger = Type.Object({ type: Type.Literal('once'), due_at_utc: Utc }, { $id: 'OnceTrigger' });
export const IntervalTrigger = Type.Object(
  {
    type: Type.Literal('interval'),
    start_at_utc: Utc,
    every_seconds: Type.Integer({ minimum: 1, maximum: 366 * 86400 * 100 }),
    end_at_utc: Type.Optional(Utc),
  },
  { $id: 'IntervalTrigger' },
);
/** Omitted fields mean "any"; minute 0-59, hour 0-23, day_of_month 1-31, month 1-12, day_of_week 0-6 (Sunday 0). */
export const CalendarTrigger = Type.Object(
  {
    type: Type.Literal('calendar'),
    timezone: Type.String({ minLength: 1, description: 'IANA time zone, e.g. Europe/Berlin' }),
    minute: Type.Optional(FieldSpec),
    hour: Type.Optional(FieldSpec),
    day_of_month: Type.Optional(FieldSpec),
    month: Type.Optional(FieldSpec),
    day_of_week: Type.Optional(FieldSpec),
    year: Type.Optional(FieldSpec),
    day_match: Type.Optional(
      Type.Union([Type.Literal('all'), Type.Literal('any')], {
        description:
          'How day_of_month and day_of_week combine when both are set: "all" (default) needs both, "any' +
          '" either (cron\'s rule; the cron authoring form sets it)',
      }),
    ),
  },
  { $id: 'CalendarTrigger' },
);
export const TriggerSpec = Type.Union([OnceTrigger, IntervalTrigger, CalendarTrigger], { $id: 'TriggerSpec' });
export type TriggerSpec = Static<typeof TriggerSpec>;
export type CalendarTrigger = Static<typeof CalendarTrigger>;

/** Tool authoring form only: a 5-field cron expression, normalised into a calendar trigger. */
const CronAuthoringSpec = Type.Object(
  {
    type: Type.Literal('cron'),
    expression: Type.String({ minLength: 1, description: 'minute hour day-of-month month day-of-week' }),
    timezone: Type.Optional(Type.String({ minLength: 1, description: 'IANA time zone (default UTC)' })),
  },
  { $id: 'CronAuthoringSpec' },
);
type CronAuthoringSpec = Static<typeof CronAuthoringSpec>;

// ---- targets --------------------------------------------------------------------------------------

const PromptAction = Type.Object(
  {
    type: Type.Literal('prompt'),
    prompt: ContentInput,
    system_prompt: Type.Optional(Type.String()),
    skill_refs: Type.Optional(Type.Array(Type.String())),
    additional_instructions: Type.Optional(Type.String({ minLength: 1 })),
    render_metadata: Type.Optional(Type.Unknown()),
  },
  { $id: 'SchedulePromptAction' },
);
/** Delivered as a turn whose prompt renders the event type and its JSON payload. */
const EventAction = Type.Object(
  {
    type: Type.Literal('event'),
    event_type: Type.String({ minLength: 1 }),
    payload: Type.Unknown(),
    render_metadata: Type.Optional(Type.Unknown()),
  },
  { $id: 'ScheduleEventAction' },
);
export const TargetAction = Type.Union([PromptAction, EventAction], { $id: 'ScheduleTargetAction' });
export type TargetAction = Static<typeof TargetAction>;

export const SessionTarget = Type.Object(
  {
    target_kind: Type.Literal('session'),
    type: Type.Union([Type.Literal('exact_session'), Type.Literal('resumable_session')]),
    session_id: Type.String({ minLength: 1 }),
    action: TargetAction,
  },
  { $id: 'ScheduleSessionTarget' },
);
export const MaterializeCreate = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1 })),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    system_prompt: Type.Optional(Type.String()),
    max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 4294967295 })),
    labels: Type.Optional(Labels),
    keep_alive: Type.Optional(Type.Boolean()),
    enable_builtins: Type.Optional(Type.Boolean()),
    enable_shell: Type.Optional(Type.Boolean()),
    enable_schedule: Type.Optional(Type.Boolean()),
  },
  { $id: 'ScheduleMaterializeCreate' },
);
export const MaterializeTarget = Type.Object(
  {
    target_kind: Type.Literal('session'),
    type: Type.Literal('materialize_on_demand_session'),
    create: MaterializeCreate,
    bound_session_id: Type.Optional(Type.String({ minLength: 1 })),
    action: TargetAction,
  },
  { $id: 'ScheduleMaterializeTarget' },
);
/**
 * A mob target (wire-notes §2.4): `member` runs the action on a member's session; `flow` starts a flow run
 * (run id `schedule-<occurrence_id>`, so a retried dispatch starts it once); `spawn_helper` / `fork_helper`
 * run the action's prompt on a helper (identity `agent_identity`, default `sched-<occurrence>`).
 */
export const MobTarget = Type.Object(
  {
    target_kind: Type.Literal('mob'),
    type: Type.Union([Type.Literal('member'), Type.Literal('flow'), Type.Literal('spawn_helper'), Type.Literal('fork_helper')]),
    mob_id: Type.String({ minLength: 1 }),
    agent_identity: Type.Optional(Type.String({ minLength: 1 })),
    flow_id: Type.Optional(Type.String({ minLength: 1 })),
    activation: Type.Optional(Type.Unknown()),
    source_member_id: Type.Optional(Type.String({ minLength: 1 })),
    result_label: Type.Optional(Type.String({ minLength: 1 })),
    max_text_bytes: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_048_576 })),
    action: Type.Optional(TargetAction),
  },
  { $id: 'ScheduleMobTarget' },
);
export type MobTarget = Static<typeof MobTarget>;
export const TargetBinding = Type.Union([SessionTarget, MaterializeTarget, MobTarget], { $id: 'ScheduleTargetBinding' });
export type SessionTargetBinding = Static<typeof SessionTarget> | Static<typeof MaterializeTarget>;

/** How schedules reach mobs (installed by the mob module as RuntimeDeps.mobTargets). */
export interface MobTargetPort {
  /** Delivers one occurrence to its mob target; resolves with the runtime outcome to record. */
  fire(target: MobTarget, occurrenceId: string): Promise<Record<string, unknown>>;
}
export type TargetBinding = Static<typeof TargetBinding>;
/** Agent tools only: the calling session, rewritten to a resumable_session target. */
const CurrentSessionTarget = Type.Object(
  {
    type: Type.Literal('current_session'),
    target_kind: Type.Optional(Type.Literal('session')),
    action: TargetAction,
  },
  { $id: 'ScheduleCurrentSessionTarget' },
);

/** What the routes accept before the variant checks: a tagged object (other kinds answer a 400 naming why). */
const TaggedObject = (tags: string, description: string) =>
  Type.Object({ type: Type.String({ minLength: 1, description: tags }) }, { additionalProperties: true, description });
const TriggerInput = TaggedObject(
  'once | interval | calendar',
  'TriggerSpec (see the OnceTrigger, IntervalTrigger and CalendarTrigger schemas)',
);
const TargetInput = Type.Object(
  { target_kind: Type.Optional(Type.String()), type: Type.String({ minLength: 1 }) },
  {
    additionalProperties: true,
    description: 'ScheduleTargetBinding (session and mob targets; identity and host_runnable targets are refused)',
  },
);

// ---- policies -------------------------------------------------------------------------------------

export const MisfirePolicy = Type.Union(
  [Type.Object({ type: Type.Literal('skip') }), Type.Object({ type: Type.Literal('catch_up_within'), window_seconds: U32 })],
  { $id: 'MisfirePolicy' },
);
export type MisfirePolicy = Static<typeof MisfirePolicy>;
export const OverlapPolicy = Type.Union([Type.Literal('skip_if_running'), Type.Literal('allow_concurrent')], { $id: 'OverlapPolicy' });
export type OverlapPolicy = Static<typeof OverlapPolicy>;
export const MissingTargetPolicy = Type.Union([Type.Literal('mark_misfired'), Type.Literal('skip')], { $id: 'MissingTargetPolicy' });
export type MissingTargetPolicy = Static<typeof MissingTargetPolicy>;

const ScheduleFields = {
  name: Type.Optional(Type.String({ maxLength: 256 })),
  description: Type.Optional(Type.String({ maxLength: 4096 })),
  labels: Type.Optional(Labels),
  misfire_policy: Type.Optional(MisfirePolicy),
  overlap_policy: Type.Optional(OverlapPolicy),
  missing_target_policy: Type.Optional(MissingTargetPolicy),
  planning_horizon_days: Type.Optional(Type.Integer({ minimum: 1, maximum: 3660 })),
  planning_horizon_occurrences: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
};

/** POST /schedules (and the create tool). */
export const CreateScheduleRequest = Type.Object(
  { ...ScheduleFields, trigger: TriggerInput, target: TargetInput },
  { $id: 'CreateScheduleRequest' },
);
export type CreateScheduleRequest = Static<typeof CreateScheduleRequest>;
/** PATCH /schedules/{id}: every create field optional, plus compare-and-set on the revision. */
export const UpdateScheduleRequest = Type.Object(
  {
    ...ScheduleFields,
    trigger: Type.Optional(TriggerInput),
    target: Type.Optional(TargetInput),
    expected_revision: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { $id: 'UpdateScheduleRequest' },
);
export type UpdateScheduleRequest = Static<typeof UpdateScheduleRequest>;

// ---- resources ------------------------------------------------------------------------------------

const SchedulePhase = Type.Union([Type.Literal('active'), Type.Literal('paused'), Type.Literal('deleted')], {
  $id: 'SchedulePhase',
});
type SchedulePhase = 'active' | 'paused' | 'deleted';

export const Schedule = Type.Object(
  {
    schedule_id: Type.String(),
    name: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    labels: Type.Optional(Labels),
    trigger: TriggerSpec,
    target: TargetBinding,
    misfire_policy: MisfirePolicy,
    overlap_policy: OverlapPolicy,
    missing_target_policy: MissingTargetPolicy,
    planning_horizon_days: Type.Integer(),
    planning_horizon_occurrences: Type.Integer(),
    phase: SchedulePhase,
    revision: Type.Integer({ minimum: 1 }),
    next_occurrence_ordinal: Type.Integer({ minimum: 0 }),
    planning_cursor_utc: Type.Optional(Utc),
    created_at_utc: Utc,
    updated_at_utc: Utc,
    deleted_at_utc: Type.Optional(Utc),
  },
  { $id: 'Schedule' },
);
export type Schedule = Static<typeof Schedule>;

export const OCCURRENCE_PHASES = [
  'pending',
  'claimed',
  'dispatching',
  'awaiting_completion',
  'completed',
  'skipped',
  'misfired',
  'superseded',
  'delivery_failed',
] as const;
export type OccurrencePhase = (typeof OCCURRENCE_PHASES)[number];
const OccurrencePhaseSchema = Type.Union(
  [
    Type.Literal('pending'),
    Type.Literal('claimed'),
    Type.Literal('dispatching'),
    Type.Literal('awaiting_completion'),
    Type.Literal('completed'),
    Type.Literal('skipped'),
    Type.Literal('misfired'),
    Type.Literal('superseded'),
    Type.Literal('delivery_failed'),
  ],
  { $id: 'OccurrencePhase' },
);

export const Occurrence = Type.Object(
  {
    occurrence_id: Type.String(),
    schedule_id: Type.String(),
    schedule_revision: Type.Integer(),
    occurrence_ordinal: Type.Integer({ minimum: 0 }),
    due_at_utc: Utc,
    phase: OccurrencePhaseSchema,
    attempt_count: Type.Integer({ minimum: 0 }),
    target_snapshot: TargetBinding,
    /** The schedule's trigger when this occurrence was planned (a later PATCH does not change it). */
    trigger_snapshot: TriggerSpec,
    misfire_policy: MisfirePolicy,
    overlap_policy: OverlapPolicy,
    missing_target_policy: MissingTargetPolicy,
    created_at_utc: Utc,
    claimed_by: Type.Optional(Type.String()),
    claimed_at_utc: Type.Optional(Utc),
    lease_expires_at_utc: Type.Optional(Utc),
    dispatched_at_utc: Type.Optional(Utc),
    completed_at_utc: Type.Optional(Utc),
    failure_class: Type.Optional(Type.String()),
    failure_detail: Type.Optional(Type.String()),
    runtime_outcome: Type.Optional(Type.Unknown()),
    last_receipt: Type.Optional(Type.Unknown()),
    superseded_by_revision: Type.Optional(Type.Integer()),
  },
  { $id: 'ScheduleOccurrence' },
);
export type Occurrence = Static<typeof Occurrence>;

const ScheduleList = Type.Object({ schedules: Type.Array(Schedule) }, { $id: 'ScheduleList' });
const OccurrenceList = Type.Object({ occurrences: Type.Array(Occurrence) }, { $id: 'ScheduleOccurrenceList' });
const OccurrencesQuery = Type.Object(
  {
    phase: Type.Optional(OccurrencePhaseSchema),
    limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,6}$' })),
  },
  { $id: 'ScheduleOccurrencesQuery' },
);

const ScheduleToolDecl = Type.Object({
  name: Type.String(),
  description: Type.String(),
  inputSchema: Type.Object({}, { additionalProperties: true }),
});
const ScheduleToolList = Type.Object({ tools: Type.Array(ScheduleToolDecl) }, { $id: 'ScheduleToolList' });
const ScheduleToolCall = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    arguments: Type.Optional(Type.Unknown()),
  },
  { $id: 'ScheduleToolCall' },
);
type ScheduleToolCall = Static<typeof ScheduleToolCall>;

// ---- routes ---------------------------------------------------------------------------------------

const ID_ERRORS = ['BAD_REQUEST', 'NOT_FOUND', 'CAPABILITY_UNAVAILABLE'] as RouteDef['errors'];
const json = (schema: RouteDef['response']['schema']) => ({ status: 200, schema });

/** The schedule resource. Gated by the `schedule` capability (`[tools] schedule_enabled`). */
export const SCHEDULE_ROUTE = {
  create: {
    id: 'schedules.create',
    method: 'POST',
    path: '/schedules',
    summary: 'Create a schedule',
    body: CreateScheduleRequest,
    response: json(Schedule),
    errors: ['BAD_REQUEST', 'CAPABILITY_UNAVAILABLE'],
    capability: 'schedule',
  },
  list: {
    id: 'schedules.list',
    method: 'GET',
    path: '/schedules',
    summary: 'List schedules (paused and deleted included)',
    response: json(ScheduleList),
    errors: ['CAPABILITY_UNAVAILABLE'],
    capability: 'schedule',
  },
  get: {
    id: 'schedules.get',
    method: 'GET',
    path: '/schedules/{id}',
    summary: 'Read a schedule',
    response: json(Schedule),
    errors: ID_ERRORS,
    capability: 'schedule',
  },
  update: {
    id: 'schedules.update',
    method: 'PATCH',
    path: '/schedules/{id}',
    summary: 'Update a schedule (expected_revision: compare-and-set)',
    body: UpdateScheduleRequest,
    response: json(Schedule),
    errors: [...ID_ERRORS, 'CONFLICT'],
    capability: 'schedule',
  },
  delete: {
    id: 'schedules.delete',
    method: 'DELETE',
    path: '/schedules/{id}',
    summary: 'Soft-delete a schedule (phase deleted)',
    response: json(Schedule),
    errors: ID_ERRORS,
    capability: 'schedule',
  },
  pause: {
    id: 'schedules.pause',
    method: 'POST',
    path: '/schedules/{id}/pause',
    summary: 'Pause a schedule',
    response: json(Schedule),
    errors: ID_ERRORS,
    capability: 'schedule',
  },
  resume: {
    id: 'schedules.resume',
    method: 'POST',
    path: '/schedules/{id}/resume',
    summary: 'Resume a paused schedule',
    response: json(Schedule),
    errors: ID_ERRORS,
    capability: 'schedule',
  },
  occurrences: {
    id: 'schedules.occurrences',
    method: 'GET',
    path: '/schedules/{id}/occurrences',
    summary: 'Planned and past occurrences, by ordinal',
    query: OccurrencesQuery,
    response: json(OccurrenceList),
    errors: ID_ERRORS,
    capability: 'schedule',
  },
  tools: {
    id: 'schedule.tools',
    method: 'GET',
    path: '/schedule/tools',
    summary: 'Schedule tool declarations',
    response: json(ScheduleToolList),
    errors: ['CAPABILITY_UNAVAILABLE'],
    capability: 'schedule',
  },
  call: {
    id: 'schedule.call',
    method: 'POST',
    path: '/schedule/call',
    summary: 'Call a schedule tool; answers the raw tool result',
    body: ScheduleToolCall,
    response: { status: 200 },
    errors: ID_ERRORS,
    capability: 'schedule',
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const SCHEDULE_ROUTES: RouteDef[] = Object.values(SCHEDULE_ROUTE);
