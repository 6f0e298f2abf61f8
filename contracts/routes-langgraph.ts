// contracts/routes-langgraph.ts: the LangGraph Agent Protocol routes that @langchain/langgraph-sdk's
// client uses (assistants, threads, runs, thread state and history), served over Warren sessions by
// http/handlers/protocols/langgraph.ts. Bodies keep the protocol's extra fields (additionalProperties):
// its clients send many that Warren does not use; docs/protocols.md lists the honoured ones.
import { Type } from 'typebox';
import type { RouteDef } from './route.ts';

const Loose = { additionalProperties: true };
const Any = Type.Object({}, Loose);

export const LgRunRequest = Type.Object(
  {
    assistant_id: Type.String(),
    input: Type.Optional(Type.Union([Type.Object({}, Loose), Type.Null()])),
    command: Type.Optional(Type.Union([Type.Object({}, Loose), Type.Null()])),
    stream_mode: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String()), Type.Null()])),
    metadata: Type.Optional(Type.Union([Type.Object({}, Loose), Type.Null()])),
  },
  { $id: 'LangGraphRunRequest', additionalProperties: true },
);

const LgThreadCreate = Type.Object(
  {
    thread_id: Type.Optional(Type.String({ pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$' })),
    metadata: Type.Optional(Type.Union([Type.Object({}, Loose), Type.Null()])),
    if_exists: Type.Optional(Type.String()),
  },
  { $id: 'LangGraphThreadCreate', additionalProperties: true },
);

const HistoryQuery = Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[0-9]{1,4}$' })) }, Loose);

const errs: RouteDef['errors'] = ['BAD_REQUEST', 'NOT_FOUND', 'SESSION_NOT_FOUND'];

function r(id: string, method: RouteDef['method'], path: string, summary: string, extra: Partial<RouteDef> = {}): RouteDef {
  return {
    id: `protocols.langgraph.${id}`,
    method,
    path,
    summary: `LangGraph: ${summary}`,
    response: { status: 200, schema: Any },
    errors: errs,
    ...extra,
  };
}

const stream = { response: { status: 200, contentType: 'text/event-stream' as const } };

export const LANGGRAPH_ROUTES: RouteDef[] = [
  r('assistants.search', 'POST', '/assistants/search', 'list the assistants (the realm default agent)', { body: Any, bodyOptional: true }),
  r('assistants.get', 'GET', '/assistants/{assistant_id}', 'one assistant'),
  r('assistants.graph', 'GET', '/assistants/{assistant_id}/graph', 'the assistant graph (one agent node with tools)'),
  r('threads.create', 'POST', '/threads', 'create a thread (a Warren session id, created with its first run)', {
    body: LgThreadCreate,
    bodyOptional: true,
  }),
  r('threads.search', 'POST', '/threads/search', 'list threads (Warren sessions)', { body: Any, bodyOptional: true }),
  r('threads.get', 'GET', '/threads/{thread_id}', 'a thread'),
  r('threads.state', 'GET', '/threads/{thread_id}/state', 'the thread state {messages} at its last checkpoint'),
  r('threads.history', 'POST', '/threads/{thread_id}/history', 'the thread states after each run, newest first', {
    body: Any,
    bodyOptional: true,
  }),
  r('threads.historyGet', 'GET', '/threads/{thread_id}/history', 'the thread states after each run, newest first', { query: HistoryQuery }),
  r('runs.create', 'POST', '/threads/{thread_id}/runs', 'start a run in the background (a Warren turn)', {
    body: LgRunRequest,
    errors: [...errs, 'SESSION_BUSY'],
  }),
  r('runs.wait', 'POST', '/threads/{thread_id}/runs/wait', 'run a turn and answer the final thread values', {
    body: LgRunRequest,
    errors: [...errs, 'SESSION_BUSY'],
  }),
  r(
    'runs.stream',
    'POST',
    '/threads/{thread_id}/runs/stream',
    'run a turn and stream it (values, updates, messages, messages-tuple, events)',
    {
      body: LgRunRequest,
      errors: [...errs, 'SESSION_BUSY'],
      headers: ['Last-Event-ID'],
      ...stream,
    },
  ),
  r('runs.get', 'GET', '/threads/{thread_id}/runs/{run_id}', 'a run'),
  r('runs.cancel', 'POST', '/threads/{thread_id}/runs/{run_id}/cancel', 'cancel (interrupt) a running run', {
    body: Any,
    bodyOptional: true,
  }),
  r('runs.join', 'GET', '/threads/{thread_id}/runs/{run_id}/join', 'wait for a run and answer the final thread values'),
  r('runs.joinStream', 'GET', '/threads/{thread_id}/runs/{run_id}/stream', 'the stream of a run, from its start or after Last-Event-ID', {
    headers: ['Last-Event-ID'],
    ...stream,
  }),
];
