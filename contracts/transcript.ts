// contracts/transcript.ts: content input and transcript message schemas. The transcript row stored
// by storage/ is exactly the history message sent on the wire (SPEC.md "History"), so one schema
// serves storage, providers and GET /sessions/{id}/history.
import { Type, type Static } from 'typebox';

const TextBlock = Type.Object({ type: Type.Literal('text'), text: Type.String() }, { $id: 'TextBlock' });
type TextBlock = Static<typeof TextBlock>;

const ImageBlock = Type.Object(
  {
    type: Type.Literal('image'),
    media_type: Type.String(),
    source: Type.Union([Type.Literal('inline'), Type.Literal('blob')]),
    data: Type.Optional(Type.String()),
    blob_id: Type.Optional(Type.String()),
  },
  { $id: 'ImageBlock' },
);
type ImageBlock = Static<typeof ImageBlock>;

/** Skill text injected for a turn (contracts/skills.ts; actors/skills): projected to providers as text. */
const SkillContextBlock = Type.Object(
  {
    type: Type.Literal('skill_context'),
    skill_key: Type.Object({ source_uuid: Type.String(), skill_name: Type.String() }),
    text: Type.String(),
  },
  { $id: 'SkillContextBlock' },
);
type SkillContextBlock = Static<typeof SkillContextBlock>;

export const ContentBlock = Type.Union([TextBlock, ImageBlock, SkillContextBlock], { $id: 'ContentBlock' });
export type ContentBlock = Static<typeof ContentBlock>;

/** SPEC.md "Content input": a string or an array of typed content blocks. */
export const ContentInput = Type.Union([Type.String(), Type.Array(ContentBlock)], { $id: 'ContentInput' });
export type ContentInput = Static<typeof ContentInput>;

export const StopReason = Type.Union(
  [
    Type.Literal('end_turn'),
    Type.Literal('tool_use'),
    Type.Literal('max_tokens'),
    Type.Literal('stop_sequence'),
    Type.Literal('content_filter'),
    Type.Literal('cancelled'),
  ],
  { $id: 'StopReason' },
);
export type StopReason = Static<typeof StopReason>;

export const AssistantBlock = Type.Union(
  [
    Type.Object({ block_type: Type.Literal('text'), data: Type.Object({ text: Type.String() }) }),
    Type.Object({ block_type: Type.Literal('reasoning'), data: Type.Object({ text: Type.String() }) }),
    Type.Object({
      block_type: Type.Literal('tool_use'),
      data: Type.Object({ id: Type.String(), name: Type.String(), args: Type.Unknown() }),
    }),
  ],
  { $id: 'AssistantBlock' },
);
export type AssistantBlock = Static<typeof AssistantBlock>;

export const ToolResult = Type.Object(
  { tool_use_id: Type.String(), content: Type.String(), is_error: Type.Optional(Type.Boolean()) },
  { $id: 'ToolResult' },
);
export type ToolResult = Static<typeof ToolResult>;

export const SystemMessage = Type.Object({
  role: Type.Literal('system'),
  content: Type.String(),
  created_at: Type.String(),
  identity: Type.Optional(Type.Object({ idempotency_key: Type.Optional(Type.String()), source: Type.Optional(Type.String()) })),
  prompt_version: Type.Optional(Type.Object({ key: Type.String(), version: Type.Integer() })),
});
export const UserMessage = Type.Object({
  role: Type.Literal('user'),
  content: ContentInput,
  created_at: Type.String(),
  transcript_role: Type.Optional(
    Type.Union([Type.Literal('conversational'), Type.Literal('injected_context'), Type.Literal('compaction_summary')]),
  ),
  /** Set on a turn Warren started itself (a schedule occurrence): its source and idempotency marker. */
  identity: Type.Optional(Type.Object({ idempotency_key: Type.Optional(Type.String()), source: Type.Optional(Type.String()) })),
});
export const AssistantMessage = Type.Object({
  role: Type.Literal('block_assistant'),
  blocks: Type.Array(AssistantBlock),
  stop_reason: StopReason,
  created_at: Type.String(),
});
export const ToolResultsMessage = Type.Object({
  role: Type.Literal('tool_results'),
  results: Type.Array(ToolResult),
  created_at: Type.String(),
});

/** One transcript row = one history message (oldest to newest). */
export const Message = Type.Union([SystemMessage, UserMessage, AssistantMessage, ToolResultsMessage], { $id: 'Message' });
export type SystemMessage = Static<typeof SystemMessage>;
export type UserMessage = Static<typeof UserMessage>;
export type AssistantMessage = Static<typeof AssistantMessage>;
export type ToolResultsMessage = Static<typeof ToolResultsMessage>;
export type Message = SystemMessage | UserMessage | AssistantMessage | ToolResultsMessage;

/** Token usage as a provider reports it for one call. */
export const ProviderUsage = Type.Object(
  {
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    cache_creation_tokens: Type.Optional(Type.Integer()),
    cache_read_tokens: Type.Optional(Type.Integer()),
  },
  { $id: 'ProviderUsage' },
);
export type ProviderUsage = Static<typeof ProviderUsage>;

/** WireUsage: total_tokens = input + output (cache counts are reported, not added). */
export const WireUsage = Type.Object(
  {
    input_tokens: Type.Integer(),
    output_tokens: Type.Integer(),
    total_tokens: Type.Integer(),
    cache_creation_tokens: Type.Optional(Type.Integer()),
    cache_read_tokens: Type.Optional(Type.Integer()),
  },
  { $id: 'WireUsage' },
);
export type WireUsage = Static<typeof WireUsage>;
