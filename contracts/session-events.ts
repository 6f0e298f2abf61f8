// contracts/session-events.ts: one schema per session event kind (the `payload` of a ledger entry and
// of an SSE envelope, wire-notes §2.2). EventHub.publish and the turn runner's emit are typed by this
// map, so an event is built against its schema; test/contracts/session-events.test.ts validates every
// event a real server emits against it (extra or missing fields fail).
import { Type, type Static, type TSchema } from 'typebox';
import { McpOperation, McpServerState } from './mcp.ts';
import { TURN_FEATURE_EVENTS } from './turn-features.ts';
import { ContentBlock, ContentInput, ProviderUsage, StopReason, WireUsage } from './transcript.ts';

const Strict = { additionalProperties: false } as const;

/** A provider retry about to happen: the failure and the backoff plan (the `retrying` event). */
export const RetryNotice = Type.Object(
  {
    failure: Type.Object(
      {
        kind: Type.Union([
          Type.Literal('rate_limited'),
          Type.Literal('network_timeout'),
          Type.Literal('call_timeout'),
          Type.Literal('retryable_provider_error'),
        ]),
        message: Type.String(),
        provider: Type.String(),
        retry_after_ms: Type.Optional(Type.Number()),
      },
      Strict,
    ),
    plan: Type.Object(
      {
        attempt: Type.Integer(),
        max_retries: Type.Integer(),
        computed_delay_ms: Type.Number(),
        selected_delay_ms: Type.Number(),
        retry_after_hint_ms: Type.Optional(Type.Number()),
        rate_limit_floor_applied: Type.Boolean(),
        budget_capped: Type.Boolean(),
      },
      Strict,
    ),
  },
  { $id: 'RetryNotice', ...Strict },
);
export type RetryNotice = Static<typeof RetryNotice>;

const ToolRef = { id: Type.String(), name: Type.String() };

/** Payload schema of every session event kind, by kind. */
export const SESSION_EVENTS = {
  run_started: Type.Object(
    { session_id: Type.String(), input: Type.Object({ kind: Type.Literal('content'), content: ContentInput }, Strict) },
    Strict,
  ),
  run_completed: Type.Object(
    {
      session_id: Type.String(),
      result: Type.String(),
      extraction_required: Type.Boolean(),
      usage: WireUsage,
      structured_output: Type.Optional(Type.Unknown()),
      terminal_cause_kind: Type.Optional(Type.String()),
    },
    Strict,
  ),
  run_failed: Type.Object(
    {
      session_id: Type.String(),
      error_report: Type.Object({ class: Type.String(), message: Type.String(), reason: Type.Optional(Type.String()) }, Strict),
      terminal_cause_kind: Type.Optional(Type.String()),
    },
    Strict,
  ),
  budget_warning: Type.Object(
    {
      budget_type: Type.Union([Type.Literal('tokens'), Type.Literal('time'), Type.Literal('tool_calls')]),
      used: Type.Number(),
      limit: Type.Number(),
      percent: Type.Number(),
    },
    Strict,
  ),
  turn_started: Type.Object({ turn_number: Type.Integer({ minimum: 1 }) }, Strict),
  turn_completed: Type.Object({ stop_reason: StopReason, usage: Type.Optional(ProviderUsage) }, Strict),
  text_delta: Type.Object({ delta: Type.String() }, Strict),
  text_complete: Type.Object({ content: Type.String() }, Strict),
  reasoning_delta: Type.Object({ delta: Type.String() }, Strict),
  retrying: Type.Object({ retry: RetryNotice }, Strict),
  tool_call_requested: Type.Object({ ...ToolRef, args: Type.Unknown() }, Strict),
  tool_execution_started: Type.Object(ToolRef, Strict),
  tool_execution_timed_out: Type.Object({ ...ToolRef, timeout_ms: Type.Number() }, Strict),
  tool_execution_completed: Type.Object(
    { ...ToolRef, content: Type.String(), is_error: Type.Boolean(), duration_ms: Type.Number() },
    Strict,
  ),
  tool_result_received: Type.Object({ ...ToolRef, content: Type.Array(ContentBlock), is_error: Type.Boolean() }, Strict),
  // Live MCP (actors/mcp-live.ts): a server's connection state changed; staged changes applied at a turn boundary.
  mcp_server_status: Type.Object(
    {
      session_id: Type.String(),
      server_name: Type.String(),
      state: McpServerState,
      staged: Type.Boolean(),
      tool_count: Type.Integer({ minimum: 0 }),
      error: Type.Optional(Type.Unknown()),
    },
    Strict,
  ),
  mcp_changes_applied: Type.Object(
    {
      session_id: Type.String(),
      applied_at_turn: Type.Integer(),
      changes: Type.Array(Type.Object({ operation: McpOperation, server_name: Type.Optional(Type.String()) }, Strict)),
    },
    Strict,
  ),
  /** Hooks and structured-output extraction (contracts/turn-features.ts). */
  ...TURN_FEATURE_EVENTS,
  // Replay (actors/replay/): progress of a replay on the replay session's stream (docs/replay.md).
  replay_progress: Type.Object(
    {
      source_session_id: Type.String(),
      turn: Type.Integer({ minimum: 0 }),
      turns: Type.Integer({ minimum: 0 }),
      status: Type.Enum(['running', 'identical', 'diverged', 'failed']),
      divergence: Type.Optional(Type.Unknown()),
    },
    Strict,
  ),
  // Schedules (actors/schedules/): a scheduled turn was admitted into this session (SPEC module event
  // `schedule_triggered`, source `scheduling`); its run_started follows.
  schedule_triggered: Type.Object(
    {
      session_id: Type.String(),
      source: Type.Literal('scheduling'),
      schedule_id: Type.String(),
      occurrence_id: Type.String(),
      due_at_utc: Type.String(),
    },
    Strict,
  ),
  // Skills (actors/skills): the skills a turn injected, or why a skill ref could not be resolved.
  skills_resolved: Type.Object(
    {
      skills: Type.Array(Type.Object({ source_uuid: Type.String(), skill_name: Type.String() }, Strict)),
      injection_bytes: Type.Integer({ minimum: 0 }),
    },
    Strict,
  ),
  skill_resolution_failed: Type.Object(
    {
      skill_key: Type.Optional(Type.Object({ source_uuid: Type.Optional(Type.String()), skill_name: Type.String() }, Strict)),
      reason: Type.Object({ reason_type: Type.String(), message: Type.String() }, { additionalProperties: true }),
    },
    Strict,
  ),
  // Context compaction (actors/compaction.ts) and the memory store it feeds (actors/memory).
  compaction_started: Type.Object(
    {
      input_tokens: Type.Integer({ minimum: 0 }),
      estimated_history_tokens: Type.Integer({ minimum: 0 }),
      message_count: Type.Integer({ minimum: 0 }),
      trigger: Type.Union([
        Type.Literal('history_tokens'),
        Type.Literal('provider_bytes'),
        Type.Literal('last_input_tokens'),
        Type.Literal('request_budget'),
      ]),
    },
    Strict,
  ),
  compaction_completed: Type.Object(
    {
      summary_tokens: Type.Integer({ minimum: 0 }),
      messages_before: Type.Integer({ minimum: 0 }),
      messages_after: Type.Integer({ minimum: 0 }),
      tokens_before: Type.Integer({ minimum: 0 }),
      tokens_after: Type.Integer({ minimum: 0 }),
    },
    Strict,
  ),
  compaction_failed: Type.Object(
    {
      reason: Type.Object(
        {
          kind: Type.Union([
            Type.Literal('llm_failed'),
            Type.Literal('empty_summary'),
            Type.Literal('memory_indexing_failed'),
            Type.Literal('transcript_rewrite_failed'),
          ]),
          error_class: Type.Optional(Type.String()),
          message: Type.Optional(Type.String()),
        },
        Strict,
      ),
    },
    Strict,
  ),
  memory_indexed: Type.Object({ module: Type.Literal('memory'), documents: Type.Integer({ minimum: 1 }) }, Strict),
} satisfies Record<string, TSchema>;

export type SessionEventKind = keyof typeof SESSION_EVENTS;
/** The payload of one session event kind. */
export type SessionEventPayload<K extends SessionEventKind> = Static<(typeof SESSION_EVENTS)[K]>;
