// contracts/routes-a2a.ts: the A2A (Agent2Agent) routes over Warren sessions (http/handlers/protocols/a2a.ts,
// docs/protocols.md): the agent card and the JSON-RPC endpoint. The JSON-RPC body is checked by the handler,
// (the route declares no body schema; A2aRpcRequest documents it), so a malformed call gets A2A's own JSON-RPC error object (HTTP 200) rather than Warren's envelope.
import { Type } from 'typebox';
import type { RouteDef } from './route.ts';

const Loose = { additionalProperties: true };

/** One JSON-RPC 2.0 request (the A2A_METHODS below, protocol 1.0 and 0.3 names). */
const A2aRpcRequest = Type.Object(
  {
    jsonrpc: Type.Optional(Type.Unknown()),
    id: Type.Optional(Type.Unknown()),
    method: Type.Optional(Type.Unknown()),
    params: Type.Optional(Type.Unknown()),
  },
  { $id: 'A2aRpcRequest', additionalProperties: true },
);

/** A JSON-RPC 2.0 response: `result` (a Task) or `error` ({code, message, data}). */
const A2aRpcResponse = Type.Object(
  { jsonrpc: Type.Literal('2.0'), id: Type.Unknown(), result: Type.Optional(Type.Unknown()), error: Type.Optional(Type.Unknown()) },
  { $id: 'A2aRpcResponse', additionalProperties: true },
);

/** The A2A agent card: the 1.0 shape (`supportedInterfaces`) with `A2A-Version: 1.0`, else the 0.3 shape (`url`, `protocolVersion`). */
const A2aAgentCard = Type.Object(
  {
    supportedInterfaces: Type.Optional(
      Type.Array(Type.Object({ url: Type.String(), protocolBinding: Type.String(), protocolVersion: Type.String() }, Loose)),
    ),
    protocolVersion: Type.Optional(Type.String()),
    name: Type.String(),
    description: Type.String(),
    url: Type.Optional(Type.String()),
    preferredTransport: Type.Optional(Type.String()),
    version: Type.String(),
    capabilities: Type.Object({}, Loose),
    defaultInputModes: Type.Array(Type.String()),
    defaultOutputModes: Type.Array(Type.String()),
    skills: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }, Loose)),
  },
  { $id: 'A2aAgentCard', additionalProperties: true },
);

export const A2A_ROUTE = {
  card: {
    id: 'protocols.a2a.card',
    method: 'GET',
    path: '/.well-known/agent-card.json',
    summary:
      "A2A: the agent card of the realm's default agent (its interfaces are Warren's A2A JSON-RPC endpoint, POST /a2a); protocol 1.0 shape when the request sends A2A-Version: 1.0, else 0.3",
    headers: ['A2A-Version'],
    response: { status: 200, schema: A2aAgentCard },
    errors: [],
  },
  rpc: {
    id: 'protocols.a2a.rpc',
    method: 'POST',
    path: '/a2a',
    summary:
      'A2A JSON-RPC, protocol 1.0 and 0.3 method names: SendMessage / message/send (a turn; contextId = session id), SendStreamingMessage / message/stream and SubscribeToTask / tasks/resubscribe (SSE of JSON-RPC responses), GetTask / tasks/get, ListTasks (the tasks of one context), CancelTask / tasks/cancel, GetExtendedAgentCard',
    headers: ['Last-Event-ID', 'A2A-Version'],
    response: { status: 200, schema: A2aRpcResponse },
    errors: ['BAD_REQUEST'],
  },
} as const satisfies Record<string, RouteDef>;

export const A2A_ROUTES: RouteDef[] = Object.values(A2A_ROUTE);

/** The JSON-RPC methods POST /a2a answers: protocol 1.0 names (proto-JSON), then the 0.3 names. */
const A2A_METHODS = [
  'SendMessage',
  'SendStreamingMessage',
  'GetTask',
  'ListTasks',
  'CancelTask',
  'SubscribeToTask',
  'GetExtendedAgentCard',
  'message/send',
  'message/stream',
  'tasks/get',
  'tasks/cancel',
  'tasks/resubscribe',
  'agent/getAuthenticatedExtendedCard',
];

export const A2A_EXTENSION = {
  name: 'a2a',
  description:
    "A2A (Agent2Agent, JSON-RPC binding, protocol 1.0 and 0.3 wires over one mapping; docs/protocols.md): GET /.well-known/agent-card.json is the realm's default agent (1.0 card with A2A-Version: 1.0, else 0.3), POST /a2a takes SendMessage / message/send (a Warren turn; contextId = session id, a new context creates the session; the task id is the turn's durable record), SendStreamingMessage / message/stream (SSE of JSON-RPC responses: Task, artifact update per text chunk, status update per tool call/result and at the end), GetTask / tasks/get, ListTasks (the tasks of one context, paged), CancelTask / tasks/cancel (Warren's cancel) and SubscribeToTask / tasks/resubscribe (a Task snapshot then the live events: nothing lost or repeated; with Last-Event-ID the exact events after that id instead). [a2a.remotes.<name>] makes remote A2A agents (1.0 or 0.3 cards) the tools a2a__<name> of every session, through the outbound URL rules.",
  routes: A2A_ROUTES.map((r) => `${r.method} ${r.path}`),
  methods: A2A_METHODS,
  request_headers: ['Last-Event-ID', 'A2A-Version'],
  config_keys: ['a2a.remotes'],
};
