// contracts/routes-mob.ts: wire bodies of the mob REST routes (observation and helpers; wire-notes
// §2.10), the JSON-RPC endpoint and the toolkit event stream, and their route catalog. Typed mob
// lifecycle control (create, destroy, spawn, retire, wire, flows, grants) lives on JSON-RPC
// (contracts/mob-rpc.ts), not REST.
import { Type, type Static } from 'typebox';
import type { ErrorCode } from './errors.ts';
import { ExpectedGeneration, ExpectedRevision, MobName } from './mob.ts';
import { ProviderId } from './session.ts';
import type { RouteDef } from './route.ts';

const Num = Type.String({ pattern: '^[0-9]{1,15}$' });

const SpawnHelperBody = Type.Object(
  {
    prompt: Type.String({ minLength: 1 }),
    result_label: Type.String({ minLength: 1, maxLength: 256 }),
    max_text_bytes: Type.Integer({ minimum: 1, maximum: 1_048_576 }),
    agent_identity: MobName,
    role_name: Type.Optional(Type.String({ minLength: 1 })),
    model_override: Type.Optional(Type.String({ minLength: 1 })),
    /** The helper's provider (Warren extension); fork-helper inherits its source member's. */
    provider: Type.Optional(ProviderId),
    runtime_mode: Type.Optional(Type.Enum(['autonomous_host', 'turn_driven'])),
    backend: Type.Optional(Type.Enum(['session', 'external'])),
  },
  { $id: 'MobSpawnHelperRequest' },
);

export const ForkContext = Type.Union([
  Type.Object({ type: Type.Literal('full_history') }),
  Type.Object({ type: Type.Literal('last_messages'), count: Type.Integer({ minimum: 1, maximum: 10_000 }) }),
]);

const ForkHelperBody = Type.Object(
  {
    ...SpawnHelperBody.properties,
    source_member_id: MobName,
    fork_context: Type.Optional(ForkContext),
  },
  { $id: 'MobForkHelperRequest' },
);

const Usage = Type.Object({ input_tokens: Type.Integer(), output_tokens: Type.Integer(), total_tokens: Type.Integer() });

const HelperResponse = Type.Object(
  {
    output: Type.String(),
    tokens_used: Type.Integer(),
    agent_identity: Type.String(),
    member_ref: Type.String(),
    bounded_result: Type.Object({
      label: Type.String(),
      text: Type.String(),
      truncated: Type.Boolean(),
      original_bytes: Type.Integer(),
      max_text_bytes: Type.Integer(),
    }),
    session_id: Type.String(),
    usage: Usage,
    turns: Type.Integer(),
    tool_calls: Type.Integer(),
    retirement_error: Type.Optional(Type.String()),
  },
  { $id: 'MobHelperResult' },
);

const WaitKickoffBody = Type.Object(
  {
    member_ids: Type.Optional(Type.Array(MobName, { maxItems: 256 })),
    timeout_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 3_600_000 })),
  },
  { $id: 'MobWaitKickoffRequest' },
);

const MemberSnapshot = Type.Object(
  {
    mob_id: Type.String(),
    agent_identity: Type.String(),
    role: Type.String(),
    state: Type.String(),
    kickoff: Type.String(),
    session_id: Type.Union([Type.String(), Type.Null()]),
    generation: Type.Integer(),
    helper: Type.Boolean(),
    wired_to: Type.Array(Type.String()),
    last_error: Type.Optional(Type.String()),
    /** A retired helper whose session is not archived yet: why. */
    cleanup_debt: Type.Optional(Type.String()),
  },
  { $id: 'MobMemberSnapshot' },
);

const WaitKickoffResponse = Type.Object({ members: Type.Array(MemberSnapshot) });

const WireBatchBody = Type.Object(
  {
    edges: Type.Array(Type.Object({ a: MobName, b: MobName }), { minItems: 1, maxItems: 512 }),
    /** Fence: the mob revision the caller last saw (409 STALE_FENCE when it moved on). */
    expected_revision: Type.Optional(ExpectedRevision),
  },
  { $id: 'MobWireMembersBatchRequest' },
);
/** A wired pair of members, as the request named it. */
const WireEdge = Type.Object({ a: Type.String(), b: Type.String() });
/** The reference's answer: the edges wired now and the ones that already were. */
export const WireBatchResponse = Type.Object({
  requested: Type.Integer(),
  wired: Type.Array(WireEdge),
  already_wired: Type.Array(WireEdge),
});

const RespawnBody = Type.Object(
  {
    initial_message: Type.Optional(Type.String({ minLength: 1 })),
    /** Fences: the mob revision and the member generation the caller last saw (409 STALE_FENCE). */
    expected_revision: Type.Optional(ExpectedRevision),
    expected_generation: Type.Optional(ExpectedGeneration),
  },
  { $id: 'MobRespawnRequest' },
);
const RespawnResponse = Type.Object({
  status: Type.Enum(['completed', 'topology_restore_failed']),
  receipt: Type.Record(Type.String(), Type.Unknown()),
  failed_peer_ids: Type.Optional(Type.Array(Type.String())),
});

const HistoryQuery = Type.Object({ from_index: Type.Optional(Num), limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })) });
const MemberHistory = Type.Object(
  {
    generation: Type.Integer(),
    page: Type.Object({
      from_index: Type.Integer(),
      message_count: Type.Integer(),
      messages: Type.Array(Type.Unknown()),
      next_index: Type.Optional(Type.Integer()),
      complete: Type.Boolean(),
    }),
    provenance: Type.Enum(['host_claimed', 'controlling_host_verified']),
  },
  { $id: 'MobMemberHistory' },
);

const MobEventsQuery = Type.Object({ member: Type.Optional(MobName), after_cursor: Type.Optional(Num) });
const ToolkitStreamQuery = Type.Object({
  after_cursor: Type.Optional(Num),
  mob_id: Type.Optional(Type.String({ minLength: 1 })),
  /** Comma-separated structural kinds. */
  kinds: Type.Optional(Type.String({ minLength: 1 })),
  agent_identity: Type.Optional(Type.String({ minLength: 1 })),
  run_id: Type.Optional(Type.String({ minLength: 1 })),
});

/** The mob host protocol versions this build speaks (the host capability flags' protocol_min/max). */
export const MOB_HOST_PROTOCOL = { min: 1, max: 1 } as const;

/** The reference's host capability flags (a host entry's `capabilities` in GET /mob/{id}/hosts). */
export const HostCapabilities = Type.Object(
  {
    protocol_min: Type.Integer({ minimum: 0 }),
    protocol_max: Type.Integer({ minimum: 0 }),
    engine_version: Type.String(),
    durable_sessions: Type.Boolean(),
    autonomous_members: Type.Boolean(),
    hard_cancel_member: Type.Boolean(),
    memory_store: Type.Boolean(),
    mcp: Type.Boolean(),
    approval_forwarding: Type.Boolean(),
  },
  { additionalProperties: false, $id: 'MobHostCapabilities' },
);
export type HostCapabilities = Static<typeof HostCapabilities>;

const MobHostEntrySchema = Type.Object(
  {
    host_id: Type.String(),
    bind_phase: Type.Union([Type.Literal('requested'), Type.Literal('bound')]),
    materialized_member_count: Type.Integer({ minimum: 0 }),
    capabilities: Type.Optional(HostCapabilities),
    control_reachability: Type.Optional(Type.String()),
    endpoint: Type.Optional(Type.String()),
    last_seen_ms: Type.Optional(Type.Integer()),
  },
  { additionalProperties: true },
);
const HostsResponse = Type.Object({ hosts: Type.Array(MobHostEntrySchema) });
const RouteInstallsResponse = Type.Object({
  complete: Type.Boolean(),
  outstanding: Type.Array(Type.Object({ host: Type.String(), edge_a: Type.String(), edge_b: Type.String() })),
});

const json = (schema: RouteDef['response']['schema']) => ({ status: 200, schema });
const sse = { status: 200, contentType: 'text/event-stream' as const };
const ERRS: ErrorCode[] = ['BAD_REQUEST', 'ScopeDenied'];
const FENCED: ErrorCode[] = [...ERRS, 'STALE_FENCE'];
const MEMBER = '/mob/{id}/members/{agent_identity}';
const PRINCIPAL = ['x-warren-principal'];

export const MOB_ROUTE = {
  rpc: {
    id: 'mob.rpc',
    method: 'POST',
    path: '/rpc',
    summary: 'JSON-RPC 2.0: typed mob lifecycle control and toolkit event queries',
    response: { status: 200 },
    errors: [],
    headers: PRINCIPAL,
    capability: 'mob',
  },
  toolkitStream: {
    id: 'toolkit.mobEventsStream',
    method: 'GET',
    path: '/toolkit/mob_events/stream',
    summary: 'Structural mob events: live tail with cursor and filter resume (SSE)',
    query: ToolkitStreamQuery,
    response: sse,
    errors: [...ERRS, 'STALE_CURSOR'],
    headers: [...PRINCIPAL, 'last-event-id'],
    capability: 'mob',
  },
  events: {
    id: 'mob.events',
    method: 'GET',
    path: '/mob/{id}/events',
    summary: 'Mob event stream (SSE): stream_opened, envelopes, done',
    query: MobEventsQuery,
    response: sse,
    errors: ['NOT_FOUND', 'ScopeDenied', 'STALE_CURSOR'],
    headers: [...PRINCIPAL, 'last-event-id'],
    capability: 'mob',
  },
  spawnHelper: {
    id: 'mob.spawnHelper',
    method: 'POST',
    path: '/mob/{id}/spawn-helper',
    summary: 'Spawn a helper and wait for its bounded result',
    body: SpawnHelperBody,
    response: json(HelperResponse),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  forkHelper: {
    id: 'mob.forkHelper',
    method: 'POST',
    path: '/mob/{id}/fork-helper',
    summary: 'Fork a helper from a member and wait for its bounded result',
    body: ForkHelperBody,
    response: json(HelperResponse),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  waitKickoff: {
    id: 'mob.waitKickoff',
    method: 'POST',
    path: '/mob/{id}/wait-kickoff',
    summary: 'Wait for member kickoff',
    body: WaitKickoffBody,
    bodyOptional: true,
    response: json(WaitKickoffResponse),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  wireBatch: {
    id: 'mob.wireMembersBatch',
    method: 'POST',
    path: '/mob/{id}/wire-members-batch',
    summary: 'Wire member pairs',
    body: WireBatchBody,
    response: json(WireBatchResponse),
    errors: FENCED,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  memberStatus: {
    id: 'mob.memberStatus',
    method: 'GET',
    path: `${MEMBER}/status`,
    summary: 'Member status snapshot',
    response: json(MemberSnapshot),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  memberHistory: {
    id: 'mob.memberHistory',
    method: 'GET',
    path: `${MEMBER}/history`,
    summary: 'Member history page',
    query: HistoryQuery,
    response: json(MemberHistory),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  memberCancel: {
    id: 'mob.memberCancel',
    method: 'POST',
    path: `${MEMBER}/cancel`,
    summary: 'Cancel a member',
    response: json(Type.Object({ cancelled: Type.Boolean() })),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  memberRespawn: {
    id: 'mob.memberRespawn',
    method: 'POST',
    path: `${MEMBER}/respawn`,
    summary: 'Respawn a member',
    body: RespawnBody,
    bodyOptional: true,
    response: json(RespawnResponse),
    errors: FENCED,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  hosts: {
    id: 'mob.hosts',
    method: 'GET',
    path: '/mob/{id}/hosts',
    summary: 'Mob hosts',
    response: json(HostsResponse),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
  routeInstalls: {
    id: 'mob.routeInstalls',
    method: 'GET',
    path: '/mob/{id}/route-installs',
    summary: 'Outstanding route installs',
    response: json(RouteInstallsResponse),
    errors: ERRS,
    headers: PRINCIPAL,
    capability: 'mob',
  },
} as const satisfies Record<string, RouteDef>;

export const MOB_ROUTES: RouteDef[] = Object.values(MOB_ROUTE);
