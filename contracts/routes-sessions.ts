// contracts/routes-sessions.ts: catalog entries of the /sessions resource, request cancel and the
// session event stream and ledger reads. http/handlers/sessions.ts and events.ts serve them.
import type { RouteDef } from './route.ts';
import {
  ArchiveResponse, CancelResponse, ContinueSessionRequest, CreateSessionRequest, History, HistoryQuery,
  InterruptResponse, ListSessionsQuery, SessionDetail, SessionList, SessionStatus, SystemContextRequest,
  SystemContextResponse, SystemPromptRequest, SystemPromptResponse, TurnResponse,
} from './session.ts';
import { EventsQuery, LedgerPage, LedgerQuery } from './events.ts';

const REQ_HEADER = 'x-warren-request-id';

/** Each route by name, so handlers bind to it with its body and query types (http/handler.ts `on`). */
export const SESSION_ROUTE = {
  create: {
    id: 'sessions.create', method: 'POST', path: '/sessions', summary: 'Create a session and run its first turn',
    body: CreateSessionRequest, response: { status: 200, schema: TurnResponse }, headers: [REQ_HEADER, 'prefer'],
    errors: ['BAD_REQUEST', 'DUPLICATE_REQUEST_ID', 'REQUEST_CANCELLED', 'SESSION_CREATED_WITH_TURN_FAILURE', 'PROVIDER_ERROR', 'AGENT_ERROR', 'CAPABILITY_UNAVAILABLE', 'BUDGET_EXHAUSTED', 'HOOK_DENIED', 'SKILL_NOT_FOUND', 'SKILL_RESOLUTION_FAILED'],
  },
  list: {
    id: 'sessions.list', method: 'GET', path: '/sessions', summary: 'List sessions (repeatable label=key=value filters, AND)',
    query: ListSessionsQuery, response: { status: 200, schema: SessionList }, errors: ['BAD_REQUEST'],
  },
  get: {
    id: 'sessions.get', method: 'GET', path: '/sessions/{id}', summary: 'Session detail',
    response: { status: 200, schema: SessionDetail }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  status: {
    id: 'sessions.status', method: 'GET', path: '/sessions/{id}/status', summary: 'Current runtime state of the session machine',
    response: { status: 200, schema: SessionStatus }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  history: {
    id: 'sessions.history', method: 'GET', path: '/sessions/{id}/history', summary: 'Committed transcript, oldest first',
    query: HistoryQuery, response: { status: 200, schema: History }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  'continue': {
    id: 'sessions.continue', method: 'POST', path: '/sessions/{id}/messages', summary: 'Run a turn on an existing session',
    body: ContinueSessionRequest, response: { status: 200, schema: TurnResponse }, headers: [REQ_HEADER, 'prefer'],
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'SESSION_BUSY', 'SESSION_NOT_RUNNING', 'DUPLICATE_REQUEST_ID', 'REQUEST_CANCELLED', 'PROVIDER_ERROR', 'AGENT_ERROR', 'CAPABILITY_UNAVAILABLE', 'BUDGET_EXHAUSTED', 'HOOK_DENIED', 'SKILL_NOT_FOUND', 'SKILL_RESOLUTION_FAILED'],
  },
  systemContext: {
    id: 'sessions.system_context', method: 'POST', path: '/sessions/{id}/system_context', summary: 'Append one durable System message',
    body: SystemContextRequest, response: { status: 200, schema: SystemContextResponse }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'CONFLICT'],
  },
  systemPrompt: {
    id: 'sessions.system_prompt', method: 'POST', path: '/sessions/{id}/system_prompt', summary: 'Replace a keyed, versioned System prompt',
    body: SystemPromptRequest, response: { status: 200, schema: SystemPromptResponse }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'SESSION_BUSY'],
  },
  interrupt: {
    id: 'sessions.interrupt', method: 'POST', path: '/sessions/{id}/interrupt', summary: 'Interrupt the running turn (idle: no-op)',
    response: { status: 200, schema: InterruptResponse }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  archive: {
    id: 'sessions.archive', method: 'DELETE', path: '/sessions/{id}', summary: 'Archive a session',
    response: { status: 200, schema: ArchiveResponse }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  cancelRequest: {
    id: 'requests.cancel', method: 'POST', path: '/requests/{request_id}/cancel', summary: 'Cancel an uncommitted request',
    response: { status: 200, schema: CancelResponse }, errors: ['NOT_FOUND'],
  },
  events: {
    id: 'sessions.events', method: 'GET', path: '/sessions/{id}/events',
    summary: 'SSE stream of session events; Last-Event-ID or after_seq replays from the ledger first',
    query: EventsQuery, headers: ['last-event-id'], response: { status: 200, contentType: 'text/event-stream' },
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  ledger: {
    id: 'sessions.ledger', method: 'GET', path: '/sessions/{id}/ledger', summary: 'Ledger entries of one session by sequence range',
    query: LedgerQuery, response: { status: 200, schema: LedgerPage }, errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'SESSION_PERSISTENCE_DISABLED'],
  },
} satisfies Record<string, RouteDef>;

/** The catalog in order. */
export const SESSION_ROUTES: RouteDef[] = Object.values(SESSION_ROUTE);

