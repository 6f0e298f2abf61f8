// contracts/records.ts: schemas of what Warren stores. The store validates a SessionRecord and each
// LedgerEntry on read (storage/record-migrations.ts, after migrating older versions); the session kind
// validates its PersistedState when it hydrates (actors/session/session-host.ts).
import { Type, type Static } from 'typebox';
import { AuthBinding } from './auth.ts';
import { PeerMeta, ProviderId } from './session.ts';
import { ContentInput } from './transcript.ts';

/** The version every SessionRecord is written with. Older ones migrate on read (storage/record-migrations.ts). */
export const SESSION_RECORD_VERSION = 2;

/**
 * Durable per-session record: metadata plus the session kind's persisted state (opaque to storage).
 * v2 adds `archived_at_ms` (v1 records migrate: the archive time is taken as their last update).
 */
export const SessionRecord = Type.Object(
  {
    v: Type.Literal(2),
    session_id: Type.String({ minLength: 1 }),
    created_at_ms: Type.Number(),
    updated_at_ms: Type.Number(),
    archived: Type.Boolean(),
    archived_at_ms: Type.Optional(Type.Number()),
    labels: Type.Record(Type.String(), Type.String()),
    message_count: Type.Integer({ minimum: 0 }),
    total_tokens: Type.Number(),
    /** Owned by the actor kind (sessions: PersistedState). Must be JSON-safe. */
    state: Type.Unknown(),
  },
  { $id: 'SessionRecord' },
);
export type SessionRecord = Static<typeof SessionRecord>;

/** A session record as version 1 wrote it (read-only: migrated to the current version on read). */
export const SessionRecordV1 = Type.Object(
  {
    v: Type.Literal(1),
    session_id: Type.String({ minLength: 1 }),
    created_at_ms: Type.Number(),
    updated_at_ms: Type.Number(),
    archived: Type.Boolean(),
    labels: Type.Record(Type.String(), Type.String()),
    message_count: Type.Integer({ minimum: 0 }),
    total_tokens: Type.Number(),
    state: Type.Unknown(),
  },
  { $id: 'SessionRecordV1' },
);
export type SessionRecordV1 = Static<typeof SessionRecordV1>;

/**
 * The ledger entry format version. Entries are written without `v` (it is per-event bytes on the hot path),
 * and an absent `v` means version 1; a later format writes `v: 2` and adds its migration beside the
 * session record's in storage/record-migrations.ts. An entry of any other version is refused on write and
 * on read (SESSION_STORE_ERROR).
 */
export const LEDGER_ENTRY_VERSION = 1;

/** One event in a session's ordered ledger. `seq` is monotonic per session, starting at 1. */
export const LedgerEntry = Type.Object(
  {
    v: Type.Optional(Type.Literal(LEDGER_ENTRY_VERSION)),
    seq: Type.Integer({ minimum: 1 }),
    kind: Type.String(),
    timestamp_ms: Type.Number(),
    payload: Type.Unknown(),
  },
  { $id: 'LedgerEntry' },
);
export type LedgerEntry = Static<typeof LedgerEntry>;

/** A session's settings (model, provider, output cap, tool switches). */
export const SessionSettings = Type.Object(
  {
    model: Type.String(),
    provider: ProviderId,
    max_tokens: Type.Integer(),
    system_prompt_disabled: Type.Boolean(),
    builtins: Type.Boolean(),
    shell: Type.Boolean(),
    /** WorkGraph tools (enable_workgraph, else `[tools] workgraph_enabled`); absent in older records = off. */
    workgraph: Type.Optional(Type.Boolean()),
    /** Schedule tools (enable_schedule, else `[tools] schedule_enabled`); absent in older records = off. */
    schedule: Type.Optional(Type.Boolean()),
    keep_alive: Type.Boolean(),
    comms_name: Type.Optional(Type.String()),
    /** Discovery metadata shown to peers (name, description, labels). */
    peer_meta: Type.Optional(PeerMeta),
    structured_output_retries: Type.Optional(Type.Integer({ minimum: 0 })),
    /** enable_memory: compaction feeds the session's memory store and memory_search is offered. */
    memory: Type.Optional(Type.Boolean()),
    /** The credential selector (actors/auth): picks the binding's credential and base URL at each turn. */
    auth_binding: Type.Optional(AuthBinding),
    /** No tools of any kind, contributed ones included (help sessions). */
    tools_off: Type.Optional(Type.Boolean()),
    /** The mob member this session is (actors/mob): it is offered the mob tools. */
    mob_member: Type.Optional(Type.Object({ mob_id: Type.String(), agent_identity: Type.String() })),
  },
  { $id: 'SessionSettings' },
);
export type SessionSettings = Static<typeof SessionSettings>;

/** The input of a turn that was accepted but not yet committed (kept for crash diagnosis only). */
export const PendingInput = Type.Object(
  {
    request_id: Type.String(),
    started_at_ms: Type.Number(),
    prompt: ContentInput,
    transient_turn_context: Type.Optional(Type.String()),
  },
  { $id: 'PendingInput' },
);
export type PendingInput = Static<typeof PendingInput>;

/** A session's SessionRecord.state. */
export const PersistedState = Type.Object(
  {
    v: Type.Literal(1),
    /** The session machine's persisted snapshot (XState), or null before its first turn. */
    machine: Type.Unknown(),
    settings: SessionSettings,
    pending: Type.Optional(PendingInput),
    /** system_context idempotency keys → content fingerprint. */
    sysctx: Type.Record(Type.String(), Type.String()),
    /** Keyed system prompt versions. */
    prompts: Type.Record(Type.String(), Type.Object({ version: Type.Integer(), message_index: Type.Integer(), content: Type.String() })),
    /** Transcript revision counter (bumped on every transcript write). */
    revision: Type.Integer({ minimum: 0 }),
  },
  { $id: 'PersistedState' },
);
export type PersistedState = Static<typeof PersistedState>;
