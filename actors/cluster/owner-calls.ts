// actors/cluster/owner-calls.ts: how an actor on a cluster node gets work done on the node serving a
// session (the one holding its lease, or this one after taking a free lease). Two kinds of call: a REST
// request (the MCP `warren_session_continue` tool runs `POST /sessions/{id}/messages` there; a JSON-RPC
// call read from a WebSocket runs `POST /rpc` on the node hosting its mob) and a named internal call that a
// module registered with handle() (comms admits a peer envelope into the recipient's inbox on the
// recipient's node; an MCP tool acting on a mob or a work binding runs on the node holding it). A call may
// be routed by a session or by another leased resource (a mob, a work binding). The HTTP layer binds the transport (http/cluster-forward.ts): it routes
// the call by session id exactly as it routes a client request (forwarded over HTTP to a live owner,
// served here when nobody holds the session, re-routed when a lease race was lost), so an actor never
// learns where the session lives. app.ts creates one on postgres realms.
import { ERROR_TABLE, ServiceError, type ErrorCode } from '../../contracts/errors.ts';

/** The path of internal call `name` (served by the cluster layer, never by the router). */
export const INTERNAL_CALL_PREFIX = '/_cluster/call/';

export interface OwnerCall {
  /** Route by this session; absent, the request is routed as a client request would be (by its path). */
  sessionId?: string;
  /** Route by this leased resource (a mob, a work binding) instead: served by its lease holder, or here when nobody holds it. */
  resource?: { kind: string; id: string };
  method: string;
  /** Path with its query string. */
  path: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** Aborting it is like the client going away. */
  signal?: AbortSignal;
}

/** Status and body bytes of the answer. */
export type OwnerTransport = (call: OwnerCall) => Promise<{ status: number; body: Buffer }>;

/** Runs one internal call on the node serving its session; resolves with the JSON result. */
export type InternalHandler = (body: unknown) => Promise<unknown>;

export interface OwnerReply {
  status: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a route's JSON answer, read by its caller
  body: any;
}

export class OwnerCalls {
  #transport: OwnerTransport | null = null;
  readonly #handlers = new Map<string, InternalHandler>();

  /** Installed by the HTTP layer once the node's handler exists. */
  bind(transport: OwnerTransport): void {
    this.#transport = transport;
  }

  /** Registers internal call `name` (a module's, at composition). */
  handle(name: string, fn: InternalHandler): void {
    if (this.#handlers.has(name)) throw new Error(`internal call registered twice: ${name}`);
    this.#handlers.set(name, fn);
  }

  /** The handler of internal call `name`, if registered on this node. */
  handler(name: string): InternalHandler | undefined {
    return this.#handlers.get(name);
  }

  /** Runs a request on the node serving `call.sessionId` (or routed by its path). */
  async request(call: OwnerCall): Promise<OwnerReply> {
    if (!this.#transport) throw new ServiceError('SERVICE_UNAVAILABLE', 'cluster calls are not ready yet');
    const { status, body } = await this.#transport(call);
    const text = body.toString('utf8');
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = { error: text, code: 'INTERNAL_ERROR' };
    }
    return { status, body: parsed };
  }

  /** Runs internal call `name` on the node serving `sessionId`: its result, or its error thrown here. */
  async call<T>(sessionId: string, name: string, body: unknown): Promise<T> {
    const reply = await this.request({ sessionId, method: 'POST', path: `${INTERNAL_CALL_PREFIX}${encodeURIComponent(name)}`, body });
    if (reply.status === 200) return reply.body as T;
    throw errorOfReply(reply);
  }

  /** Runs internal call `name` on the node holding `resource` (here when nobody holds it): its result, or its error thrown here. */
  async callOn<T>(resource: { kind: string; id: string }, name: string, body: unknown, signal?: AbortSignal): Promise<T> {
    const reply = await this.request({
      resource,
      method: 'POST',
      path: `${INTERNAL_CALL_PREFIX}${encodeURIComponent(name)}`,
      body,
      ...(signal ? { signal } : {}),
    });
    if (reply.status === 200) return reply.body as T;
    throw errorOfReply(reply);
  }
}

/** The ServiceError an error envelope (`{error, code, details}`) stands for. */
export function errorOfReply(reply: OwnerReply): ServiceError {
  const b = (reply.body ?? {}) as { error?: unknown; code?: unknown; details?: unknown };
  const code = typeof b.code === 'string' && b.code in ERROR_TABLE ? (b.code as ErrorCode) : 'INTERNAL_ERROR';
  const message = typeof b.error === 'string' ? b.error : `the node serving the session answered ${reply.status}`;
  return new ServiceError(code, message, b.details);
}
