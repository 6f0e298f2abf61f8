// contracts/session.ts: wire schemas of the /sessions resource (SPEC.md "Resources and their fields").
// Unknown request fields are ignored (SPEC "Versioning": older servers ignore newer fields).
import { Type, type Static } from 'typebox';
import { ContentBlock, ContentInput, Message, WireUsage } from './transcript.ts';
import { BudgetLimitsRequest, HookRunOverrides, OutputSchema, SchemaWarning } from './turn-features.ts';
import { SkillDiagnostics, SkillKey, SkillRef } from './skills.ts';
import { BusyPolicy } from './busy.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const U32 = Type.Integer({ minimum: 0, maximum: 4294967295 });

const SystemPromptOverride = Type.Union([Type.Null(), Type.String(), Type.Object({ action: Type.Literal('disable') })], {
  $id: 'SystemPromptOverride',
});
type SystemPromptOverride = Static<typeof SystemPromptOverride>;

export const ProviderId = Type.Union(
  // Spelled out (not .map) so the static type is the literal union, not never.
  [
    Type.Literal('anthropic'),
    Type.Literal('openai'),
    Type.Literal('gemini'),
    Type.Literal('self_hosted'),
    Type.Literal('other'),
    Type.Literal('scripted'),
  ],
  { $id: 'ProviderId' },
);
/** A provider adapter's name (the `provider` request field). */
export type ProviderName = Static<typeof ProviderId>;

const AuthBindingRef = Type.Object(
  { realm: Type.String(), binding: Type.String(), profile: Type.Optional(Type.String()) },
  { $id: 'AuthBindingRef' },
);

export const PeerMeta = Type.Object({
  name: Type.Optional(Type.String()),
  description: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
});

const TurnFields = {
  prompt: ContentInput,
  injected_context: Type.Optional(Nullable(Type.Array(ContentInput))),
  transient_turn_context: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  model: Type.Optional(Nullable(Type.String({ minLength: 1 }))),
  provider: Type.Optional(Nullable(ProviderId)),
  auth_binding: Type.Optional(Nullable(AuthBindingRef)),
  max_tokens: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 4294967295 }))),
  output_schema: Type.Optional(Nullable(OutputSchema)),
  structured_output_retries: Type.Optional(Nullable(U32)),
  verbose: Type.Optional(Type.Boolean()),
  keep_alive: Type.Optional(Nullable(Type.Boolean())),
  comms_name: Type.Optional(Nullable(Type.String())),
  hooks_override: Type.Optional(Nullable(HookRunOverrides)),
  /** This run's budgets (the reference's BudgetLimits; enforced, see docs/streams-and-limits.md). */
  budget_limits: Type.Optional(Nullable(BudgetLimitsRequest)),
  /** Skills injected (as skill_context blocks) before this turn's prompt. */
  skill_refs: Type.Optional(Nullable(Type.Array(SkillRef, { maxItems: 64 }))),
  preload_skills: Type.Optional(Nullable(Type.Array(SkillKey, { maxItems: 64 }))),
  /** Warren extension (contracts/busy.ts): continue only; create accepts and ignores it. */
  busy_policy: Type.Optional(Nullable(BusyPolicy)),
};

/** POST /sessions body. */
export const CreateSessionRequest = Type.Object(
  {
    ...TurnFields,
    system_prompt: Type.Optional(SystemPromptOverride),
    peer_meta: Type.Optional(Nullable(PeerMeta)),
    labels: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
    enable_builtins: Type.Optional(Nullable(Type.Boolean())),
    enable_shell: Type.Optional(Nullable(Type.Boolean())),
    enable_memory: Type.Optional(Nullable(Type.Boolean())),
    enable_schedule: Type.Optional(Nullable(Type.Boolean())),
    enable_workgraph: Type.Optional(Nullable(Type.Boolean())),
  },
  { $id: 'CreateSessionRequest' },
);
export type CreateSessionRequest = Static<typeof CreateSessionRequest>;

/** POST /sessions/{id}/messages body. */
export const ContinueSessionRequest = Type.Object(
  {
    session_id: Type.String(),
    ...TurnFields,
    system_prompt: Type.Optional(Nullable(Type.String())),
    // Accepted so that reserved label keys are refused here as on create (wire-notes §11 item 13).
    peer_meta: Type.Optional(Nullable(PeerMeta)),
    labels: Type.Optional(Nullable(Type.Record(Type.String(), Type.String()))),
  },
  { $id: 'ContinueSessionRequest' },
);
export type ContinueSessionRequest = Static<typeof ContinueSessionRequest>;

const ExtractionError = Type.Object({ last_output: Type.String(), attempts: Type.Integer(), reason: Type.String() });

/** Create and continue share this shape; optional members are omitted, never null. */
export const TurnResponse = Type.Object(
  {
    session_id: Type.String(),
    session_ref: Type.Optional(Type.String()),
    text: Type.String(),
    turns: U32,
    tool_calls: U32,
    usage: WireUsage,
    terminal_cause_kind: Type.Optional(Type.String()),
    structured_output: Type.Optional(Type.Unknown()),
    extraction_error: Type.Optional(ExtractionError),
    schema_warnings: Type.Optional(Type.Array(SchemaWarning)),
    skill_diagnostics: Type.Optional(SkillDiagnostics),
  },
  { $id: 'TurnResponse' },
);
export type TurnResponse = Static<typeof TurnResponse>;

export const SessionDetail = Type.Object(
  {
    session_id: Type.String(),
    session_ref: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    message_count: Type.Integer(),
    total_tokens: Type.Integer(),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { $id: 'SessionDetail' },
);

const SessionSummary = Type.Object(
  {
    session_id: Type.String(),
    session_ref: Type.Optional(Type.String()),
    created_at: Type.Integer({ description: 'Unix seconds' }),
    updated_at: Type.Integer({ description: 'Unix seconds' }),
    message_count: Type.Integer(),
    total_tokens: Type.Integer(),
    is_active: Type.Boolean(),
    labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { $id: 'WireSessionSummary' },
);
export const SessionList = Type.Object({ sessions: Type.Array(SessionSummary) }, { $id: 'SessionList' });
export const ListSessionsQuery = Type.Object({
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  label: Type.Optional(Type.String()),
});

export const SessionStatus = Type.Object(
  {
    session_id: Type.String(),
    state: Type.String(),
    phase: Type.Optional(Type.String()),
    durable_resume_hold: Type.Optional(Type.Unknown()),
    /** Warren extension (busy policies): follow-up turns queued and steering inputs waiting; omitted when none. */
    follow_ups: Type.Optional(Type.Object({ queued: Type.Integer({ minimum: 0 }), steering: Type.Integer({ minimum: 0 }) })),
  },
  { $id: 'SessionStatus' },
);

export const HistoryQuery = Type.Object({
  offset: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
  limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })),
});
export const History = Type.Object(
  {
    session_id: Type.String(),
    session_ref: Type.Optional(Type.String()),
    message_count: Type.Integer(),
    offset: Type.Integer(),
    limit: Type.Optional(Type.Integer()),
    has_more: Type.Boolean(),
    messages: Type.Array(Message),
  },
  { $id: 'History' },
);

export const SystemContextRequest = Type.Object(
  {
    content: Type.Union([
      Type.Object({ type: Type.Literal('text'), text: Type.String() }),
      Type.Object({ type: Type.Literal('blocks'), blocks: Type.Array(ContentBlock) }),
      Type.Object({ type: Type.Literal('json'), value: Type.Unknown() }),
    ]),
    source: Type.Optional(Type.String()),
    idempotency_key: Type.Optional(Type.String({ minLength: 1 })),
  },
  { $id: 'SystemContextRequest' },
);
export type SystemContextRequest = Static<typeof SystemContextRequest>;
export const SystemContextResponse = Type.Object(
  { session_id: Type.String(), status: Type.Union([Type.Literal('applied'), Type.Literal('duplicate')]) },
  { $id: 'SystemContextResponse' },
);

export const SystemPromptRequest = Type.Object(
  {
    key: Type.String({ minLength: 1 }),
    content: Type.String(),
    expected_version: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    target_message_index: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    expected_parent_revision: Type.Optional(Nullable(Type.String())),
    actor: Type.Optional(Nullable(Type.String())),
  },
  { $id: 'SystemPromptRequest' },
);
export type SystemPromptRequest = Static<typeof SystemPromptRequest>;
/** What a system prompt replacement did (the response without its session_id and key). */
export const SystemPromptResult = Type.Object(
  {
    version: Type.Integer(),
    message_index: Type.Integer(),
    status: Type.Union([Type.Literal('applied'), Type.Literal('duplicate')]),
    transcript_revision: Type.String(),
  },
  { $id: 'SystemPromptResult' },
);
export type SystemPromptResult = Static<typeof SystemPromptResult>;

export const SystemPromptResponse = Type.Object(
  { session_id: Type.String(), key: Type.String(), ...SystemPromptResult.properties },
  { $id: 'SystemPromptResponse' },
);

export const InterruptResponse = Type.Object(
  { session_id: Type.String(), interrupted: Type.Boolean(), result: Type.String() },
  { $id: 'InterruptResponse' },
);
export const ArchiveResponse = Type.Object({ session_id: Type.String(), archived: Type.Literal(true) }, { $id: 'ArchiveResponse' });
export const CancelResponse = Type.Object(
  { request_id: Type.String(), cancelled: Type.Boolean(), reason: Type.Optional(Type.Literal('already_terminal')) },
  { $id: 'CancelResponse' },
);
