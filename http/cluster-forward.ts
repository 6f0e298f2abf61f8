// http/cluster-forward.ts: any node answers any route. Wraps the router of a cluster node: a request for a
// session (`/sessions/{id}...`) whose lease another live node holds is proxied to that node (streams
// included) and its answer relayed; a request cancel (`/requests/{id}/cancel`) this node does not know is
// tried on the peers. A session's event stream is served here from the shared ledger instead
// (http/handlers/events.ts, actors/cluster/ledger-tail.ts), so it outlives the node hosting the session.
// A forwarded request carries FORWARDED_HEADER and is always served where it lands. A request that lost a
// lease race (two nodes claiming a free session at once) is routed again, to the winner. `POST /comms/send`
// and `GET /comms/peers` are routed by their sending session, a foreign protocol's turn start or cancel by the
// session it names (http/cluster-protocols.ts), and actors' OwnerCalls (comms admissions,
// MCP tools acting on a session, a mob or a work binding, JSON-RPC read from a WebSocket) go through the
// same routing; their internal calls (INTERNAL_CALL_PREFIX) are served
// here, never by the router.
// When the owner cannot be reached, the request waits (at most one lease term) for its lease to expire and
// is served here, where hydration takes the lease over. app.ts installs it on postgres realms.
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type { ClusterNode } from '../actors/cluster/cluster-node.ts';
import { INTERNAL_CALL_PREFIX, type OwnerCall, type OwnerCalls } from '../actors/cluster/owner-calls.ts';
import { ServiceError } from '../contracts/errors.ts';
import { errorResponse } from './errors.ts';
import type { HttpRequest, HttpResponder, RequestHandler } from './transport.ts';

export const FORWARDED_HEADER = 'x-warren-forwarded-by';

const SESSION_PATH = /^\/sessions\/([^/]+)(?:\/|$)/;
const EVENTS_PATH = /^\/sessions\/[^/]+\/events$/;
const CANCEL_PATH = /^\/requests\/([^/]+)\/cancel$/;
const HOP_BY_HOP = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);

export interface ForwardOptions {
  node: ClusterNode;
  /** Headers proving this node to its peers (the realm cluster secret; http/inbound-auth.ts), when API keys are on. */
  peerHeaders?: Record<string, string>;
  log: Logger;
  /** True when this node's request registry knows the request id (in flight or finished). */
  knowsRequest(requestId: string): boolean;
  /** Counts each request proxied to a peer (the /metrics counter). */
  onForward?(): void;
  /** Calls actors make on the node serving a session (bound here) and the internal calls served here. */
  calls?: OwnerCalls;
  /** The session a request names outside its path (a foreign-protocol turn start or cancel: http/cluster-protocols.ts). */
  sessionOfRequest?(req: HttpRequest): Promise<string | undefined>;
  /** The leased resource other than a session a request acts on (a mob), forwarded like a session's. */
  resourceOf?(req: HttpRequest): { kind: string; id: string } | undefined;
}

/** 'moved': the node reached had lost the session's lease to another one before serving it (route again). */
type ProxyOutcome = 'done' | 'unreachable' | 'moved';

/** Errors that prove the request never reached the owner (nothing ran there): safe to serve it elsewhere. */
const NOT_DELIVERED = new Set(['ECONNREFUSED', 'UND_ERR_CONNECT_TIMEOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
const SAFE_METHODS = new Set(['GET', 'HEAD']);

function errorCode(err: unknown): string | undefined {
  let e: unknown = err;
  for (let depth = 0; depth < 3 && e && typeof e === 'object'; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Copies the request headers a peer needs (hop-by-hop ones dropped) and marks the request forwarded. */
function forwardHeaders(req: HttpRequest, nodeId: string, peerHeaders?: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k)) headers[k] = v;
  Object.assign(headers, peerHeaders);
  headers[FORWARDED_HEADER] = nodeId;
  return headers;
}

/** A path segment decoded, or undefined when it is not valid percent-encoding (served locally, which answers 400/404). */
function segment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function sendError(res: HttpResponder, err: unknown, log: Logger): void {
  const { status, body } = errorResponse(err, log);
  if (!res.aborted) res.send(status, { 'content-type': 'application/json' }, JSON.stringify(body));
}

/**
 * An event stream served on this node whoever hosts the session: it tails the shared ledger
 * (actors/cluster/ledger-tail.ts), so it outlives the hosting node. A detached turn's stream
 * (`?request_id=`) is still proxied: where it starts is known on the node running that turn.
 */
function servedFromLedger(req: HttpRequest): boolean {
  return req.method === 'GET' && EVENTS_PATH.test(req.path) && !new URLSearchParams(req.query).has('request_id');
}

export function clusterForwarding(inner: RequestHandler, opts: ForwardOptions): RequestHandler {
  const { node, log } = opts;
  // No timeouts on headers or body: a turn answers when it ends, an SSE stream lasts as long as the client.
  const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0, connect: { timeout: 2_000 } });

  async function proxy(base: string, req: HttpRequest, res: HttpResponder): Promise<ProxyOutcome> {
    const headers = forwardHeaders(req, node.nodeId, opts.peerHeaders);
    const abort = new AbortController();
    res.onAbort(() => abort.abort());
    let reply: Awaited<ReturnType<typeof request>>;
    try {
      reply = await request(`${base}${req.path}${req.query ? `?${req.query}` : ''}`, {
        method: req.method as 'GET',
        headers,
        body: req.body.length ? req.body : undefined,
        dispatcher: agent,
        signal: abort.signal,
      });
    } catch (err) {
      if (res.aborted) return 'done';
      const code = errorCode(err);
      log.warn({ err: (err as Error).message, code, owner: base }, 'cluster owner unreachable');
      // A request the owner may have received (a turn it may have committed before dying) is never run a
      // second time here: its outcome is unknown, as for a client of a single node killed mid-request.
      if (SAFE_METHODS.has(req.method) || (code !== undefined && NOT_DELIVERED.has(code))) return 'unreachable';
      sendError(
        res,
        new ServiceError('SERVICE_UNAVAILABLE', 'the node hosting this session went away mid-request; the outcome is unknown', {
          owner_url: base,
        }),
        log,
      );
      return 'done';
    }
    opts.onForward?.();
    node.forwarded++;
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(reply.headers)) {
      if (HOP_BY_HOP.has(k) || v === undefined) continue;
      out[k] = Array.isArray(v) ? v.join(', ') : v;
    }
    const streaming = (out['content-type'] ?? '').includes('text/event-stream');
    try {
      if (!streaming) {
        const body = Buffer.from(await reply.body.arrayBuffer());
        if (isLostClaim(reply.statusCode, body)) return 'moved';
        if (!res.aborted) res.send(reply.statusCode, out, body);
        return 'done';
      }
      res.startStream(reply.statusCode, out);
      const decoder = new TextDecoder();
      for await (const chunk of reply.body) {
        if (res.aborted) break;
        const text = decoder.decode(chunk as Buffer, { stream: true });
        if (text && !res.write(text)) await new Promise<void>((resolve) => res.onDrain(resolve));
      }
    } catch (err) {
      // The owner went away mid-answer: the client sees the stream end (it reconnects with Last-Event-ID).
      if (!res.aborted && !streaming)
        sendError(
          res,
          new ServiceError('SERVICE_UNAVAILABLE', 'the node hosting this session went away mid-request', { owner_url: base }),
          log,
        );
      log.warn({ err: (err as Error).message, owner: base }, 'cluster forward ended early');
    }
    if (streaming && !res.aborted) res.end();
    return 'done';
  }

  /** Proxies to the owner while one is alive and reachable; false when the request is to be served here. */
  async function forwardSession(sessionId: string, req: HttpRequest, res: HttpResponder, kind = 'session'): Promise<boolean> {
    // At most two owners are tried: one that died, then (after its lease expired) whoever took over.
    for (let attempt = 0; attempt < 3; attempt++) {
      // The database unreachable: served here, where the store answers with its own coded error.
      const route = await node.route(sessionId, kind).catch(() => ({ local: true as const }));
      if (route.local) return false;
      const outcome = await proxy(route.url, req, res);
      if (outcome === 'done') return true;
      if (outcome === 'moved') continue;
      // Unreachable owner: its lease runs out within one term unless it comes back and renews.
      await new Promise((resolve) => setTimeout(resolve, node.remainingMs(route.lease) + 25));
    }
    throw new ServiceError(
      'SERVICE_UNAVAILABLE',
      `${kind} ${sessionId} is hosted by a node that cannot be reached`,
      kind === 'session' ? { session_id: sessionId } : { kind, id: sessionId },
    );
  }

  async function forwardCancel(req: HttpRequest, res: HttpResponder): Promise<boolean> {
    for (const peer of node.report().peers) {
      if (!peer.alive || !peer.url) continue;
      try {
        const reply = await request(`${peer.url}${req.path}`, {
          method: 'POST',
          headers: forwardHeaders(req, node.nodeId, opts.peerHeaders),
          body: req.body.length ? req.body : undefined,
          dispatcher: agent,
        });
        const body = Buffer.from(await reply.body.arrayBuffer());
        if (reply.statusCode === 404) continue;
        opts.onForward?.();
        node.forwarded++;
        res.send(reply.statusCode, { 'content-type': String(reply.headers['content-type'] ?? 'application/json') }, body);
        return true;
      } catch {
        // A peer that cannot be reached does not hold the request either.
      }
    }
    return false;
  }

  /**
   * Serves a session request here (route() found no live owner) and, when this node lost the race for the
   * lease to another node claiming it at the same instant, routes it again: it goes to the winner.
   */
  async function serveSession(sessionId: string, req: HttpRequest, res: HttpResponder, kind = 'session'): Promise<void> {
    let lost: LostClaim | undefined;
    for (let attempt = 0; attempt < CLAIM_RETRIES; attempt++) {
      try {
        if (await forwardSession(sessionId, req, res, kind)) return;
      } catch (err) {
        sendError(res, err, log);
        return;
      }
      const guarded = catchLostClaim(res);
      await serveHere(req, guarded.res);
      lost = guarded.lost();
      if (!lost) return;
      log.info({ kind, id: sessionId, attempt }, 'lost a lease race; routing the request to the winner');
    }
    if (lost && !res.aborted) res.send(lost.status, lost.headers, lost.body);
  }

  /** A request served on this node: an internal call (OwnerCalls) or a route of the router. */
  async function serveHere(req: HttpRequest, res: HttpResponder): Promise<void> {
    if (!req.path.startsWith(INTERNAL_CALL_PREFIX)) return inner(req, res);
    try {
      const name = segment(req.path.slice(INTERNAL_CALL_PREFIX.length));
      const handler = name === undefined ? undefined : opts.calls?.handler(name);
      if (!handler) throw new ServiceError('NOT_FOUND', `no internal call ${req.path}`);
      let body: unknown;
      try {
        body = req.body.length ? JSON.parse(req.body.toString('utf8')) : null;
      } catch {
        throw new ServiceError('BAD_REQUEST', 'internal call body is not JSON');
      }
      const result = await handler(body);
      if (!res.aborted) res.send(200, { 'content-type': 'application/json' }, JSON.stringify(result ?? null));
    } catch (err) {
      sendError(res, err, log);
    }
  }

  async function forward(req: HttpRequest, res: HttpResponder): Promise<void> {
    // Internal calls come from peers only (a peer's OwnerCalls proxied through this layer).
    if (req.path.startsWith(INTERNAL_CALL_PREFIX) && req.headers[FORWARDED_HEADER] === undefined) {
      sendError(res, new ServiceError('NOT_FOUND', `no route for ${req.method} ${req.path}`), log);
      return;
    }
    // A forwarded request is served where it lands (a lost lease race answers 503 to the forwarding node,
    // which routes it again).
    if (req.headers[FORWARDED_HEADER] === undefined) {
      const sessionId = sessionOf(req) ?? (await opts.sessionOfRequest?.(req).catch(() => undefined));
      if (sessionId !== undefined) {
        await serveSession(sessionId, req, res);
        return;
      }
      // A mob (or another leased resource) is served by its lease holder like a session, and a request
      // that lost the race for its free lease is routed to the winner.
      const owned = opts.resourceOf?.(req);
      if (owned) {
        await serveSession(owned.id, req, res, owned.kind);
        return;
      }
      try {
        const cancel = req.method === 'POST' ? CANCEL_PATH.exec(req.path) : null;
        const requestId = cancel ? segment(cancel[1]) : undefined;
        if (requestId !== undefined && !opts.knowsRequest(requestId) && (await forwardCancel(req, res))) return;
      } catch (err) {
        sendError(res, err, log);
        return;
      }
    }
    await serveHere(req, res);
  }

  /** Serves a request about a leased resource other than a session on its live owner, or here (where hydration claims it). */
  async function serveResource(resource: { kind: string; id: string }, req: HttpRequest, res: HttpResponder): Promise<void> {
    try {
      if (await forwardSession(resource.id, req, res, resource.kind)) return;
    } catch (err) {
      sendError(res, err, log);
      return;
    }
    await serveHere(req, res);
  }

  // Actors' calls to the node serving a session (or holding a mob or a binding) go through the same routing as client requests.
  opts.calls?.bind(async (call) => {
    const captured = capture(call.signal);
    const req = ownerRequest(call);
    if (call.sessionId !== undefined) await serveSession(call.sessionId.toLowerCase(), req, captured.res);
    else if (call.resource !== undefined) await serveResource(call.resource, req, captured.res);
    else await forward(req, captured.res);
    return captured.result();
  });

  return forward;
}

/** The session a client request is about, when it is routed by session: its path, or the sender of a comms send. */
function sessionOf(req: HttpRequest): string | undefined {
  const session = SESSION_PATH.exec(req.path);
  if (session) return servedFromLedger(req) ? undefined : segment(session[1]);
  // Comms run on the node hosting the sending session (its comms settings, its inbound requests).
  if (req.method === 'POST' && req.path === '/comms/send') {
    try {
      const body = JSON.parse(req.body.toString('utf8')) as { session_id?: unknown };
      return typeof body.session_id === 'string' ? bareSessionId(body.session_id) : undefined;
    } catch {
      return undefined;
    }
  }
  if (req.method === 'GET' && req.path === '/comms/peers') {
    const id = new URLSearchParams(req.query).get('session_id');
    return id ? bareSessionId(id) : undefined;
  }
  return undefined;
}

/** A session id from an id or a `<realm>:<id>` locator, lower-cased (leases are keyed by the bare id). */
function bareSessionId(raw: string): string {
  return raw.slice(raw.lastIndexOf(':') + 1).toLowerCase();
}

/** The HttpRequest of an actor's call. */
function ownerRequest(call: OwnerCall): HttpRequest {
  const q = call.path.indexOf('?');
  const body = call.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(call.body));
  return {
    method: call.method.toUpperCase(),
    path: q < 0 ? call.path : call.path.slice(0, q),
    query: q < 0 ? '' : call.path.slice(q + 1),
    headers: { ...(body.length ? { 'content-type': 'application/json' } : {}), ...call.headers },
    body,
    bodyTooLarge: false,
  };
}

/** A responder that keeps the answer of an actor's call (aborted when its signal is). */
function capture(signal: AbortSignal | undefined): { res: HttpResponder; result(): { status: number; body: Buffer } } {
  let status = 0;
  const chunks: Buffer[] = [];
  const aborts: Array<() => void> = [];
  let aborted = signal?.aborted ?? false;
  signal?.addEventListener(
    'abort',
    () => {
      aborted = true;
      for (const cb of aborts.splice(0)) cb();
    },
    { once: true },
  );
  const res: HttpResponder = {
    get aborted() {
      return aborted;
    },
    onAbort: (cb) => {
      aborts.push(cb);
    },
    send(s, _headers, body) {
      status = s;
      chunks.push(Buffer.from(body));
    },
    startStream(s) {
      status = s;
    },
    write(chunk) {
      chunks.push(Buffer.from(chunk));
      return true;
    },
    onDrain: () => undefined,
    end: () => undefined,
  };
  return {
    res,
    result() {
      if (status === 0)
        throw new ServiceError(
          aborted ? 'REQUEST_CANCELLED' : 'SERVICE_UNAVAILABLE',
          aborted ? 'request cancelled' : 'the node serving the session gave no answer',
        );
      return { status, body: Buffer.concat(chunks) };
    },
  };
}

/** Tries of a session request that keeps losing lease races (each loss means another node now holds it). */
const CLAIM_RETRIES = 4;

interface LostClaim {
  status: number;
  headers: Record<string, string>;
  body: string | Buffer;
}

/**
 * True for the answer of a claim this node lost (actors/cluster: the lease is held by another live node,
 * or it stayed contended): nothing of the request ran, so it may be served by the lease holder.
 */
function isLostClaim(status: number, body: string | Buffer): boolean {
  if (status !== 503) return false;
  try {
    const parsed = JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as {
      code?: unknown;
      details?: Record<string, unknown>;
    };
    const d = parsed.details;
    return parsed.code === 'SERVICE_UNAVAILABLE' && d !== undefined && (typeof d.owner_node === 'string' || typeof d.lease === 'string');
  } catch {
    return false;
  }
}

/** A responder that holds back a lost-claim answer (see isLostClaim) instead of sending it. */
function catchLostClaim(res: HttpResponder): { res: HttpResponder; lost(): LostClaim | undefined } {
  let lost: LostClaim | undefined;
  const guarded: HttpResponder = {
    get aborted() {
      return res.aborted;
    },
    onAbort: (cb) => res.onAbort(cb),
    send(status, headers, body) {
      if (isLostClaim(status, body)) lost = { status, headers, body };
      else res.send(status, headers, body);
    },
    startStream: (status, headers) => res.startStream(status, headers),
    write: (chunk) => res.write(chunk),
    onDrain: (cb) => res.onDrain(cb),
    end: () => res.end(),
  };
  return { res: guarded, lost: () => lost };
}
