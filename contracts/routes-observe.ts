// contracts/routes-observe.ts: Warren extension routes for observation (not in SPEC.md): Prometheus
// metrics, the actor viewer's page and assets, and the inspection API it reads (actor listing, machine
// definitions, one inspection SSE stream, a session's time-travel timeline). http/handlers/observe.ts
// and http/handlers/inspect.ts serve them.
import { Type, type Static } from 'typebox';
import { EventEnvelope } from './events.ts';
import type { RouteDef } from './route.ts';

const summaryFields = {
  kind: Type.String(),
  id: Type.String(),
  state: Type.String(),
  /** The XState state value (nested states are objects). */
  value: Type.Unknown(),
  phase: Type.Optional(Type.String()),
  /** False once the live XState actor was shed (the record and persisted snapshot remain). */
  awake: Type.Boolean(),
  labels: Type.Record(Type.String(), Type.String()),
  mailbox_depth: Type.Integer({ minimum: 0 }),
  subscribers: Type.Integer({ minimum: 0 }),
  last_used_ms: Type.Integer(),
  /**
   * When the actor entered its current state (`value`; epoch ms, server clock). For an actor loaded from
   * storage in that state: its record's last write (it has been there at least that long).
   */
  state_since_ms: Type.Integer(),
};

/** One resident actor of any kind as the viewer lists it. */
export const ActorSummary = Type.Object(
  {
    ...summaryFields,
    /** A mob's member actors (kind `mob_member`), each with its own state and time in state. */
    members: Type.Optional(Type.Array(Type.Object(summaryFields))),
  },
  { $id: 'ActorSummary' },
);
export type ActorSummary = Static<typeof ActorSummary>;

/**
 * A session's running turn as it stands (kept in memory only, updated as the model's stream arrives): the
 * request, the model call in flight and the tool calls still running.
 */
export const TurnInFlight = Type.Object(
  {
    request_id: Type.String(),
    provider: Type.String(),
    model: Type.String(),
    /** When the turn was admitted (epoch ms, server clock). */
    started_ms: Type.Integer(),
    elapsed_ms: Type.Integer({ minimum: 0 }),
    /** Model calls this turn started so far (the loop calls again after tool results). */
    model_calls: Type.Integer({ minimum: 0 }),
    /** The model call in flight; null while tools run, before the first call and after the last. */
    model_call: Type.Union([
      Type.Null(),
      Type.Object({
        provider: Type.String(),
        model: Type.String(),
        /** 1 for the turn's first model call. */
        number: Type.Integer({ minimum: 1 }),
        started_ms: Type.Integer(),
        elapsed_ms: Type.Integer({ minimum: 0 }),
        /** UTF-8 bytes of the text and reasoning deltas streamed so far. */
        bytes_received: Type.Integer({ minimum: 0 }),
        /** Text deltas streamed so far (about one token each). */
        text_deltas: Type.Integer({ minimum: 0 }),
        reasoning_deltas: Type.Integer({ minimum: 0 }),
        /** Retries of this call so far (each also a `retrying` event). */
        retries: Type.Integer({ minimum: 0 }),
      }),
    ]),
    /** Tool calls started and not yet completed. */
    pending_tools: Type.Array(
      Type.Object({ id: Type.String(), name: Type.String(), since_ms: Type.Integer(), elapsed_ms: Type.Integer({ minimum: 0 }) }),
    ),
  },
  { $id: 'TurnInFlight' },
);
export type TurnInFlight = Static<typeof TurnInFlight>;

const Digits = (max: number) => Type.String({ pattern: `^[0-9]{1,${max}}$` });

export const ActorListQuery = Type.Object({
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  state: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  /** `key=value`; repeatable, all must match. */
  label: Type.Optional(Type.String({ pattern: '^[^=]+=.*$' })),
  limit: Type.Optional(Digits(5)),
});
export type ActorListQuery = Static<typeof ActorListQuery>;

export const ActorList = Type.Object(
  {
    /** Matching actors, most recently used first, at most `limit` (default 500). */
    actors: Type.Array(ActorSummary),
    /** Matching actors per kind and state (all of them, not only the listed page). */
    counts: Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer({ minimum: 0 }))),
    total: Type.Integer({ minimum: 0 }),
    /** Actor kinds this server runs (each has a machine at /inspect/machines/{kind}). */
    kinds: Type.Array(Type.String()),
    /** The server's clock at this answer (epoch ms): a viewer on another clock measures time in state from it. */
    now_ms: Type.Integer(),
  },
  { $id: 'ActorList' },
);
export type ActorList = Static<typeof ActorList>;

/** A machine definition flattened for drawing: every state node and every transition. */
export const MachineGraph = Type.Object(
  {
    kind: Type.String(),
    machine_id: Type.String(),
    version: Type.Optional(Type.String()),
    states: Type.Array(
      Type.Object({
        /** Dotted path from the root, e.g. 'session.running.calling_model'. */
        id: Type.String(),
        key: Type.String(),
        parent: Type.Union([Type.String(), Type.Null()]),
        type: Type.String(),
        initial: Type.Optional(Type.String()),
      }),
    ),
    transitions: Type.Array(
      Type.Object({
        source: Type.String(),
        event: Type.String(),
        targets: Type.Array(Type.String()),
        guard: Type.Optional(Type.String()),
        actions: Type.Array(Type.String()),
      }),
    ),
  },
  { $id: 'MachineGraph' },
);
export type MachineGraph = Static<typeof MachineGraph>;

/** One inspected transition of an actor (also the `data:` of an inspection SSE frame). */
export const ActorTransition = Type.Object(
  {
    seq: Type.Integer({ minimum: 1 }),
    kind: Type.String(),
    id: Type.String(),
    at_ms: Type.Integer(),
    /** The event that caused it, with its payload. */
    event: Type.Object({ type: Type.String() }, { additionalProperties: true }),
    /** State value after the event. */
    value: Type.Unknown(),
    /** Dotted path of the deepest active state, e.g. 'running.calling_model'. */
    state: Type.String(),
  },
  { $id: 'ActorTransition' },
);
export type ActorTransition = Static<typeof ActorTransition>;

export const ActorDetail = Type.Object(
  {
    actor: ActorSummary,
    /** Recent inspected transitions (kept only while a viewer is subscribed), oldest first. */
    recent_events: Type.Array(ActorTransition),
    session: Type.Optional(
      Type.Object({
        turn_phase: Type.Union([Type.String(), Type.Null()]),
        message_count: Type.Integer({ minimum: 0 }),
        transcript_tail: Type.Array(Type.Unknown()),
        ledger_tail: Type.Array(EventEnvelope),
        /** The running turn's live progress; null when no turn runs. */
        in_flight: Type.Union([TurnInFlight, Type.Null()]),
      }),
    ),
    /** The server's clock at this answer (epoch ms). */
    now_ms: Type.Integer(),
  },
  { $id: 'ActorDetail' },
);
export type ActorDetail = Static<typeof ActorDetail>;

const InspectEventsQuery = Type.Object({
  kind: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
  id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

const TimelineQuery = Type.Object({ after_seq: Type.Optional(Digits(15)), limit: Type.Optional(Digits(4)) });

/** A session's ledger replayed through its machine: the state after each event (time travel). */
export const SessionTimeline = Type.Object(
  {
    session_id: Type.String(),
    steps: Type.Array(
      Type.Object({
        entry: EventEnvelope,
        /** The machine event this ledger event stands for, or null when it changes no state. */
        machine_event: Type.Union([Type.String(), Type.Null()]),
        value: Type.Unknown(),
        state: Type.String(),
      }),
    ),
    last_seq: Type.Integer({ minimum: 0 }),
    has_more: Type.Boolean(),
  },
  { $id: 'SessionTimeline' },
);
export type SessionTimeline = Static<typeof SessionTimeline>;

const text = (contentType: NonNullable<RouteDef['response']['contentType']>) => ({ status: 200, schema: Type.String(), contentType });

/** The observation routes (a Warren extension). */
export const OBSERVE_ROUTES: RouteDef[] = [
  {
    id: 'observe.metrics',
    method: 'GET',
    path: '/metrics',
    summary: 'Prometheus metrics (text exposition format 0.0.4)',
    response: text('text/plain'),
    errors: [],
  },
  { id: 'ui.page', method: 'GET', path: '/ui', summary: 'The live actor viewer (HTML page)', response: text('text/html'), errors: [] },
  {
    id: 'ui.script',
    method: 'GET',
    path: '/ui/viewer.js',
    summary: 'The actor viewer script',
    response: text('text/javascript'),
    errors: [],
  },
  {
    id: 'ui.net',
    method: 'GET',
    path: '/ui/viewer-net.js',
    summary: "The actor viewer's requests (API key prompt, fetch-based inspection stream)",
    response: text('text/javascript'),
    errors: [],
  },
  {
    id: 'ui.detail',
    method: 'GET',
    path: '/ui/viewer-detail.js',
    summary: "The actor viewer's detail parts (time in state, a turn in flight, a mob's members)",
    response: text('text/javascript'),
    errors: [],
  },
  {
    id: 'ui.replay',
    method: 'GET',
    path: '/ui/viewer-replay.js',
    summary: "The actor viewer's forks and replays (a session's turns, a replay's report and divergence)",
    response: text('text/javascript'),
    errors: [],
  },
  {
    id: 'ui.chart',
    method: 'GET',
    path: '/ui/viewer-chart.js',
    summary: "The actor viewer's statechart drawing",
    response: text('text/javascript'),
    errors: [],
  },
  { id: 'ui.style', method: 'GET', path: '/ui/viewer.css', summary: 'The actor viewer stylesheet', response: text('text/css'), errors: [] },
  {
    id: 'ui.elk',
    method: 'GET',
    path: '/ui/elk.js',
    summary: 'The elkjs layout library (browser bundle) the viewer uses',
    response: text('text/javascript'),
    errors: [],
  },
  {
    id: 'inspect.actors',
    method: 'GET',
    path: '/inspect/actors',
    summary: 'Resident actors of every kind, filterable, with counts per state',
    query: ActorListQuery,
    response: { status: 200, schema: ActorList },
    errors: ['BAD_REQUEST'],
  },
  {
    id: 'inspect.actor',
    method: 'GET',
    path: '/inspect/actors/{kind}/{id}',
    summary: 'One actor: state, mailbox, recent transitions; for a session its transcript and ledger tails',
    response: { status: 200, schema: ActorDetail },
    errors: ['NOT_FOUND'],
  },
  {
    id: 'inspect.machine',
    method: 'GET',
    path: '/inspect/machines/{kind}',
    summary: 'The machine definition of an actor kind (states, nested states, transitions)',
    response: { status: 200, schema: MachineGraph },
    errors: ['NOT_FOUND'],
  },
  {
    id: 'inspect.events',
    method: 'GET',
    path: '/inspect/events',
    summary: 'SSE stream of actor transitions (XState inspection; on only while subscribed)',
    query: InspectEventsQuery,
    response: { status: 200, contentType: 'text/event-stream' },
    errors: ['BAD_REQUEST'],
  },
  {
    id: 'inspect.timeline',
    method: 'GET',
    path: '/inspect/sessions/{id}/timeline',
    summary: "A session's ledger replayed through its machine: the state after each event",
    query: TimelineQuery,
    response: { status: 200, schema: SessionTimeline },
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'SESSION_PERSISTENCE_DISABLED'],
  },
];

/**
 * `[telemetry]` of config.toml: OpenTelemetry trace export of turns (the OpenTelemetry JS SDK's OTLP/HTTP
 * exporter, GenAI semantic conventions; docs/tracing.md). Off while `otlp_endpoint` is empty or absent.
 * Read by actors/observe/telemetry-config.ts.
 */
export const TelemetryConfig = Type.Object(
  {
    /** Collector base URL (`/v1/traces` is appended unless present), e.g. http://127.0.0.1:4318. */
    otlp_endpoint: Type.Optional(Type.String()),
    /** OTLP/HTTP encoding: binary protobuf (the default) or JSON. */
    protocol: Type.Optional(Type.Union([Type.Literal('http/protobuf'), Type.Literal('http/json')])),
    service_name: Type.Optional(Type.String({ minLength: 1 })),
    /** How often queued spans are sent (ms). */
    flush_interval_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
    /** Spans held at most while the collector is slow or down; newer spans are dropped beyond it. */
    max_queue: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    /** How long one export (retries included) and the flush at shutdown may take (ms). */
    export_timeout_ms: Type.Optional(Type.Integer({ minimum: 10, maximum: 600_000 })),
    /** Extra request headers (e.g. an API key for a hosted collector). */
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { $id: 'TelemetryConfig', additionalProperties: true },
);
export type TelemetryConfig = Static<typeof TelemetryConfig>;
