// http/router.ts: the layer between a transport (server-uws.ts / server-node.ts) and the handlers.
// Matches the route catalog, enforces body size, media type, JSON and schema checks, assigns the request
// id, calls the handler by route id and writes its result. Built once by app.ts; nothing a client sends
// can make it throw.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { ServiceError } from '../contracts/errors.ts';
import type { RouteDef } from '../contracts/route.ts';
import { authErrorBody, errorResponse } from './errors.ts';
import { parseJsonText } from './json-depth.ts';
import type { Handler, HandlerResult, HandlerTable } from './handler.ts';
import type { HttpRequest, HttpResponder, RequestHandler } from './transport.ts';
import { compileRoutes, type RouteValidators } from './validate.ts';

export interface RouterOptions {
  routes: readonly RouteDef[];
  handlers: HandlerTable;
  logger: Logger;
  /** Bodies above this size answer 413 (the transport normally flags them first). */
  maxBodyBytes: number;
  /** JSON bodies nested deeper than this answer 400 before they are parsed (default 64). */
  maxJsonDepth?: number;
}

interface Entry {
  route: RouteDef;
  handler: Handler | undefined;
  validators: RouteValidators;
  /** Template parameter names in path order. */
  paramNames: string[];
}

/** One path segment position; static children are tried before the parameter child. */
interface Node {
  statics: Map<string, Node>;
  param: Node | undefined;
  /** Routes ending here, by method. */
  methods: Map<string, Entry> | undefined;
}

type Match = { entry: Entry; values: string[] } | { allow: string[] } | undefined;

const DEFAULT_MAX_JSON_DEPTH = 64;
const REQUEST_ID_RE = /^[\x21-\x7e]{1,128}$/;
const JSON_TYPE = 'application/json';

/**
 * Builds the request handler for a transport. Unknown handlers are not an error: their routes answer
 * 501 CAPABILITY_UNAVAILABLE. Handler keys that match no route throw at startup (a wiring bug).
 */
export function createRouter(opts: RouterOptions): RequestHandler {
  const { handlers, logger, maxBodyBytes } = opts;
  const maxJsonDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  const validators = compileRoutes(opts.routes);
  const ids = new Set(opts.routes.map((r) => r.id));
  for (const id of Object.keys(handlers)) {
    if (!ids.has(id)) throw new Error(`handler without a catalog route: ${id}`);
  }
  const root = newNode();
  for (const route of opts.routes) insert(root, route, handlers[route.id], validators.get(route.id)!);

  return async function route(req: HttpRequest, res: HttpResponder): Promise<void> {
    const started = performance.now();
    const requestId = pickRequestId(req.headers['x-request-id']);
    const log = requestLogger(logger, requestId);
    let result: HandlerResult;
    const matched: { route?: RouteDef } = {};
    try {
      result = await dispatch(root, req, res, log, requestId, maxBodyBytes, maxJsonDepth, matched);
    } catch (err) {
      result = matched.route?.errorBody === 'error_only' ? authErrorBody(err, log) : errorResponse(err, log);
    }
    const status = write(res, result, requestId, log);
    const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
    const line = { method: req.method, path: req.path, status, durationMs };
    // 501 is the expected answer of a route this build does not include, not a server fault.
    if (typeof status === 'number' && status >= 500 && status !== 501) {
      const code =
        'body' in result && result.body && typeof result.body === 'object' ? (result.body as { code?: unknown }).code : undefined;
      log.error({ ...line, code }, 'request');
    } else if (logger.isLevelEnabled('debug')) log.debug(line, 'request');
  };
}

/**
 * The request's child logger (bound to its request id), made on first use: at the usual levels most
 * requests log nothing, and making a child logger serialises and redacts its bindings every time.
 */
function requestLogger(logger: Logger, reqId: string): Logger {
  let child: Logger | undefined;
  return new Proxy(logger, {
    get(target, prop) {
      child ??= target.child({ reqId });
      const value: unknown = Reflect.get(child, prop, child);
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(child) : value;
    },
  });
}

async function dispatch(
  root: Node,
  req: HttpRequest,
  res: HttpResponder,
  log: Logger,
  requestId: string,
  maxBodyBytes: number,
  maxJsonDepth: number,
  matched: { route?: RouteDef },
): Promise<HandlerResult> {
  const match = lookup(root, req.path, req.method);
  if (match === undefined) {
    throw new ServiceError('NOT_FOUND', `no route for ${req.method} ${req.path}`);
  }
  if ('allow' in match) {
    const allow = match.allow.join(', ');
    const err = new ServiceError('METHOD_NOT_ALLOWED', `method ${req.method} not allowed for ${req.path}`, {
      allow: match.allow,
    });
    return { ...errorResponse(err, log), headers: { allow } };
  }
  const { entry, values } = match;
  const { route } = entry;
  matched.route = route;
  if (req.bodyTooLarge || req.body.length > maxBodyBytes) {
    throw new ServiceError('PAYLOAD_TOO_LARGE', `request body exceeds ${maxBodyBytes} bytes`, { max_bytes: maxBodyBytes });
  }
  if (!entry.handler) {
    const capability = route.capability ?? route.id;
    throw new ServiceError('CAPABILITY_UNAVAILABLE', `capability not available in this build: ${capability}`, {
      capability,
    });
  }
  const params: Record<string, string> = {};
  for (let i = 0; i < values.length; i++) params[entry.paramNames[i]] = boundedParam(entry.paramNames[i], decodeParam(values[i]));
  const queryAll = new URLSearchParams(req.query);
  const query: Record<string, string> = {};
  for (const [k, v] of queryAll) {
    // First value wins; defineProperty keeps keys like '__proto__' or 'constructor' as plain own data.
    if (!Object.hasOwn(query, k)) Object.defineProperty(query, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  if (route.query) entry.validators.checkQuery(query);
  let body: unknown;
  if (route.body && !(route.bodyOptional && req.body.toString('utf8').trim() === '')) {
    body = parseJsonBody(req, maxJsonDepth);
    entry.validators.checkBody(body);
  }
  const result = await entry.handler({ params, query, queryAll, body, rawBody: req.body, headers: req.headers, requestId, log, res });
  if (typeof result !== 'object' || result === null) throw new Error(`handler ${route.id} returned no result`);
  return result;
}

function parseJsonBody(req: HttpRequest, maxDepth: number): unknown {
  const contentType = req.headers['content-type'];
  if (contentType !== undefined && !isJsonMediaType(contentType)) {
    throw new ServiceError('UNSUPPORTED_MEDIA_TYPE', `unsupported content-type: ${contentType}; expected ${JSON_TYPE}`);
  }
  const text = req.body.toString('utf8');
  if (text.trim() === '') throw new ServiceError('BAD_REQUEST', 'request body required');
  // The body's size was checked by dispatch (413 with the body limit).
  return parseJsonText(text, { maxDepth, maxBytes: Number.MAX_SAFE_INTEGER }, 'request body');
}

function isJsonMediaType(header: string): boolean {
  const media = header.split(';', 1)[0].trim().toLowerCase();
  return media === JSON_TYPE || (media.startsWith('application/') && media.endsWith('+json'));
}

/** Writes the result unless the client is gone; returns the status written (or 'streamed'/'aborted'). */
function write(res: HttpResponder, result: HandlerResult, requestId: string, log: Logger): number | string {
  if ('streamed' in result) return 'streamed';
  if (res.aborted) return 'aborted';
  let status = result.status;
  let contentType: string;
  let payload: string;
  if ('text' in result) {
    contentType = 'text/plain; charset=utf-8';
    payload = result.text;
  } else {
    contentType = JSON_TYPE;
    try {
      payload = result.body === undefined ? '' : JSON.stringify(result.body);
    } catch (err) {
      const mapped = errorResponse(err, log);
      status = mapped.status;
      payload = JSON.stringify(mapped.body);
      result = mapped;
    }
  }
  const headers: Record<string, string> = { 'content-type': contentType, ...result.headers, 'x-request-id': requestId };
  try {
    res.send(status, headers, payload);
  } catch (err) {
    // A transport can fail to write when the socket closes mid-send; the client is gone, nothing to do.
    log.warn({ err }, 'response write failed');
  }
  return status;
}

function pickRequestId(incoming: string | undefined): string {
  return incoming !== undefined && REQUEST_ID_RE.test(incoming) ? incoming : randomUUID();
}

/** Longest path parameter (UTF-8 bytes): every id is bounded before it reaches a store key (lmdb's is ~2 KB). */
export const MAX_PATH_PARAM_BYTES = 512;

function boundedParam(name: string, value: string): string {
  if (value.length > MAX_PATH_PARAM_BYTES / 3 && Buffer.byteLength(value) > MAX_PATH_PARAM_BYTES)
    throw new ServiceError('BAD_REQUEST', `path parameter '${name}' exceeds ${MAX_PATH_PARAM_BYTES} bytes`, {
      max_bytes: MAX_PATH_PARAM_BYTES,
    });
  return value;
}

function decodeParam(raw: string): string {
  if (!raw.includes('%')) return raw;
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ServiceError('BAD_REQUEST', `malformed percent-encoding in path segment: ${raw}`);
  }
}

function newNode(): Node {
  return { statics: new Map(), param: undefined, methods: undefined };
}

function insert(root: Node, route: RouteDef, handler: Handler | undefined, validators: RouteValidators): void {
  let node = root;
  const paramNames: string[] = [];
  for (const seg of route.path.slice(1).split('/')) {
    const m = /^\{([^{}]+)\}$/.exec(seg);
    if (m) {
      paramNames.push(m[1]);
      node = node.param ??= newNode();
    } else {
      let next = node.statics.get(seg);
      if (!next) node.statics.set(seg, (next = newNode()));
      node = next;
    }
  }
  node.methods ??= new Map();
  if (node.methods.has(route.method)) throw new Error(`duplicate route: ${route.method} ${route.path}`);
  node.methods.set(route.method, { route, handler, validators, paramNames });
}

/**
 * Walks the trie segment by segment (static before parameter, with backtracking). The first route end
 * that has the method wins; otherwise every method seen at a matching end goes into `allow` (405).
 */
function lookup(root: Node, path: string, method: string): Match {
  if (path.charCodeAt(0) !== 47 /* '/' */) return undefined;
  const segs = path.slice(1).split('/');
  const values: string[] = [];
  const allow = new Set<string>();
  const found = walk(root, segs, 0, method, values, allow);
  if (found) return { entry: found, values };
  return allow.size > 0 ? { allow: [...allow].sort() } : undefined;
}

function walk(node: Node, segs: string[], i: number, method: string, values: string[], allow: Set<string>): Entry | undefined {
  if (i === segs.length) {
    if (!node.methods) return undefined;
    const entry = node.methods.get(method);
    if (entry) return entry;
    for (const m of node.methods.keys()) allow.add(m);
    return undefined;
  }
  const seg = segs[i];
  const child = node.statics.get(seg);
  if (child) {
    const hit = walk(child, segs, i + 1, method, values, allow);
    if (hit) return hit;
  }
  if (node.param && seg !== '') {
    values.push(seg);
    const hit = walk(node.param, segs, i + 1, method, values, allow);
    if (hit) return hit;
    values.pop();
  }
  return undefined;
}
