// client/src/types.ts: the wire types of every Warren route, taken straight from the server's typebox
// contracts (type-only imports: nothing of the server is loaded at run time).
import type { Static } from 'typebox';
import type {
  BindingCleared,
  BindingResolved,
  BindingStatus,
  BindingTestReport,
  DeviceCompleteRequest,
  DeviceOutcome as DeviceOutcomeSchema,
  DeviceStartRequest,
  DeviceStartResponse,
  LoginCompleteRequest,
  LoginReady,
  LoginStartRequest,
  LoginStartResponse,
  OAuthProviderList,
  ProfileList,
  RealmQuery,
  StoreCredentialsRequest,
  StoreCredentialsResponse,
  TestBindingRequest,
} from '../../contracts/auth.ts';
import type { ConfigEnvelope, ConfigPatchBody, ConfigPutBody } from '../../contracts/config.ts';
import type { EventEnvelope, LedgerPage as LedgerPageSchema } from '../../contracts/events.ts';
import type {
  ActorDetail,
  ActorList,
  ActorListQuery,
  ActorTransition,
  MachineGraph,
  SessionTimeline,
} from '../../contracts/routes-observe.ts';
import type {
  CapabilitiesResponse,
  HostInfo,
  ModelCatalog,
  RealmDetail,
  RealmList,
  RuntimeCapabilities,
  RuntimeHealth,
} from '../../contracts/routes-system.ts';
import type {
  ArchiveResponse as ArchiveSchema,
  CancelResponse as CancelSchema,
  ContinueSessionRequest,
  CreateSessionRequest,
  History as HistorySchema,
  InterruptResponse as InterruptSchema,
  SessionDetail as DetailSchema,
  SessionList as ListSchema,
  SessionStatus as StatusSchema,
  SystemContextRequest,
  SystemContextResponse as SysCtxSchema,
  SystemPromptRequest,
  SystemPromptResponse as SysPromptSchema,
  TurnResponse,
} from '../../contracts/session.ts';
import type { HelpResponse } from '../../contracts/routes-help.ts';
import type {
  ForkBody,
  ForkResponse as ForkSchema,
  ImportResponse as ImportSchema,
  ReplayAccepted as ReplayAcceptedSchema,
  ReplayBody,
  ReplayReport as ReplayReportSchema,
  SessionTurns as SessionTurnsSchema,
  RerunBody,
  RerunReport as RerunReportSchema,
} from '../../contracts/replay.ts';
import type { HelpRequest } from '../../contracts/turn-features.ts';
import type { SessionEventKind as ContractEventKind, SessionEventPayload } from '../../contracts/session-events.ts';

export type {
  BindingCleared,
  BindingResolved,
  BindingStatus,
  BindingTestReport,
  DeviceCompleteRequest,
  DeviceStartRequest,
  DeviceStartResponse,
  LoginCompleteRequest,
  LoginReady,
  LoginStartRequest,
  LoginStartResponse,
  OAuthProviderList,
  ProfileList,
  RealmQuery,
  StoreCredentialsRequest,
  StoreCredentialsResponse,
  TestBindingRequest,
};
export type DeviceOutcome = Static<typeof DeviceOutcomeSchema>;
export type {
  ActorDetail,
  ActorList,
  ActorListQuery,
  ActorTransition,
  CapabilitiesResponse,
  ConfigEnvelope,
  ConfigPatchBody,
  ConfigPutBody,
  ContinueSessionRequest,
  CreateSessionRequest,
  HostInfo,
  MachineGraph,
  ModelCatalog,
  RealmDetail,
  RealmList,
  RuntimeCapabilities,
  RuntimeHealth,
  SessionTimeline,
  SystemContextRequest,
  SystemPromptRequest,
  TurnResponse,
  HelpRequest,
  HelpResponse,
};
export type SessionDetail = Static<typeof DetailSchema>;
export type SessionList = Static<typeof ListSchema>;
export type SessionStatus = Static<typeof StatusSchema>;
export type History = Static<typeof HistorySchema>;
export type SystemContextResponse = Static<typeof SysCtxSchema>;
export type SystemPromptResponse = Static<typeof SysPromptSchema>;
export type InterruptResponse = Static<typeof InterruptSchema>;
export type ArchiveResponse = Static<typeof ArchiveSchema>;
export type CancelResponse = Static<typeof CancelSchema>;
export type LedgerPage = Static<typeof LedgerPageSchema>;
/** One session event as carried by an SSE frame and a ledger page. */
export type SessionEventEnvelope = Static<typeof EventEnvelope>;

/** Session event kinds Warren emits (SPEC.md "Events"), straight from its contracts. */
export type SessionEventKind = ContractEventKind;

/** The payload of one session event kind: `type` names the kind, the rest is that kind's schema. */
export type SessionEventPayloadOf<K extends SessionEventKind> = { type: K } & SessionEventPayload<K>;

/** One session event of kind `K` as the iterator yields it. */
export interface SessionEventItem<K extends SessionEventKind = SessionEventKind> {
  type: 'event';
  event: K;
  id: number;
  data: Omit<SessionEventEnvelope, 'payload'> & { payload: SessionEventPayloadOf<K> };
}

/** Every session event, told apart by `event` (a discriminated union: `item.event === 'text_delta'` narrows). */
export type AnySessionEvent = { [K in SessionEventKind]: SessionEventItem<K> }[SessionEventKind];

/** An event of a kind this client does not know (a newer server): kept apart so known kinds stay narrowable. */
export interface UnknownSessionEvent {
  type: 'unknown_event';
  event: string;
  id: number;
  data: SessionEventEnvelope;
}

/** `session_loaded`: the first frame of every connection. */
export interface SessionLoaded {
  type: 'session_loaded';
  session_id: string;
  message_count: number;
  last_seq: number;
}

/** `stream_truncated`: events were dropped (lag) or cannot be replayed. */
export interface StreamTruncated {
  type: 'stream_truncated';
  reason: { kind: 'stream_lagged'; dropped: number } | { kind: 'replay_unavailable' | 'replay_gap'; [k: string]: unknown };
}

/** What the session event iterator yields: `type` tells control frames from session events. */
export type SessionStreamItem =
  | { type: 'session_loaded'; data: SessionLoaded }
  | { type: 'stream_truncated'; data: StreamTruncated }
  | AnySessionEvent
  | UnknownSessionEvent;

/** Record, replay, fork, rerun and portable sessions (docs/replay.md). */
export type ReplayRequest = Static<typeof ReplayBody>;
export type ReplayReport = Static<typeof ReplayReportSchema>;
export type ReplayAccepted = Static<typeof ReplayAcceptedSchema> & { events_url: string };
export type ForkRequest = Static<typeof ForkBody>;
export type ForkResponse = Static<typeof ForkSchema>;
export type SessionTurns = Static<typeof SessionTurnsSchema>;
export type RerunRequest = Static<typeof RerunBody>;
export type RerunReport = Static<typeof RerunReportSchema>;
export type ImportResponse = Static<typeof ImportSchema>;
