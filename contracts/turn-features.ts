// contracts/turn-features.ts: wire and config schemas of what shapes a run beyond its prompt: the
// structured-output wrapper, hook entries and run overrides (wire-notes §2.1), the `[budget]` and
// `[hooks]` config sections, and POST /help. actors/turn-features/* implement them.
import { Type, type Static } from 'typebox';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * `output_schema` in its wrapper form. A body whose `output_schema` is not this wrapper is taken as a
 * raw JSON Schema (actors/turn-features/output-schema.ts tells them apart).
 */
const OutputSchemaWrapper = Type.Object(
  {
    schema: Type.Object({}, { additionalProperties: true }),
    name: Type.Optional(Type.String({ minLength: 1 })),
    strict: Type.Optional(Type.Boolean()),
    compat: Type.Optional(Type.Union([Type.Literal('lossy'), Type.Literal('strict')])),
    format: Type.Optional(Type.String()),
  },
  { $id: 'OutputSchemaWrapper' },
);
type OutputSchemaWrapper = Static<typeof OutputSchemaWrapper>;

/** `output_schema`: the wrapper or a raw JSON Schema whose root is an object schema. */
export const OutputSchema = Type.Object(
  {},
  {
    $id: 'OutputSchema',
    additionalProperties: true,
    description:
      'Either {schema, name?, strict?, compat?: "lossy"|"strict", format?: "warren_v1"} or a raw JSON Schema with an object root',
  },
);

/** One element of a turn response's `schema_warnings`. */
export const SchemaWarning = Type.Object(
  { provider: Type.String(), path: Type.String(), message: Type.String() },
  { $id: 'SchemaWarning' },
);
export type SchemaWarning = Static<typeof SchemaWarning>;

const HOOK_POINTS = [
  'run_started',
  'run_completed',
  'run_failed',
  'pre_llm_request',
  'post_llm_response',
  'pre_tool_execution',
  'post_tool_execution',
  'turn_boundary',
] as const;
export type HookPoint = (typeof HOOK_POINTS)[number];
const HookPointSchema = Type.Union(
  [
    Type.Literal('run_started'),
    Type.Literal('run_completed'),
    Type.Literal('run_failed'),
    Type.Literal('pre_llm_request'),
    Type.Literal('post_llm_response'),
    Type.Literal('pre_tool_execution'),
    Type.Literal('post_tool_execution'),
    Type.Literal('turn_boundary'),
  ],
  { $id: 'HookPoint' },
);

const StringMap = Type.Record(Type.String(), Type.String());

/** Where a hook runs, tagged on `type` with its fields beside the tag. */
export const HookRuntime = Type.Union(
  [
    Type.Object({
      type: Type.Literal('command'),
      command: Type.String({ minLength: 1 }),
      args: Type.Optional(Type.Array(Type.String())),
      env: Type.Optional(StringMap),
    }),
    Type.Object({ type: Type.Literal('http'), url: Type.String({ minLength: 1 }), headers: Type.Optional(StringMap) }),
    Type.Object({ type: Type.Literal('in_process'), name: Type.String({ minLength: 1 }), config: Type.Optional(Type.Unknown()) }),
  ],
  { $id: 'HookRuntime' },
);
export type HookRuntime = Static<typeof HookRuntime>;

/** One hook (a `[[hooks.entries]]` table or an element of `hooks_override.entries`). */
export const HookEntryConfig = Type.Object(
  {
    id: Type.String({ minLength: 1 }),
    enabled: Type.Optional(Type.Boolean()),
    point: HookPointSchema,
    mode: Type.Optional(Type.Union([Type.Literal('foreground'), Type.Literal('background')])),
    capability: Type.Optional(Type.Union([Type.Literal('observe'), Type.Literal('guardrail')])),
    priority: Type.Optional(Type.Integer()),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 1, maximum: 3_600_000 })),
    runtime: HookRuntime,
  },
  { $id: 'HookEntryConfig' },
);
export type HookEntryConfig = Static<typeof HookEntryConfig>;

/** `hooks_override`: extra entries for this run, and config entries switched off by id. */
export const HookRunOverrides = Type.Object(
  { entries: Type.Optional(Type.Array(HookEntryConfig)), disable: Type.Optional(Type.Array(Type.String())) },
  { $id: 'HookRunOverrides' },
);
export type HookRunOverrides = Static<typeof HookRunOverrides>;

/** A hook's answer: `{}` or an allow/deny decision. */
export const HOOK_DENY_REASONS = ['policy_violation', 'safety_violation', 'schema_violation', 'timeout', 'runtime_error'] as const;
export type HookDenyReason = (typeof HOOK_DENY_REASONS)[number];

const sectionOptions = { default: {}, additionalProperties: true } as const;

/** A duration: seconds as a number, or a string such as "500ms", "90s", "5m", "1h". */
export const DurationValue = Type.Union([Type.Number({ exclusiveMinimum: 0 }), Type.String({ pattern: '^[0-9]+(\\.[0-9]+)?(ms|s|m|h)$' })]);
export type DurationValue = Static<typeof DurationValue>;

/** `[budget]`: per-run limits; unset means unlimited. */
export const BudgetSection = Type.Object(
  {
    max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
    max_tool_calls: Type.Optional(Type.Integer({ minimum: 0 })),
    max_duration: Type.Optional(DurationValue),
  },
  sectionOptions,
);

/** A Rust `Duration` as the reference serializes it: whole seconds plus nanoseconds. */
const WireDuration = Type.Object(
  { secs: Type.Integer({ minimum: 0 }), nanos: Type.Integer({ minimum: 0, maximum: 999_999_999 }) },
  { additionalProperties: false },
);

/**
 * `budget_limits` on create/continue (the reference's BudgetLimits): this run's limits, enforced like
 * `[budget]` / `[limits] max_turn_duration` (actors/turn-features/budget.ts). A request can only tighten
 * the operator's config: where both set a limit, the smaller wins.
 */
export const BudgetLimitsRequest = Type.Object(
  {
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    max_tool_calls: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    max_duration: Type.Optional(Nullable(WireDuration)),
    max_turn_duration: Type.Optional(Nullable(WireDuration)),
  },
  { additionalProperties: false, $id: 'BudgetLimits' },
);
export type BudgetLimitsRequest = Static<typeof BudgetLimitsRequest>;

/** `[hooks]`: defaults and the configured entries. */
export const HooksSection = Type.Object(
  {
    default_timeout_ms: Type.Integer({ minimum: 1, maximum: 3_600_000, default: 5000 }),
    payload_max_bytes: Type.Integer({ minimum: 1, default: 131072 }),
    background_max_concurrency: Type.Integer({ minimum: 1, default: 32 }),
    entries: Type.Array(HookEntryConfig, { default: [] }),
  },
  sectionOptions,
);

/** POST /help body. */
export const HelpRequest = Type.Object(
  {
    question: Type.String({ minLength: 1 }),
    execution_mode: Type.Optional(Nullable(Type.Union([Type.Literal('explain_only'), Type.Literal('plan_execution')]))),
    prompt: Type.Optional(Nullable(Type.String())),
    model: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
    provider: Type.Optional(
      Nullable(
        Type.Union([
          Type.Literal('anthropic'),
          Type.Literal('openai'),
          Type.Literal('gemini'),
          Type.Literal('self_hosted'),
          Type.Literal('other'),
          Type.Literal('scripted'),
        ]),
      ),
    ),
    max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 4294967295 }))),
  },
  { $id: 'HelpRequest' },
);
export type HelpRequest = Static<typeof HelpRequest>;

const Strict = { additionalProperties: false } as const;
const HookRef = { hook_id: Type.String(), point: HookPointSchema };
const HookFailureReason = Type.Union([
  Type.Object({ reason_code: Type.Literal('timeout'), timeout_ms: Type.Integer() }, Strict),
  Type.Object(
    { reason_code: Type.Union([Type.Literal('execution_failed'), Type.Literal('config_invalid')]), message: Type.String() },
    Strict,
  ),
  Type.Object({ reason_code: Type.Literal('observe_only_violation') }, Strict),
]);

/** Payload schemas of the session events this feature set emits (wire-notes §2.2), by kind. */
export const TURN_FEATURE_EVENTS = {
  hook_started: Type.Object(HookRef, Strict),
  hook_completed: Type.Object({ ...HookRef, duration_ms: Type.Number() }, Strict),
  hook_failed: Type.Object({ ...HookRef, reason: HookFailureReason }, Strict),
  hook_denied: Type.Object(
    {
      ...HookRef,
      reason_code: Type.Union([
        Type.Literal('policy_violation'),
        Type.Literal('safety_violation'),
        Type.Literal('schema_violation'),
        Type.Literal('timeout'),
        Type.Literal('runtime_error'),
      ]),
      message: Type.String(),
      payload: Type.Optional(Type.Unknown()),
    },
    Strict,
  ),
  extraction_succeeded: Type.Object(
    { session_id: Type.String(), structured_output: Type.Unknown(), schema_warnings: Type.Optional(Type.Array(SchemaWarning)) },
    Strict,
  ),
  extraction_failed: Type.Object(
    { session_id: Type.String(), last_output: Type.String(), attempts: Type.Integer(), reason: Type.String() },
    Strict,
  ),
};
