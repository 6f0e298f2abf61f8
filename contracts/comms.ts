// contracts/comms.ts: wire schemas of comms and ingress (SPEC.md "Comms send", "Peer list", "External
// event", "Peer terminal response"; wire-notes §2.3, §2.7), the stored inbox entry and inbound-request
// records, and the frames two Warren processes exchange over the TCP comms listener.
import { Type, type Static } from 'typebox';
import { ContentBlock } from './transcript.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);
const closed = { additionalProperties: false } as const;

// ---- ingress ---------------------------------------------------------------------------------------

/**
 * POST /sessions/{id}/external-events. `kind` names the envelope; `peer_response_terminal` is part of
 * the schema only so that it can be refused with its own message (it has its own route).
 */
export const ExternalEventEnvelope = Type.Object(
  {
    kind: Type.Union([Type.Literal('generic_json'), Type.Literal('peer_response_terminal')]),
    event_type: Type.String(),
    payload: Type.Unknown(),
    blocks: Type.Optional(Nullable(Type.Array(ContentBlock))),
  },
  { $id: 'ExternalEventEnvelope' },
);
export type ExternalEventEnvelope = Static<typeof ExternalEventEnvelope>;

const TerminalStatus = Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('cancelled')]);

/** POST /sessions/{id}/peer-response-terminal (unknown fields rejected). */
export const PeerResponseTerminal = Type.Object(
  {
    peer_id: Type.String({ minLength: 1 }),
    display_name: Type.Optional(Type.String()),
    request_id: Type.String({ minLength: 1 }),
    status: TerminalStatus,
    result: Type.Unknown(),
  },
  { $id: 'PeerResponseTerminal', ...closed },
);
export type PeerResponseTerminal = Static<typeof PeerResponseTerminal>;

/** Webhook admission reply (202). */
export const Queued = Type.Object({ queued: Type.Literal(true) }, { $id: 'Queued' });

// ---- comms send ------------------------------------------------------------------------------------

const HandlingMode = Type.Union([Type.Literal('queue'), Type.Literal('steer')]);
type HandlingMode = Static<typeof HandlingMode>;
const OptHandling = Type.Optional(Nullable(HandlingMode));
const StreamMode = Type.Union([Type.Literal('none'), Type.Literal('reserve_interaction')]);
const InputSource = Type.Union(['tcp', 'uds', 'stdin', 'webhook', 'rpc'].map((s) => Type.Literal(s)));
const LifecycleKind = Type.Union(['mob.peer_added', 'mob.peer_retired', 'mob.peer_unwired', 'mob.dismiss'].map((s) => Type.Literal(s)));
const RequestIntent = Type.Union([Type.Literal('supervisor.bridge'), Type.Literal('checksum_token')]);
type RequestIntent = Static<typeof RequestIntent>;
const ResponseStatus = Type.Union([Type.Literal('accepted'), Type.Literal('completed'), Type.Literal('failed')]);
type ResponseStatus = Static<typeof ResponseStatus>;

/** Taint override of a content-bearing peer send; omitted inherits `[comms] outbound_taint`. */
const ContentTaint = Type.Union(
  [Type.Literal('undeclared'), Type.Object({ declare: Type.Union([Type.Literal('clean'), Type.Literal('tainted')]) }, closed)],
  { $id: 'ContentTaint' },
);
type ContentTaint = Static<typeof ContentTaint>;

/** `supervisor.bridge` request params: one typed bridge command. */
export const BridgeCommand = Type.Object(
  { command: Type.String({ minLength: 1 }), args: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { $id: 'BridgeCommand', ...closed },
);
/** `checksum_token` request params. */
export const ChecksumParams = Type.Object({ subject: Type.String() }, { $id: 'ChecksumParams', ...closed });
/** The result of a completed `checksum_token` request: the subject's SHA-256, hex. */
const ChecksumResult = Type.Object(
  { request_intent: Type.Literal('checksum_token'), request_subject: Type.String(), token: Type.String() },
  { $id: 'ChecksumResult', ...closed },
);
type ChecksumResult = Static<typeof ChecksumResult>;
/** A bridge reply: what the bridged command produced. */
export const BridgeReply = Type.Object(
  { command: Type.String(), ok: Type.Boolean(), output: Type.Optional(Type.Unknown()) },
  { $id: 'BridgeReply', ...closed },
);

const LifecycleParams = Type.Object(
  {
    peer: Type.String({ minLength: 1 }),
    role: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    peer_spec: Type.Optional(Type.Unknown()),
  },
  closed,
);

const Base = { session_id: Type.String() };

const SendInput = Type.Object(
  {
    kind: Type.Literal('input'),
    ...Base,
    body: Type.String(),
    blocks: Type.Optional(Type.Array(ContentBlock)),
    handling_mode: OptHandling,
    source: Type.Optional(InputSource),
    stream: Type.Optional(StreamMode),
    allow_self_session: Type.Optional(Type.Boolean()),
  },
  { $id: 'SendInput', ...closed },
);
const SendPeerMessage = Type.Object(
  {
    kind: Type.Literal('peer_message'),
    ...Base,
    to: Type.String(),
    body: Type.String(),
    blocks: Type.Optional(Type.Array(ContentBlock)),
    handling_mode: OptHandling,
    content_taint: Type.Optional(ContentTaint),
  },
  { $id: 'SendPeerMessage', ...closed },
);
const SendPeerLifecycle = Type.Object(
  { kind: Type.Literal('peer_lifecycle'), ...Base, to: Type.String(), lifecycle_kind: LifecycleKind, params: LifecycleParams },
  { $id: 'SendPeerLifecycle', ...closed },
);
const SendPeerRequest = Type.Object(
  {
    kind: Type.Literal('peer_request'),
    ...Base,
    to: Type.String(),
    intent: RequestIntent,
    params: Type.Record(Type.String(), Type.Unknown()),
    blocks: Type.Optional(Type.Array(ContentBlock)),
    handling_mode: OptHandling,
    stream: Type.Optional(StreamMode),
    content_taint: Type.Optional(ContentTaint),
  },
  { $id: 'SendPeerRequest', ...closed },
);
export const SendPeerResponse = Type.Object(
  {
    kind: Type.Literal('peer_response'),
    ...Base,
    to: Type.String(),
    in_reply_to: Type.String({ minLength: 1 }),
    status: ResponseStatus,
    result: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    blocks: Type.Optional(Type.Array(ContentBlock)),
    handling_mode: OptHandling,
    content_taint: Type.Optional(ContentTaint),
  },
  { $id: 'SendPeerResponse', ...closed },
);

/** POST /comms/send: a flat union tagged by `kind`; every variant rejects unknown fields. */
export const CommsSendRequest = Type.Union([SendInput, SendPeerMessage, SendPeerLifecycle, SendPeerRequest, SendPeerResponse], {
  $id: 'CommsSendRequest',
});
export type CommsSendRequest = Static<typeof CommsSendRequest>;
type SendInput = Static<typeof SendInput>;
type SendPeerMessage = Static<typeof SendPeerMessage>;
type SendPeerLifecycle = Static<typeof SendPeerLifecycle>;
type SendPeerRequest = Static<typeof SendPeerRequest>;
export type SendPeerResponse = Static<typeof SendPeerResponse>;

/** Admission outcome at the recipient. */
const IngressOutcome = Type.Union([Type.Literal('accepted'), Type.Literal('deduplicated'), Type.Literal('rejected')]);
type IngressOutcome = Static<typeof IngressOutcome>;

/** The strongest proven delivery fact of a send. */
export const Delivery = Type.Union(
  [
    Type.Literal('acked'),
    Type.Literal('volatile_handed_off'),
    Type.Literal('queued'),
    Type.Object({ durably_resolved: Type.Object({ outcome: IngressOutcome }) }),
  ],
  { $id: 'Delivery' },
);
export type Delivery = Static<typeof Delivery>;

/** POST /comms/send reply, selected by the request's kind. */
export const CommsSendResult = Type.Union(
  [
    Type.Object({ kind: Type.Literal('input_accepted'), interaction_id: Type.String(), stream_reserved: Type.Boolean() }),
    Type.Object({ kind: Type.Literal('peer_message_sent'), envelope_id: Type.String(), delivery: Delivery }),
    Type.Object({ kind: Type.Literal('peer_lifecycle_sent'), envelope_id: Type.String(), delivery: Delivery }),
    Type.Object({
      kind: Type.Literal('peer_request_sent'),
      envelope_id: Type.String(),
      interaction_id: Type.String(),
      request_id: Type.String(),
      delivery: Delivery,
      stream_reserved: Type.Boolean(),
    }),
    Type.Object({ kind: Type.Literal('peer_response_sent'), envelope_id: Type.String(), in_reply_to: Type.String(), delivery: Delivery }),
  ],
  { $id: 'CommsSendResult' },
);
export type CommsSendResult = Static<typeof CommsSendResult>;

// ---- peer list -------------------------------------------------------------------------------------

export const PeersQuery = Type.Object({ session_id: Type.String() }, { $id: 'PeersQuery' });

const PeerMetaWire = Type.Object({
  description: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
});

export const Peer = Type.Object(
  {
    peer_id: Type.String(),
    name: Type.String(),
    address: Type.Object({ transport: Type.Union([Type.Literal('inproc'), Type.Literal('tcp')]), endpoint: Type.String() }),
    source: Type.Union([Type.Literal('trusted'), Type.Literal('inproc')]),
    sendable_kinds: Type.Array(Type.String()),
    capabilities: Type.Object({ version: Type.Integer(), extensions: Type.Record(Type.String(), Type.Unknown()) }),
    meta: PeerMetaWire,
  },
  { $id: 'Peer' },
);
export type Peer = Static<typeof Peer>;
export const PeerList = Type.Object({ peers: Type.Array(Peer) }, { $id: 'PeerList' });

// ---- stored records --------------------------------------------------------------------------------

const InboxKind = Type.Union([
  Type.Literal('external_event'),
  Type.Literal('peer_response_terminal'),
  Type.Literal('input'),
  Type.Literal('peer_message'),
  Type.Literal('peer_lifecycle'),
  Type.Literal('peer_request'),
  Type.Literal('peer_response'),
]);
type InboxKind =
  'external_event' | 'peer_response_terminal' | 'input' | 'peer_message' | 'peer_lifecycle' | 'peer_request' | 'peer_response';

/**
 * One admitted input waiting in a session's inbox (record namespace `inbox:<session_id>`, key = the
 * admission order). A committed turn that consumes it deletes it in the same commit.
 */
export const InboxEntry = Type.Object(
  {
    v: Type.Literal(1),
    id: Type.String(),
    kind: InboxKind,
    /** Wakes a keep-alive session (external events and progress responses do not). */
    wake: Type.Boolean(),
    handling_mode: HandlingMode,
    /** Peer id of the sender, when a peer sent it. */
    from: Type.Optional(Type.String()),
    /** The text the model sees (a user-channel injected-context row, or the prompt of a woken turn). */
    text: Type.String(),
    admitted_at_ms: Type.Number(),
  },
  { $id: 'InboxEntry' },
);
export type InboxEntry = Static<typeof InboxEntry>;

/** A peer request this session received (namespace `comms.inbound:<session_id>`, key = request id). */
export const InboundRequest = Type.Object(
  {
    v: Type.Literal(1),
    request_id: Type.String(),
    from: Type.String(),
    intent: RequestIntent,
    params: Type.Unknown(),
    handling_mode: HandlingMode,
    /** open: awaiting any reply; accepted: progress sent, still repliable; answered: terminal reply sent. */
    state: Type.Union([Type.Literal('open'), Type.Literal('accepted'), Type.Literal('answered')]),
  },
  { $id: 'InboundRequest' },
);
export type InboundRequest = Static<typeof InboundRequest>;

/** A session that can be addressed by comms (namespace `comms.agents`, key = session id). */
export const CommsAgent = Type.Object(
  {
    v: Type.Literal(1),
    session_id: Type.String(),
    name: Type.String(),
    keep_alive: Type.Boolean(),
    meta: Type.Object({
      name: Type.Optional(Type.String()),
      description: Type.Optional(Type.String()),
      labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    }),
  },
  { $id: 'CommsAgent' },
);
export type CommsAgent = Static<typeof CommsAgent>;

// ---- TCP frames (newline-delimited JSON between Warren processes) ----------------------------------

/** What travels to the recipient: everything it needs to admit the input. */
export const PeerEnvelope = Type.Object({
  envelope_id: Type.String(),
  kind: Type.Union([
    Type.Literal('peer_message'),
    Type.Literal('peer_lifecycle'),
    Type.Literal('peer_request'),
    Type.Literal('peer_response'),
  ]),
  /** The recipient session id (the part of the peer id before '@'). */
  to_session: Type.String(),
  /** The sender: its session id and the advertise address of its process. */
  from_session: Type.String(),
  from_name: Type.String(),
  handling_mode: Nullable(HandlingMode),
  taint: Type.Union([Type.Literal('undeclared'), Type.Literal('clean'), Type.Literal('tainted')]),
  body: Type.Optional(Type.String()),
  blocks: Type.Optional(Type.Array(ContentBlock)),
  lifecycle_kind: Type.Optional(Type.String()),
  intent: Type.Optional(RequestIntent),
  params: Type.Optional(Type.Unknown()),
  request_id: Type.Optional(Type.String()),
  in_reply_to: Type.Optional(Type.String()),
  status: Type.Optional(ResponseStatus),
  result: Type.Optional(Type.Unknown()),
});
export type PeerEnvelope = Static<typeof PeerEnvelope>;

export const TcpRequestFrame = Type.Union([
  Type.Object({ id: Type.Integer(), op: Type.Literal('deliver'), from_address: Type.String(), envelope: PeerEnvelope }),
  Type.Object({ id: Type.Integer(), op: Type.Literal('peers'), from_address: Type.String() }),
]);
export type TcpRequestFrame = Static<typeof TcpRequestFrame>;

export const RemoteAgent = Type.Object({
  session_id: Type.String(),
  name: Type.String(),
  meta: PeerMetaWire,
});
export type RemoteAgent = Static<typeof RemoteAgent>;

export const TcpReplyFrame = Type.Union([
  Type.Object({
    id: Type.Integer(),
    ok: Type.Literal(true),
    outcome: Type.Optional(IngressOutcome),
    durable: Type.Optional(Type.Boolean()),
    agents: Type.Optional(Type.Array(RemoteAgent)),
  }),
  Type.Object({ id: Type.Integer(), ok: Type.Literal(false), code: Type.String(), message: Type.String() }),
]);
export type TcpReplyFrame = Static<typeof TcpReplyFrame>;
