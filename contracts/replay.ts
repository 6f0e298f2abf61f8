// contracts/replay.ts: record, replay, fork, rerun and portable sessions (issue 34, docs/replay.md).
// The stored turn recording (validated on read), the bodies of the replay routes and their catalog.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';
import type { ErrorCode } from './errors.ts';

/** The record namespace of one session's turn recordings (key: the turn's zero-padded start time and request id). */
export const recordingNs = (sessionId: string): string => `recording:${sessionId}`;
/**
 * Content-addressed parts of recordings (tool definition lists, hook lists), stored once per realm:
 * key = sha256 of the canonical JSON (actors/replay/recording-blobs.ts).
 */
export const RECORDING_BLOB_NS = 'recording.blob';
/** Where recordings written before blobs were shared per realm keep their blobs (read as a fallback). */
export const recordingBlobNs = (sessionId: string): string => `recording.blob:${sessionId}`;
/** The namespace of the retention markers (key: the session id): how many of a session's recordings retention removed. */
export const RECORDING_PRUNED_NS = 'recording.pruned';

/** A session's recordings removed by `[ledger]` retention with the turns' events (actors/replay/recording-retention.ts). */
export const RecordingPruned = Type.Object(
  {
    v: Type.Literal(1),
    /** How many turns (the oldest) lost their recording. */
    turns: Type.Integer({ minimum: 1 }),
    /** Start time of the newest turn whose recording was removed. */
    through_started_at_ms: Type.Number(),
    /** When the last removal happened. */
    at_ms: Type.Number(),
  },
  { $id: 'RecordingPruned' },
);
export type RecordingPruned = Static<typeof RecordingPruned>;

/** One model call as Warren sent it: the parts not already in the transcript, and a hash of the messages. */
export const RecordedRequest = Type.Object({
  provider: Type.String(),
  model: Type.String(),
  system: Type.Optional(Type.String()),
  /** sha256 of the canonical tool definitions; the list itself is stored once per realm (RECORDING_BLOB_NS). */
  tools_hash: Type.String(),
  tools_count: Type.Integer({ minimum: 0 }),
  max_tokens: Type.Integer(),
  json_schema: Type.Optional(Type.Unknown()),
  /** sha256 of the canonical messages (created_at stripped); the messages themselves are the transcript's. */
  messages_hash: Type.String(),
  messages_count: Type.Integer({ minimum: 0 }),
  /**
   * sha256 of the run's hooks (config entries and the request's hooks_override, as they run: see
   * actors/replay/hook-summary.ts); the list is stored once per realm beside the tool lists. Absent: no hook.
   */
  hooks_hash: Type.Optional(Type.String()),
});
export type RecordedRequest = Static<typeof RecordedRequest>;

export const RecordedCall = Type.Object({
  request: RecordedRequest,
  /** The normalized reply: assistant blocks, stop reason, usage. */
  response: Type.Object({ blocks: Type.Array(Type.Unknown()), stop_reason: Type.String(), usage: Type.Unknown() }),
  duration_ms: Type.Number(),
  /** `[record] raw_streams`: the streamed deltas as received (bounded by `[record] raw_stream_max_bytes`). */
  raw: Type.Optional(Type.Array(Type.Unknown())),
  raw_truncated: Type.Optional(Type.Boolean()),
});
export type RecordedCall = Static<typeof RecordedCall>;

export const RecordedTool = Type.Object({
  id: Type.String(),
  name: Type.String(),
  /** sha256 of the canonical arguments (the arguments are in the transcript's tool_use block). */
  args_hash: Type.String(),
  content: Type.String(),
  is_error: Type.Optional(Type.Boolean()),
  timed_out_ms: Type.Optional(Type.Number()),
  duration_ms: Type.Number(),
});
export type RecordedTool = Static<typeof RecordedTool>;

/** The run features of a turn's request, kept so a replay runs the turn under the same plan. */
const TurnFeatures = Type.Object({
  output_schema: Type.Optional(Type.Unknown()),
  structured_output_retries: Type.Optional(Type.Integer({ minimum: 0 })),
  hooks_override: Type.Optional(Type.Unknown()),
  budget_limits: Type.Optional(Type.Unknown()),
});

/** One committed turn's recording, written in the turn's own commit. */
export const TurnRecording = Type.Object(
  {
    v: Type.Literal(1),
    started_at_ms: Type.Number(),
    request_id: Type.String(),
    /** Transcript index of the turn's first new row, and how many rows the turn committed. */
    at_row: Type.Integer({ minimum: 0 }),
    rows: Type.Integer({ minimum: 0 }),
    /** The turn's input (what a replay submits again); the transient context is never in the transcript. */
    input: Type.Object({
      prompt: Type.Unknown(),
      injected_context: Type.Optional(Type.Array(Type.Unknown())),
      system_append: Type.Optional(Type.String()),
      transient_context: Type.Optional(Type.String()),
      /** The request's run features (output_schema, structured_output_retries, hooks_override, budget_limits), as sent. */
      features: Type.Optional(TurnFeatures),
    }),
    calls: Type.Array(RecordedCall),
    tools: Type.Array(RecordedTool),
    /** Model calls made after the commit (structured-output extraction), recorded by a second write. */
    late: Type.Optional(Type.Boolean()),
    /**
     * An exported recording's hook hashes are keyed (`hmac:`) under this salt (one random salt per export,
     * also in the file's header): a replay computes its hooks' summary under it. Absent: `sha256:` hashes.
     */
    hook_salt: Type.Optional(Type.String({ pattern: '^[0-9a-f]{32}$' })),
  },
  { $id: 'TurnRecording' },
);
export type TurnRecording = Static<typeof TurnRecording>;

/** A replay's first divergence: which field of which call of which turn. */
export const Divergence = Type.Object(
  {
    turn: Type.Integer({ minimum: 1 }),
    call: Type.Integer({ minimum: 0 }),
    /** `request`: a model call's request; `tool`: a tool call; `turn`: the turn itself (failed, or a call count changed). */
    kind: Type.Enum(['request', 'tool', 'turn']),
    path: Type.String(),
    recorded: Type.Unknown(),
    now: Type.Unknown(),
  },
  { $id: 'ReplayDivergence' },
);
export type Divergence = Static<typeof Divergence>;

export const ReplayReport = Type.Object(
  {
    source_session_id: Type.String(),
    replay_session_id: Type.String(),
    status: Type.Enum(['identical', 'diverged', 'failed']),
    turns: Type.Integer(),
    turns_replayed: Type.Integer(),
    calls_checked: Type.Integer(),
    tools_answered: Type.Integer(),
    duration_ms: Type.Number(),
    divergence: Type.Optional(Divergence),
    /**
     * Turns before the first recorded one (made before recording was on, or whose recording retention
     * removed): their history is carried into the replay session as it is, not checked.
     */
    unrecorded_turns: Type.Optional(Type.Integer()),
    /** Of the session's turns, how many lost their recording to `[ledger]` retention. */
    pruned_turns: Type.Optional(Type.Integer()),
    error: Type.Optional(Type.String()),
  },
  { $id: 'ReplayReport' },
);
export type ReplayReport = Static<typeof ReplayReport>;

export const ReplayBody = Type.Object(
  {
    /** Replay only the first N turns (default: all). */
    turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    /** Replace the system prompt for this replay (what-if: the report shows the first divergence). */
    system_prompt: Type.Optional(Type.String()),
  },
  { $id: 'ReplayRequest' },
);

export const ReplayAccepted = Type.Object({
  replay_session_id: Type.String(),
  request_id: Type.String(),
  status: Type.Literal('accepted'),
  report_url: Type.String(),
});

export const ForkBody = Type.Object(
  {
    /** Keep the history through this turn (1-based; 0 = only the system prompt). Default: all. */
    at_turn: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Keep the history through the last turn completed at or before this ledger seq. */
    at_seq: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { $id: 'ForkRequest' },
);
export const ForkResponse = Type.Object(
  {
    session_id: Type.String(),
    forked_from: Type.String(),
    at_turn: Type.Integer(),
    message_count: Type.Integer(),
  },
  { $id: 'ForkResponse' },
);

/** `GET /sessions/{id}/turns`: the session's turns, what a fork or a replay takes to stop at each. */
export const SessionTurns = Type.Object(
  {
    session_id: Type.String(),
    message_count: Type.Integer({ minimum: 0 }),
    turns: Type.Array(
      Type.Object({
        /** 1-based; `POST /sessions/{id}/fork {at_turn}` keeps the history through this turn. */
        turn: Type.Integer({ minimum: 1 }),
        /** Transcript index of the turn's first row. */
        at_row: Type.Integer({ minimum: 0 }),
        /** The turn's prompt as text (the first 200 characters; `[non-text prompt]` for other content). */
        prompt: Type.String(),
        /** Whether the turn has a recording (it can be replayed). */
        recorded: Type.Boolean(),
        /** The `turns` value of `POST /sessions/{id}/replay` that replays through this turn (recorded turns only). */
        replay_turns: Type.Optional(Type.Integer({ minimum: 1 })),
      }),
    ),
  },
  { $id: 'SessionTurns' },
);
export type SessionTurns = Static<typeof SessionTurns>;

export const RerunBody = Type.Object(
  {
    model: Type.String({ minLength: 1 }),
    provider: Type.Optional(Type.String({ minLength: 1 })),
    /** Re-run only the first N turns (default: all). */
    turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
  },
  { $id: 'RerunRequest' },
);
const RerunTurn = Type.Object({
  turn: Type.Integer(),
  recorded_text: Type.String(),
  text: Type.String(),
  text_equal: Type.Boolean(),
  recorded_tool_calls: Type.Array(Type.String()),
  tool_calls: Type.Array(Type.String()),
  tool_calls_equal: Type.Boolean(),
  recorded_tokens: Type.Integer(),
  tokens: Type.Integer(),
  recorded_duration_ms: Type.Optional(Type.Number()),
  duration_ms: Type.Number(),
  /** Tool results served from the recording (calls that matched a recorded call by name and arguments). */
  tools_from_recording: Type.Integer(),
  error: Type.Optional(Type.String()),
});
export const RerunReport = Type.Object(
  {
    source_session_id: Type.String(),
    rerun_session_id: Type.String(),
    model: Type.String(),
    provider: Type.String(),
    turns: Type.Array(RerunTurn),
  },
  { $id: 'RerunReport' },
);
export type RerunReport = Static<typeof RerunReport>;

export const ImportResponse = Type.Object(
  { session_id: Type.String(), message_count: Type.Integer(), recordings: Type.Integer(), ledger_entries: Type.Integer() },
  { $id: 'ImportResponse' },
);
const ImportQuery = Type.Object({ new_id: Type.Optional(Type.Enum(['true', 'false'])) });

/** The format of an exported session file (JSON Lines, first line is the header). */
export const EXPORT_FORMAT = 'warren.session';
export const EXPORT_VERSION = 1;

const json = (schema: RouteDef['response']['schema']) => ({ status: 200, schema });
const ERRS: ErrorCode[] = ['BAD_REQUEST', 'SESSION_NOT_FOUND'];

export const REPLAY_ROUTE = {
  replay: {
    id: 'sessions.replay',
    method: 'POST',
    path: '/sessions/{id}/replay',
    summary: 'Replay a session from its recording in a new session (no model, no tools); reports identical or the first divergence',
    body: ReplayBody,
    bodyOptional: true,
    response: json(ReplayReport),
    errors: [...ERRS, 'SESSION_BUSY', 'CONFLICT'],
    headers: ['prefer'],
    capability: 'session_replay',
  },
  replayReport: {
    id: 'sessions.replayReport',
    method: 'GET',
    path: '/sessions/{id}/replay-report',
    summary: "A replay session's report (running, identical or the first divergence)",
    response: json(ReplayReport),
    errors: ['SESSION_NOT_FOUND', 'NOT_FOUND'],
    capability: 'session_replay',
  },
  turns: {
    id: 'sessions.turns',
    method: 'GET',
    path: '/sessions/{id}/turns',
    summary: "The session's turns: where each starts, its prompt, whether it is recorded, and the replay bound through it",
    response: json(SessionTurns),
    errors: ERRS,
    capability: 'session_replay',
  },
  fork: {
    id: 'sessions.fork',
    method: 'POST',
    path: '/sessions/{id}/fork',
    summary: "A new session whose history is the source's up to a turn or ledger seq",
    body: ForkBody,
    bodyOptional: true,
    response: json(ForkResponse),
    errors: ERRS,
    capability: 'session_replay',
  },
  rerun: {
    id: 'sessions.rerun',
    method: 'POST',
    path: '/sessions/{id}/rerun',
    summary: "Re-run a session's user inputs against another model; per-turn text, tool-call, token and time differences",
    body: RerunBody,
    response: json(RerunReport),
    errors: [...ERRS, 'PROVIDER_ERROR'],
    capability: 'session_replay',
  },
  export: {
    id: 'sessions.export',
    method: 'GET',
    path: '/sessions/{id}/export',
    summary: 'The session as one versioned JSON Lines file (record, transcript, recording, ledger; no secrets)',
    response: { status: 200, contentType: 'text/plain' },
    errors: ERRS,
    capability: 'session_replay',
  },
  import: {
    id: 'sessions.import',
    method: 'POST',
    path: '/sessions/import',
    summary: 'Import an exported session file (JSON Lines) into this realm',
    query: ImportQuery,
    response: json(ImportResponse),
    errors: ['BAD_REQUEST', 'CONFLICT', 'PAYLOAD_TOO_LARGE'],
    capability: 'session_replay',
  },
} satisfies Record<string, RouteDef>;
export const REPLAY_ROUTES: readonly RouteDef[] = Object.values(REPLAY_ROUTE);

/** `[record]`: what each turn's recording keeps (docs/replay.md). */
export const RecordSection = Type.Object(
  {
    /** Record every committed turn's model calls and tool results (needed by replay and rerun). */
    enabled: Type.Boolean({ default: true }),
    /** Also keep the provider's streamed deltas, bounded per call by raw_stream_max_bytes. */
    raw_streams: Type.Boolean({ default: false }),
    raw_stream_max_bytes: Type.Integer({ minimum: 0, default: 262_144 }),
  },
  { additionalProperties: false },
);

/** The /warren/extensions entry. */
export const REPLAY_EXTENSION = {
  name: 'session_replay',
  description:
    "Every committed turn's model calls and tool results are recorded with the turn's commit ([record]). POST /sessions/{id}/replay re-runs them in a new session labelled warren.replay_of with no model and no tool call, and reports identical or the first divergence (turn, call, field path, recorded vs now); Prefer: respond-async answers 202 and reports replay_progress on the replay session's stream. GET /sessions/{id}/turns lists the turns a fork or a replay can stop at; POST /sessions/{id}/fork branches at a turn or ledger seq (warren.forked_from); POST /sessions/{id}/rerun runs the user inputs against another model with a per-turn diff; GET /sessions/{id}/export and POST /sessions/import move a session between realms as versioned JSON Lines.",
  routes: REPLAY_ROUTES.map((r) => `${r.method} ${r.path}`),
  request_headers: ['Prefer: respond-async'],
  config_keys: ['record.enabled', 'record.raw_streams', 'record.raw_stream_max_bytes'],
};
