// http/cluster-forward.ts: any node answers any route. Wraps the router of a cluster node: a request for a
// session (`/sessions/{id}...`) whose lease another live node holds is proxied to that node (streams and SSE
// included) and its answer relayed; a request cancel (`/requests/{id}/cancel`) this node does not know is
// tried on the peers. A forwarded request carries FORWARDED_HEADER and is always served where it lands.
// When the owner cannot be reached, the request waits (at most one lease term) for its lease to expire and
// is served here, where hydration takes the lease over. app.ts installs it on postgres realms.
import type { Logger } from 'pino';
import { Agent, request } from 'undici';
import type { ClusterNode } from '../actors/cluster/cluster-node.ts';
import { ServiceError } from '../contracts/errors.ts';
import { errorResponse } from './errors.ts';
import type { HttpRequest, HttpResponder, RequestHandler } from './transport.ts';

export const FORWARDED_HEADER = 'x-warren-forwarded-by';

const SESSION_PATH = /^\/sessions\/([^/]+)(?:\/|$)/;
const CANCEL_PATH = /^\/requests\/([^/]+)\/cancel$/;
const HOP_BY_HOP = new Set(['host', 'connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade', 'proxy-connection', 'te', 'trailer']);

export interface ForwardOptions {
  node: ClusterNode;
  log: Logger;
  /** True when this node's request registry knows the request id (in flight or finished). */
  knowsRequest(requestId: string): boolean;
  /** Counts each request proxied to a peer (the /metrics counter). */
  onForward?(): void;
  /** The leased resource other than a session a request acts on (a mob), forwarded like a session's. */
  resourceOf?(req: HttpRequest): { kind: string; id: string } | undefined;
}

type ProxyOutcome = 'done' | 'unreachable';

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
function forwardHeaders(req: HttpRequest, nodeId: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k)) headers[k] = v;
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

export function clusterForwarding(inner: RequestHandler, opts: ForwardOptions): RequestHandler {
  const { node, log } = opts;
  // No timeouts on headers or body: a turn answers when it ends, an SSE stream lasts as long as the client.
  const agent = new Agent({ headersTimeout: 0, bodyTimeout: 0, connect: { timeout: 2_000 } });

  async function proxy(base: string, req: HttpRequest, res: HttpResponder): Promise<ProxyOutcome> {
    const headers = forwardHeaders(req, node.nodeId);
    const abort = new AbortController();
    res.onAbort(() => abort.abort());
    let reply: Awaited<ReturnType<typeof request>>;
    try {
      reply = await request(`${base}${req.path}${req.query ? `?${req.query}` : ''}`, {
        method: req.method as 'GET', headers, body: req.body.length ? req.body : undefined, dispatcher: agent, signal: abort.signal,
      });
    } catch (err) {
      if (res.aborted) return 'done';
      const code = errorCode(err);
      log.warn({ err: (err as Error).message, code, owner: base }, 'cluster owner unreachable');
      // A request the owner may have received (a turn it may have committed before dying) is never run a
      // second time here: its outcome is unknown, as for a client of a single node killed mid-request.
      if (SAFE_METHODS.has(req.method) || (code !== undefined && NOT_DELIVERED.has(code))) return 'unreachable';
      sendError(res, new ServiceError('SERVICE_UNAVAILABLE', 'the node hosting this session went away mid-request; the outcome is unknown', { owner_url: base }), log);
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
      if (!res.aborted && !streaming) sendError(res, new ServiceError('SERVICE_UNAVAILABLE', 'the node hosting this session went away mid-request', { owner_url: base }), log);
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
      if ((await proxy(route.url, req, res)) === 'done') return true;
      // Unreachable owner: its lease runs out within one term unless it comes back and renews.
      await new Promise((resolve) => setTimeout(resolve, node.remainingMs(route.lease) + 25));
    }
    throw new ServiceError('SERVICE_UNAVAILABLE', `${kind} ${sessionId} is hosted by a node that cannot be reached`, kind === 'session' ? { session_id: sessionId } : { kind, id: sessionId });
  }

  async function forwardCancel(req: HttpRequest, res: HttpResponder): Promise<boolean> {
    for (const peer of node.report().peers) {
      if (!peer.alive || !peer.url) continue;
      try {
        const reply = await request(`${peer.url}${req.path}`, {
          method: 'POST', headers: forwardHeaders(req, node.nodeId),
          body: req.body.length ? req.body : undefined, dispatcher: agent,
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

  return async function forward(req: HttpRequest, res: HttpResponder): Promise<void> {
    if (req.headers[FORWARDED_HEADER] === undefined) {
      try {
        const session = SESSION_PATH.exec(req.path);
        const sessionId = session ? segment(session[1]) : undefined;
        const owned = sessionId === undefined ? opts.resourceOf?.(req) : undefined;
        if (sessionId !== undefined) {
          if (await forwardSession(sessionId, req, res)) return;
        } else if (owned) {
          if (await forwardSession(owned.id, req, res, owned.kind)) return;
        } else {
          const cancel = req.method === 'POST' ? CANCEL_PATH.exec(req.path) : null;
          const requestId = cancel ? segment(cancel[1]) : undefined;
          if (requestId !== undefined && !opts.knowsRequest(requestId) && (await forwardCancel(req, res))) return;
        }
      } catch (err) {
        sendError(res, err, log);
        return;
      }
    }
    await inner(req, res);
  };
}
