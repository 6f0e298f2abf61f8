// contracts/mcp.ts: live MCP tool servers. The server config (`[tools] mcp_servers` entries and the
// `server_config` of POST /sessions/{id}/mcp/add), the add/remove/reload bodies and their reply
// (wire-notes §2.6), the Warren extension GET /sessions/{id}/mcp, and the route catalog.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

/**
 * One MCP server. Stdio servers give `command` (+ `args`, `env`); remote servers give `url` (+ `headers`,
 * `transport`, default streamable-http). Exactly one of `command` and `url` (checked by the handler and
 * the config loader's caller, so the error can name the server).
 */
export const McpServerConfig = Type.Object(
  {
    name: Type.String({ maxLength: 64 }),
    connect_timeout_secs: Type.Optional(Nullable(Type.Number({ exclusiveMinimum: 0, maximum: 3600 }))),
    command: Type.Optional(Type.String({ minLength: 1 })),
    args: Type.Optional(Type.Array(Type.String())),
    env: Type.Optional(Type.Record(Type.String(), Type.String())),
    url: Type.Optional(Type.String({ minLength: 1 })),
    headers: Type.Optional(Type.Record(Type.String(), Type.String())),
    transport: Type.Optional(Type.Union([Type.Literal('streamable-http'), Type.Literal('sse')])),
  },
  { $id: 'McpServerConfig' },
);
export type McpServerConfig = Static<typeof McpServerConfig>;

/** Default bound of one server's connect + handshake (SPEC.md "Limits": MCP connect timeout). */
export const MCP_CONNECT_TIMEOUT_SECS = 10;

/**
 * Server names are the tool namespace (`mcp__<server>__<tool>`): letters, digits, `-` and single `_`,
 * so no server name can contain the `__` separator and two servers can never produce the same tool name.
 */
export const MCP_SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

export const McpAddRequest = Type.Object(
  { session_id: Type.String(), server_config: McpServerConfig, persisted: Type.Optional(Nullable(Type.Boolean())) },
  { $id: 'McpAddRequest' },
);
export type McpAddRequest = Static<typeof McpAddRequest>;

export const McpRemoveRequest = Type.Object(
  { session_id: Type.String(), server_name: Type.String(), persisted: Type.Optional(Nullable(Type.Boolean())) },
  { $id: 'McpRemoveRequest' },
);
export type McpRemoveRequest = Static<typeof McpRemoveRequest>;

/** `server_name` null or absent reloads every server of the session. */
export const McpReloadRequest = Type.Object(
  { session_id: Type.String(), server_name: Type.Optional(Nullable(Type.String())), persisted: Type.Optional(Nullable(Type.Boolean())) },
  { $id: 'McpReloadRequest' },
);
export type McpReloadRequest = Static<typeof McpReloadRequest>;

export const McpOperation = Type.Union([Type.Literal('add'), Type.Literal('remove'), Type.Literal('reload')]);
export type McpOperation = Static<typeof McpOperation>;

export const McpLiveResponse = Type.Object(
  {
    session_id: Type.String(),
    operation: McpOperation,
    server_name: Type.Optional(Type.String()),
    status: Type.Union([Type.Literal('staged'), Type.Literal('applied'), Type.Literal('rejected')]),
    persisted: Type.Boolean(),
    applied_at_turn: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { $id: 'McpLiveResponse' },
);
export type McpLiveResponse = Static<typeof McpLiveResponse>;

export const McpServerState = Type.Union([
  Type.Literal('connecting'),
  Type.Literal('ready'),
  Type.Literal('failed'),
  Type.Literal('closed'),
]);
export type McpServerState = Static<typeof McpServerState>;

/** One server as GET /sessions/{id}/mcp reports it (Warren extension). */
export const McpServerStatus = Type.Object(
  {
    name: Type.String(),
    source: Type.Union([Type.Literal('config'), Type.Literal('session')]),
    transport: Type.Union([Type.Literal('stdio'), Type.Literal('streamable-http'), Type.Literal('sse')]),
    state: McpServerState,
    /** Namespaced tool names offered to the model (empty unless ready). */
    tools: Type.Array(Type.String()),
    error: Type.Optional(Type.Object({ kind: Type.String(), message: Type.String() })),
    applied_at_turn: Type.Optional(Type.Integer({ minimum: 0 })),
  },
  { $id: 'McpServerStatus' },
);
export type McpServerStatus = Static<typeof McpServerStatus>;

export const McpStagedOp = Type.Object({
  operation: McpOperation,
  server_name: Type.Optional(Type.String()),
  persisted: Type.Boolean(),
  /** A staged add (or a one-server reload): its new connection's progress, so `wait=settled` shows it. */
  state: Type.Optional(McpServerState),
  tools: Type.Optional(Type.Array(Type.String())),
  error: Type.Optional(Type.Object({ kind: Type.String(), message: Type.String() })),
});
export type McpStagedOp = Static<typeof McpStagedOp>;

export const McpSessionStatus = Type.Object(
  { session_id: Type.String(), servers: Type.Array(McpServerStatus), staged: Type.Array(McpStagedOp) },
  { $id: 'McpSessionStatus' },
);
export type McpSessionStatus = Static<typeof McpSessionStatus>;

/** The persisted per-session MCP changes (store record ns `mcp`, key = session id). */
export interface McpPersistedRecord {
  v: 1;
  /** Servers added with `persisted: true`, by name (they override a config server of the same name). */
  added: McpServerConfig[];
  /** Config servers removed with `persisted: true`. */
  removed: string[];
}

const LIVE_ERRORS: RouteDef['errors'] = ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'CONFLICT', 'NOT_FOUND', 'SESSION_STORE_ERROR'];

/** `wait=settled`: answer once no server of the session is still handshaking (each is bounded by its timeout). */
const McpStatusQuery = Type.Object({ wait: Type.Optional(Type.Literal('settled')) });

/** POST /sessions/{id}/mcp/add|remove|reload (feature mcp_live) and the Warren extension read. */
export const MCP_ROUTE = {
  add: {
    id: 'sessions.mcpAdd',
    method: 'POST',
    path: '/sessions/{id}/mcp/add',
    summary: 'Stage adding an MCP server (applied at the next turn boundary)',
    body: McpAddRequest,
    response: { status: 200, schema: McpLiveResponse },
    errors: LIVE_ERRORS,
    capability: 'mcp_live',
  },
  remove: {
    id: 'sessions.mcpRemove',
    method: 'POST',
    path: '/sessions/{id}/mcp/remove',
    summary: 'Stage removing an MCP server (applied at the next turn boundary)',
    body: McpRemoveRequest,
    response: { status: 200, schema: McpLiveResponse },
    errors: LIVE_ERRORS,
    capability: 'mcp_live',
  },
  reload: {
    id: 'sessions.mcpReload',
    method: 'POST',
    path: '/sessions/{id}/mcp/reload',
    summary: 'Stage reconnecting one or every MCP server (applied at the next turn boundary)',
    body: McpReloadRequest,
    response: { status: 200, schema: McpLiveResponse },
    errors: LIVE_ERRORS,
    capability: 'mcp_live',
  },
  status: {
    id: 'sessions.mcpStatus',
    method: 'GET',
    path: '/sessions/{id}/mcp',
    summary: 'MCP servers of a session, their state and tools (Warren extension)',
    query: McpStatusQuery,
    response: { status: 200, schema: McpSessionStatus },
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
    capability: 'mcp_live',
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const MCP_ROUTES: RouteDef[] = Object.values(MCP_ROUTE);
