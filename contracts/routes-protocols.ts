// contracts/routes-protocols.ts: the routes of the foreign protocol bindings (http/modules/protocols-module.ts):
// the OpenAI Responses API over Warren sessions. Request bodies keep the protocol's own extra fields
// (additionalProperties), since its clients send fields Warren does not use; docs/protocols.md lists
// which ones are honoured.
import { Type } from 'typebox';
import type { RouteDef } from './route.ts';
import { A2A_EXTENSION } from './routes-a2a.ts';
import { LANGGRAPH_ROUTES } from './routes-langgraph.ts';

const Loose = { additionalProperties: true };

const InputText = Type.Object({ type: Type.String(), text: Type.Optional(Type.String()) }, Loose);
const InputItem = Type.Object(
  {
    type: Type.Optional(Type.String()),
    role: Type.Optional(Type.String()),
    content: Type.Optional(Type.Union([Type.String(), Type.Array(InputText)])),
  },
  Loose,
);

/** POST /v1/responses (OpenAI Responses create). */
export const ResponseCreateRequest = Type.Object(
  {
    model: Type.Optional(Type.String()),
    input: Type.Union([Type.String(), Type.Array(InputItem)]),
    instructions: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    previous_response_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
    tools: Type.Optional(Type.Array(Type.Object({ type: Type.String() }, Loose))),
    store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  },
  { $id: 'ResponseCreateRequest', additionalProperties: true },
);

/** An OpenAI Response object (output items: message, mcp_call); see docs/protocols.md. */
const ResponseObject = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('response'),
    created_at: Type.Integer(),
    status: Type.String(),
    model: Type.String(),
    output: Type.Array(Type.Object({ type: Type.String(), id: Type.String() }, Loose)),
    session_id: Type.String(),
  },
  { $id: 'ResponseObject', additionalProperties: true },
);

/** POST /ag-ui/{agent}: AG-UI's RunAgentInput (camelCase, as its clients send it). */
export const RunAgentInput = Type.Object(
  {
    threadId: Type.String({ minLength: 1 }),
    runId: Type.String({ minLength: 1, maxLength: 200 }),
    messages: Type.Array(
      Type.Object({ id: Type.Optional(Type.String()), role: Type.String(), content: Type.Optional(Type.Unknown()) }, Loose),
    ),
    tools: Type.Optional(Type.Array(Type.Object({}, Loose))),
    context: Type.Optional(Type.Array(Type.Object({}, Loose))),
    state: Type.Optional(Type.Unknown()),
    forwardedProps: Type.Optional(Type.Unknown()),
  },
  { $id: 'AgUiRunAgentInput', additionalProperties: true },
);

export const PROTOCOL_ROUTE = {
  agUiRun: {
    id: 'protocols.agui.run',
    method: 'POST',
    path: '/ag-ui/{agent}',
    summary:
      'AG-UI: run the agent (a Warren turn in the session threadId) and stream AG-UI events; the same runId with Last-Event-ID resumes that run',
    body: RunAgentInput,
    headers: ['Last-Event-ID'],
    response: { status: 200, contentType: 'text/event-stream' },
    errors: ['BAD_REQUEST', 'NOT_FOUND', 'CONFLICT', 'SESSION_BUSY'],
  },
  responsesCreate: {
    id: 'protocols.openai.responses.create',
    method: 'POST',
    path: '/v1/responses',
    summary:
      'OpenAI Responses: run a turn (a new session, or the session of previous_response_id); stream: true answers SSE response events, background: true answers at once',
    body: ResponseCreateRequest,
    response: { status: 200, schema: ResponseObject },
    errors: ['BAD_REQUEST', 'NOT_FOUND', 'SESSION_NOT_FOUND', 'SESSION_BUSY', 'REQUEST_CANCELLED', 'PROVIDER_ERROR', 'INTERNAL_ERROR'],
  },
  responsesGet: {
    id: 'protocols.openai.responses.get',
    method: 'GET',
    path: '/v1/responses/{response_id}',
    summary: 'OpenAI Responses: a response (stored, in progress, or background), rebuilt from its turn events; ?stream=true replays them',
    query: Type.Object(
      { stream: Type.Optional(Type.String()), starting_after: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$' })) },
      Loose,
    ),
    response: { status: 200, schema: ResponseObject },
    errors: ['NOT_FOUND', 'BAD_REQUEST'],
  },
  responsesCancel: {
    id: 'protocols.openai.responses.cancel',
    method: 'POST',
    path: '/v1/responses/{response_id}/cancel',
    summary: 'OpenAI Responses: cancel a background response that is still running',
    bodyOptional: true,
    body: Type.Object({}, Loose),
    response: { status: 200, schema: ResponseObject },
    errors: ['NOT_FOUND'],
  },
} as const satisfies Record<string, RouteDef>;

export const PROTOCOL_ROUTES: RouteDef[] = Object.values(PROTOCOL_ROUTE);

/** The /warren/extensions entries of the protocol bindings. */
export const PROTOCOL_EXTENSIONS = [
  {
    name: 'openai_responses',
    description:
      'The OpenAI Responses API over Warren sessions (docs/protocols.md): POST /v1/responses runs a turn in a new session, or with previous_response_id in that response\'s session; stream: true answers Responses SSE events; background: true answers at once (GET /v1/responses/{id} reports it, POST /v1/responses/{id}/cancel cancels it). Warren\'s own tool calls appear as mcp_call output items (server_label "warren"). The response object carries session_id.',
    routes: PROTOCOL_ROUTES.filter((r) => r.path.startsWith('/v1/responses')).map((r) => `${r.method} ${r.path}`),
    request_fields: ['input', 'instructions', 'previous_response_id', 'stream', 'background', 'model', 'max_output_tokens', 'metadata'],
    config_keys: [],
  },
  {
    name: 'ag_ui',
    description:
      'AG-UI (docs/protocols.md): POST /ag-ui/default takes a RunAgentInput (threadId = Warren session id, a UUID; runId names the turn) and streams AG-UI events as SSE with `id: <seq>:<n>`. Posting the same runId again with Last-Event-ID resumes that run after that id (RUN_STARTED first, then the missing events) instead of starting a new turn.',
    routes: ['POST /ag-ui/{agent}'],
    request_headers: ['Last-Event-ID'],
    config_keys: [],
  },
  {
    name: 'langgraph',
    description:
      'The LangGraph Agent Protocol as @langchain/langgraph-sdk uses it (docs/protocols.md): assistant "agent", threads (= sessions, same id), runs (= turns) create/wait/stream (stream_mode values, updates, messages, messages-tuple, events), get/join/cancel, GET /threads/{id}/runs/{run_id}/stream with Last-Event-ID, thread state and history.',
    routes: LANGGRAPH_ROUTES.map((r) => `${r.method} ${r.path}`),
    request_headers: ['Last-Event-ID'],
    config_keys: [],
  },
  A2A_EXTENSION,
];
