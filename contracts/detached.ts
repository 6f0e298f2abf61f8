// contracts/detached.ts: detached turns (a Warren extension beyond SPEC.md). Create and continue with
// `Prefer: respond-async` answer 202 with where to look; GET /requests/{request_id} reports the turn.
// actors/detached/detached-requests.ts keeps the durable request records; http/handlers/detached.ts serves them.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

const DetachedAccepted = Type.Object(
  { session_id: Type.String(), request_id: Type.String(), status_url: Type.String(), events_url: Type.String() },
  { $id: 'DetachedAccepted' },
);

const RequestState = Type.Union(['queued', 'running', 'completed', 'failed', 'cancelled'].map((s) => Type.Literal(s)));
type RequestState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** GET /requests/{request_id}: `response` when completed (the synchronous turn response), `error` when failed or cancelled (its envelope and status). */
const RequestStatus = Type.Object(
  {
    request_id: Type.String(),
    session_id: Type.String(),
    kind: Type.Union([Type.Literal('create'), Type.Literal('continue')]),
    status: RequestState,
    created_at: Type.String(),
    finished_at: Type.Optional(Type.String()),
    expires_at: Type.Optional(Type.String()),
    first_seq: Type.Optional(Type.Integer()),
    response: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.Unknown()),
    http_status: Type.Optional(Type.Integer()),
  },
  { $id: 'RequestStatus' },
);

/** The durable record of a detached request (store namespace `detached_request`, key = request id). */
export interface DetachedRecord {
  v: 1;
  request_id: string;
  session_id: string;
  kind: 'create' | 'continue';
  status: RequestState | 'expired';
  /** The process that accepted it: a running record of another boot was cut off by a restart. */
  boot: string;
  created_ms: number;
  first_seq?: number;
  finished_ms?: number;
  response?: unknown;
  error?: { status: number; body: Record<string, unknown> };
}

export const DETACHED_ROUTES: RouteDef[] = [
  {
    id: 'requests.get',
    method: 'GET',
    path: '/requests/{request_id}',
    summary: 'State of a detached turn (create or continue sent with Prefer: respond-async)',
    response: { status: 200, schema: RequestStatus },
    errors: ['NOT_FOUND'],
  },
];

type DetachedAccepted = Static<typeof DetachedAccepted>;
