// contracts/mcp-endpoint.ts: Warren as an MCP server (Warren extension). The Streamable HTTP endpoint
// routes POST/GET/DELETE /mcp and the input schemas of the session tools Warren exposes there
// (actors/mcp-exposed-sessions.ts); http/handlers/mcp-endpoint.ts serves the routes.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

/** Any JSON-RPC message or batch; the MCP SDK checks it. */
const McpJsonRpcBody = Type.Unknown({ $id: 'McpJsonRpcBody' });

const MCP_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'accept', 'last-event-id'];

export const MCP_ENDPOINT_ROUTES: RouteDef[] = [
  {
    id: 'mcp.post',
    method: 'POST',
    path: '/mcp',
    summary: 'MCP Streamable HTTP endpoint: JSON-RPC messages (Warren extension)',
    body: McpJsonRpcBody,
    headers: MCP_HEADERS,
    response: { status: 200, contentType: 'application/json' },
    errors: ['BAD_REQUEST', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT', 'SERVICE_UNAVAILABLE'],
    capability: 'mcp_live',
  },
  {
    id: 'mcp.stream',
    method: 'GET',
    path: '/mcp',
    summary: 'MCP Streamable HTTP endpoint: server-to-client event stream (Warren extension)',
    headers: MCP_HEADERS,
    response: { status: 200, contentType: 'text/event-stream' },
    errors: ['BAD_REQUEST', 'NOT_FOUND', 'METHOD_NOT_ALLOWED', 'CONFLICT'],
    capability: 'mcp_live',
  },
  {
    id: 'mcp.close',
    method: 'DELETE',
    path: '/mcp',
    summary: 'MCP Streamable HTTP endpoint: end an MCP session (Warren extension)',
    headers: MCP_HEADERS,
    response: { status: 200, contentType: 'application/json' },
    errors: ['BAD_REQUEST', 'NOT_FOUND', 'METHOD_NOT_ALLOWED'],
    capability: 'mcp_live',
  },
];

export const WarrenSessionsListArgs = Type.Object({
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
});
export type WarrenSessionsListArgs = Static<typeof WarrenSessionsListArgs>;

export const WarrenSessionCreateArgs = Type.Object({
  prompt: Type.String({ minLength: 1, description: 'The first user message' }),
  model: Type.Optional(Type.String({ minLength: 1 })),
  system_prompt: Type.Optional(Type.String()),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  enable_builtins: Type.Optional(Type.Boolean()),
});
export type WarrenSessionCreateArgs = Static<typeof WarrenSessionCreateArgs>;

export const WarrenSessionContinueArgs = Type.Object({
  session_id: Type.String({ minLength: 1 }),
  prompt: Type.String({ minLength: 1, description: 'The next user message' }),
});
export type WarrenSessionContinueArgs = Static<typeof WarrenSessionContinueArgs>;
