// http/inbound-auth.ts: inbound authentication in front of the router (and of the cluster forwarding layer).
// With `[rest] auth = "required"` every request but the public ones (ROUTE_SCOPE_RULES) carries
// `Authorization: Bearer wk_...`; a missing, malformed, unknown, expired or revoked key is 401 and a key
// without the route's scope is 403, both in the error envelope. A verified key becomes the request's
// principal: any self-declared `x-warren-principal` is dropped and replaced by `key:<id>` (an admin key is
// the mob owner). With keys on, requests cannot start stdio MCP servers from their own text
// (`[mcp] allowed_commands`). Also: the startup decision (auth mode, the refusal to listen beyond loopback
// without keys) and the cluster peers' shared-secret check. See SECURITY.md.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Logger } from 'pino';
import type { Config } from '../contracts/config.ts';
import { ERROR_TABLE, ServiceError, type ErrorCode } from '../contracts/errors.ts';
import { routeAccess, scopeSatisfies, type RouteAccess, type RestAuthMode } from '../contracts/inbound-auth.ts';
import type { RouteDef } from '../contracts/route.ts';
import type { KeyIdentity, KeyVerifier } from '../actors/inbound-auth/key-store.ts';
import { openRealmKey } from '../actors/auth/realm-key.ts';
import type { RealmStore } from '../actors/supervisor.ts';
import type { HttpRequest, HttpResponder, RequestHandler, WebSocketRoute } from './transport.ts';

const PRINCIPAL_HEADER = 'x-warren-principal';
/** Set by a cluster node on requests it forwards to a peer; proves the sender holds the realm's cluster secret. */
const CLUSTER_AUTH_HEADER = 'x-warren-cluster-auth';
const FORWARDED_HEADER = 'x-warren-forwarded-by';

/** True for `localhost`, 127.0.0.0/8 and ::1 (the listeners a keyless server may use). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || h === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(h);
  return false;
}

export interface AuthDecision {
  mode: RestAuthMode;
  /** A warning to log at every start (auth off beyond loopback, or required with no key yet). */
  warning?: string;
}

/**
 * The auth mode of a start: `[rest] auth` when set, else off on loopback and required elsewhere. Throws with
 * a one-line reason when the listener is not loopback and either auth is off or no key exists, unless
 * `insecureNoAuth` (then auth is off and a warning is returned).
 */
export function decideAuthMode(o: {
  host: string;
  configured: RestAuthMode | undefined;
  insecureNoAuth: boolean;
  usableKeys: number;
}): AuthDecision {
  const loopback = isLoopbackHost(o.host);
  if (o.insecureNoAuth) {
    return {
      mode: 'off',
      warning: loopback
        ? '--insecure-no-auth: inbound authentication is OFF'
        : `--insecure-no-auth: inbound authentication is OFF on ${o.host}; anyone who reaches this port controls Warren`,
    };
  }
  const mode = o.configured ?? (loopback ? 'off' : 'required');
  if (!loopback && mode === 'off')
    throw new Error(`refusing to listen on ${o.host} with [rest] auth = "off": use a loopback host, or pass --insecure-no-auth`);
  if (mode === 'required' && o.usableKeys === 0) {
    if (!loopback)
      throw new Error(
        `refusing to listen on ${o.host} without API keys: create one with 'warren keys create' (or pass --insecure-no-auth)`,
      );
    return { mode, warning: "inbound auth is required but no API key exists yet: create one with 'warren keys create'" };
  }
  return { mode };
}

/** The header value peers present: an HMAC of the secret (the secret itself never crosses the wire). */
function clusterAuthValue(secret: Buffer): string {
  return createHmac('sha256', secret).update('warren-cluster-peer-v1').digest('base64url');
}

// ---- the request layer ------------------------------------------------------------------------------

interface InboundAuthOptions {
  routes: readonly RouteDef[];
  verifier: KeyVerifier;
  log: Logger;
  config: () => Config;
  /** On a cluster node: the value peers present in CLUSTER_AUTH_HEADER. */
  clusterAuth?: string;
}

interface CompiledRoute {
  method: string;
  re: RegExp;
  route: RouteDef;
}

function compile(routes: readonly RouteDef[]): CompiledRoute[] {
  return routes.map((route) => ({
    method: route.method,
    route,
    re: new RegExp(
      `^${route.path
        .split('/')
        .map((seg) => (/^\{[^{}]+\}$/.test(seg) ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
        .join('/')}$`,
    ),
  }));
}

/** The catalog route a request names (static paths before templated ones), or undefined. */
function matchRoute(table: CompiledRoute[], method: string, path: string): RouteDef | undefined {
  let templated: RouteDef | undefined;
  for (const c of table) {
    if (c.method !== method || !c.re.test(path)) continue;
    if (!c.route.path.includes('{')) return c.route;
    templated ??= c.route;
  }
  return templated;
}

function refusal(
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
): { ok: false; status: number; body: string; code: ErrorCode } {
  return {
    ok: false,
    status: ERROR_TABLE[code].status,
    code,
    body: JSON.stringify({ error: message, code, ...(details ? { details } : {}) }),
  };
}

function bearer(headers: Record<string, string>): string | undefined {
  const h = headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : '';
}

type AuthOutcome = { ok: true; key?: KeyIdentity; peer?: boolean } | { ok: false; status: number; body: string; code: ErrorCode };

/** The inbound-auth gate: decides one request's fate from its headers and the access its route needs. */
class InboundGate {
  private readonly table: CompiledRoute[];
  private readonly clusterAuth?: Buffer;

  constructor(private readonly o: InboundAuthOptions) {
    this.table = compile(o.routes);
    this.clusterAuth = o.clusterAuth === undefined ? undefined : Buffer.from(o.clusterAuth);
  }

  accessOf(method: string, path: string): { route?: RouteDef; access: RouteAccess } {
    const route = matchRoute(this.table, method, path);
    // A path the catalog does not know still needs a key (the router then answers 404/405); an uncovered route is admin.
    if (!route) return { access: 'read' };
    return { route, access: routeAccess(route) ?? 'admin' };
  }

  async check(method: string, path: string, headers: Record<string, string>): Promise<AuthOutcome> {
    if (headers[FORWARDED_HEADER] !== undefined || headers[CLUSTER_AUTH_HEADER] !== undefined) {
      if (this.peerOk(headers)) return { ok: true, peer: true };
      return refusal('UNAUTHORIZED', 'cluster peer authentication failed');
    }
    const { route, access } = this.accessOf(method, path);
    if (access === 'public') return { ok: true };
    const token = bearer(headers);
    if (token === undefined) return refusal('UNAUTHORIZED', 'API key required: send Authorization: Bearer wk_...');
    const verified = await this.o.verifier.verify(token);
    if (!verified.ok) {
      this.o.log.info({ method, path, reason: verified.reason }, 'inbound auth refused');
      return refusal('UNAUTHORIZED', verified.reason);
    }
    if (!scopeSatisfies(verified.key.scopes, access as Exclude<RouteAccess, 'public'>)) {
      this.o.log.info({ method, path, key: verified.key.id, required: access }, 'inbound scope refused');
      return refusal('FORBIDDEN', `API key lacks scope '${access}' for ${route ? route.id : `${method} ${path}`}`, {
        required: access,
        scopes: verified.key.scopes,
      });
    }
    return { ok: true, key: verified.key };
  }

  private peerOk(headers: Record<string, string>): boolean {
    const presented = headers[CLUSTER_AUTH_HEADER];
    if (!this.clusterAuth || presented === undefined) return false;
    const p = Buffer.from(presented);
    return p.length === this.clusterAuth.length && timingSafeEqual(p, this.clusterAuth);
  }

  /** The headers the handlers see: no token, and the principal the key (not the client) names. */
  rewrite(headers: Record<string, string>, outcome: Extract<AuthOutcome, { ok: true }>): Record<string, string> {
    if (outcome.peer) return headers; // a peer forwards the principal its own gate set
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(headers)) {
      if (k === 'authorization' || k === PRINCIPAL_HEADER || k === CLUSTER_AUTH_HEADER) continue;
      out[k] = v;
    }
    // An admin key is the mob owner (no principal); any other key is the principal `key:<id>`.
    if (outcome.key && !outcome.key.scopes.includes('admin')) out[PRINCIPAL_HEADER] = outcome.key.principal;
    return out;
  }

  /** With keys on, a request's own text never names a stdio program (even for admin). */
  commandProblem(route: RouteDef | undefined, body: Buffer): string | undefined {
    if (!route) return undefined;
    if (route.id === 'sessions.mcpAdd') {
      const parsed = parse(body) as { server_config?: { command?: unknown; name?: unknown } } | undefined;
      const sc = parsed?.server_config;
      if (sc && typeof sc === 'object' && sc.command !== undefined) return this.stdioProblem(sc);
      return undefined;
    }
    if (route.id === 'config.replace' || route.id === 'config.patch') {
      const parsed = parse(body) as { config?: unknown; tools?: unknown } | undefined;
      const candidates = [parsed, (parsed as { config?: unknown } | undefined)?.config];
      for (const c of candidates) {
        const servers = (c as { tools?: { mcp_servers?: unknown } } | undefined)?.tools?.mcp_servers;
        if (!Array.isArray(servers)) continue;
        for (const s of servers) {
          if (s && typeof s === 'object' && (s as { command?: unknown }).command !== undefined) {
            const problem = this.stdioProblem(s as { command?: unknown; name?: unknown }, true);
            if (problem) return problem;
          }
        }
      }
    }
    return undefined;
  }

  private stdioProblem(
    sc: { command?: unknown; name?: unknown; args?: unknown; env?: unknown },
    fromConfigWrite = false,
  ): string | undefined {
    const cfg = this.o.config();
    const allowed = ((cfg as { mcp?: { allowed_commands?: unknown } }).mcp?.allowed_commands ?? []) as unknown[];
    if (typeof sc.command === 'string' && allowed.includes(sc.command)) return undefined;
    // A server named in config.toml, used exactly as written there.
    const named = cfg.tools.mcp_servers.find((s) => s.name === sc.name);
    if (named && named.command === sc.command && sameJson(named.args, sc.args) && sameJson(named.env, sc.env)) return undefined;
    const what = fromConfigWrite ? 'a config write' : 'mcp/add';
    return `stdio MCP command '${String(sc.command)}' is not allowed from ${what}: list it in [mcp] allowed_commands or name a server of config.toml`;
  }
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function parse(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined; // the router answers the malformed body
  }
}

/** Wraps the request handler (outermost: before cluster forwarding) with the gate. */
function inboundAuth(inner: RequestHandler, gate: InboundGate, clusterAuth?: string): RequestHandler {
  return async (req: HttpRequest, res: HttpResponder) => {
    const outcome: AuthOutcome = await gate.check(req.method, req.path, req.headers).catch((err: unknown) => {
      if (err instanceof ServiceError) return refusal(err.code, err.message);
      return refusal('SERVICE_UNAVAILABLE', 'API key verification failed');
    });
    if (!outcome.ok) return send(res, outcome);
    if (!outcome.peer && outcome.key) {
      const problem = gate.commandProblem(gate.accessOf(req.method, req.path).route, req.body);
      if (problem) return send(res, refusal('FORBIDDEN', problem));
    }
    const headers = gate.rewrite(req.headers, outcome);
    // A node's own forwarding to a peer proves itself with the cluster secret.
    if (clusterAuth !== undefined && !outcome.peer) headers[CLUSTER_AUTH_HEADER] = clusterAuth;
    return inner({ ...req, headers }, res);
  };
}

function send(res: HttpResponder, r: { status: number; body: string }): void {
  if (res.aborted) return;
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (r.status === 401) headers['www-authenticate'] = 'Bearer realm="warren"';
  res.send(r.status, headers, r.body);
}

/** WebSocket endpoints (JSON-RPC /rpc): each message is checked against the upgrade request's key. */
function guardWebSockets(routes: readonly WebSocketRoute[], gate: InboundGate): WebSocketRoute[] {
  return routes.map((ws) => ({
    path: ws.path,
    async onMessage(text, headers) {
      const outcome = await gate.check('POST', ws.path, headers);
      if (!outcome.ok) {
        const parsed = (() => {
          try {
            return JSON.parse(text) as { id?: unknown };
          } catch {
            return undefined;
          }
        })();
        const err = JSON.parse(outcome.body) as { error: string; code: ErrorCode };
        return JSON.stringify({
          jsonrpc: '2.0',
          id: parsed && typeof parsed === 'object' && 'id' in parsed ? parsed.id : null,
          error: { code: ERROR_TABLE[err.code].rpc, message: err.error, data: { code: err.code } },
        });
      }
      return ws.onMessage(text, gate.rewrite(headers, outcome));
    },
  }));
}

// ---- composition (app.ts) ---------------------------------------------------------------------------

export interface InboundSetup {
  mode: RestAuthMode;
  /** The handler the transport serves (unchanged when auth is off). */
  wrap(handler: RequestHandler): RequestHandler;
  websockets(routes: readonly WebSocketRoute[]): WebSocketRoute[];
  /** Headers a cluster node adds to its own calls to peers (empty when auth is off). */
  peerHeaders: Record<string, string>;
}

/** Decides the auth mode of this start (throwing the one-line refusal) and builds the gate. */
export async function setupInboundAuth(o: {
  store: RealmStore;
  host: string;
  insecureNoAuth: boolean;
  config: () => Config;
  routes: readonly RouteDef[];
  log: Logger;
  cluster: boolean;
  /** The realm key file (credentials.key) that seals the cluster secret. */
  realmKeyPath: string;
  now?: () => number;
}): Promise<InboundSetup> {
  const { clusterSecret, KeyVerifier, usableKeyCount } = await import('../actors/inbound-auth/key-store.ts');
  const now = o.now ?? Date.now;
  const configured = (o.config().rest as { auth?: RestAuthMode }).auth;
  const decision = decideAuthMode({
    host: o.host,
    configured,
    insecureNoAuth: o.insecureNoAuth,
    usableKeys: await usableKeyCount(o.store, now()),
  });
  if (decision.warning) o.log.warn({ host: o.host, auth: decision.mode }, decision.warning);
  if (decision.mode === 'off') return { mode: 'off', wrap: (h) => h, websockets: (w) => [...w], peerHeaders: {} };
  const verifier = new KeyVerifier(o.store, now, (err) => o.log.warn({ err }, 'recording API key use failed'));
  const clusterAuth = o.cluster
    ? clusterAuthValue(await clusterSecret(o.store, () => openRealmKey(o.realmKeyPath), o.realmKeyPath))
    : undefined;
  const gate = new InboundGate({ routes: o.routes, verifier, log: o.log, config: o.config, clusterAuth });
  o.log.info({ auth: 'required' }, 'inbound API keys required');
  return {
    mode: 'required',
    wrap: (h) => inboundAuth(h, gate, clusterAuth),
    websockets: (w) => guardWebSockets(w, gate),
    peerHeaders: clusterAuth === undefined ? {} : { [CLUSTER_AUTH_HEADER]: clusterAuth },
  };
}
