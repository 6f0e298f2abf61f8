// http/browser-guard.ts: the always-on check that keeps a web page in the operator's browser from driving
// Warren (docs/browser-and-outbound.md). Before any handler runs, on both transports (server-node.ts,
// server-uws.ts) and on WebSocket upgrades (/rpc):
// - `Host` must be a loopback name (localhost, 127.0.0.1, [::1], any port), the address the server listens
//   on (when it is a specific one), the cluster's advertised host, or a name in `[rest] allowed_hosts`:
//   a DNS-rebinding page reaches the port under its own name and is refused;
// - `Origin`, when present, must be the server's own (the origin the request's `Host` names) or one in
//   `[rest] allowed_origins`: a cross-site fetch, form post, WebSocket or MCP call is refused;
// - a request that carries a body must say `application/json` (or `+json`): a browser sends text/plain and
//   form bodies cross-site without a preflight, so such a body is never parsed as JSON.
// Refusals are 403 HOST_NOT_ALLOWED / ORIGIN_NOT_ALLOWED and 415 UNSUPPORTED_MEDIA_TYPE with the error
// envelope, logged at warn. No request body is read for a refusal decision.
import type { Logger } from 'pino';
import type { Config } from '../contracts/config.ts';
import { ERROR_TABLE, type ErrorCode } from '../contracts/errors.ts';
import type { HttpRequest, HttpResponder } from './transport.ts';

/** What the operator allows beyond loopback; read on every request so a config change applies at once. */
export interface BrowserGuardPolicy {
  /** Extra `Host` names (`[rest] allowed_hosts`, the listen address, the cluster's advertised host), with or without port. */
  allowedHosts(): readonly string[];
  /** Extra origins (`[rest] allowed_origins`), e.g. `https://warren.example.com`. */
  allowedOrigins(): readonly string[];
}

export interface BrowserGuard {
  readonly policy: BrowserGuardPolicy;
  readonly log: Logger;
}

export interface GuardRefusal {
  status: number;
  code: ErrorCode;
  message: string;
}

const LOOPBACK_NAMES: ReadonlySet<string> = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** `host[:port]` (IPv6 in brackets) → lower-cased host name without port, or null when malformed. */
function hostName(hostHeader: string): string | null {
  const h = hostHeader.trim().toLowerCase();
  if (h === '') return null;
  if (h.startsWith('[')) {
    const end = h.indexOf(']');
    if (end < 0) return null;
    const rest = h.slice(end + 1);
    if (rest !== '' && !/^:\d{1,5}$/.test(rest)) return null;
    return h.slice(0, end + 1);
  }
  const colon = h.indexOf(':');
  const name = colon < 0 ? h : h.slice(0, colon);
  if (colon >= 0 && !/^\d{1,5}$/.test(h.slice(colon + 1))) return null;
  if (!/^[a-z0-9._-]+$/.test(name)) return null;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/**
 * `Host` header values already found to name loopback, as sent (`127.0.0.1:8080`): a client sends the same
 * one on every request, and whether it is loopback does not depend on the policy. Bounded; starts over when full.
 */
const loopbackHosts = new Set<string>();
const LOOPBACK_HOSTS_MAX = 256;

/**
 * True when `hostHeader` names loopback or one of the policy's allowed hosts (entries with a port must match
 * it exactly). The list is built only for a name that is not loopback (the usual request never needs it).
 */
function hostAllowed(hostHeader: string, policy: BrowserGuardPolicy): boolean {
  if (loopbackHosts.has(hostHeader)) return true;
  const name = hostName(hostHeader);
  if (name === null) return false;
  if (LOOPBACK_NAMES.has(name) || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name)) {
    if (loopbackHosts.size >= LOOPBACK_HOSTS_MAX) loopbackHosts.clear();
    loopbackHosts.add(hostHeader);
    return true;
  }
  const full = hostHeader.trim().toLowerCase();
  for (const entry of policy.allowedHosts()) {
    const e = entry.trim().toLowerCase();
    if (e === '') continue;
    const eName = hostName(e);
    if (eName === null) continue;
    // An entry with a port matches that host:port only; a bare name matches any port.
    if (e === eName ? eName === name : e === full) return true;
  }
  return false;
}

/** Canonical `scheme://host[:port]` of an origin, or null for `null` and anything not http(s). */
function canonicalOrigin(origin: string): string | null {
  let url: URL;
  try {
    url = new URL(origin.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.origin;
}

/** True when `origin` is the server's own (its host:port is the request's `Host`) or listed in `allowed`. */
function originAllowed(origin: string, hostHeader: string | undefined, allowed: readonly string[]): boolean {
  const canon = canonicalOrigin(origin);
  if (canon === null) return false;
  if (hostHeader !== undefined) {
    const url = new URL(canon);
    const own = hostHeader.trim().toLowerCase();
    // The page came from this very server (the viewer at /ui): its origin's authority is the Host it used.
    if (url.host === own || (url.port === '' && url.hostname === hostName(own))) return true;
  }
  for (const entry of allowed) {
    if (canonicalOrigin(entry) === canon) return true;
  }
  return false;
}

/** JSON Lines bodies (POST /sessions/import): like JSON, a type no browser sends cross-site without a preflight. */
const JSON_LINES = new Set(['application/x-ndjson', 'application/jsonl', 'application/jsonlines']);

function isJsonMediaType(header: string): boolean {
  const media = header.split(';', 1)[0].trim().toLowerCase();
  return media === 'application/json' || (media.startsWith('application/') && media.endsWith('+json')) || JSON_LINES.has(media);
}

/** True when the request carries (or announces) a body. */
function hasBody(headers: Record<string, string>): boolean {
  const len = headers['content-length'];
  if (len !== undefined) return Number(len) !== 0;
  return headers['transfer-encoding'] !== undefined;
}

function refusal(code: ErrorCode, message: string): GuardRefusal {
  return { status: ERROR_TABLE[code].status, code, message };
}

/** Why this request (its headers only) must not reach a handler, or null. WebSocket handshakes too. */
export function checkRequest(policy: BrowserGuardPolicy, headers: Record<string, string>): GuardRefusal | null {
  const host = headers.host;
  // HTTP/1.0 clients may omit Host; browsers always send it, so a missing one is not a browser.
  if (host !== undefined && !hostAllowed(host, policy)) {
    return refusal('HOST_NOT_ALLOWED', `host not allowed: ${host.slice(0, 200)} (loopback names and [rest] allowed_hosts only)`);
  }
  const origin = headers.origin;
  if (origin !== undefined && !originAllowed(origin, host, policy.allowedOrigins())) {
    return refusal(
      'ORIGIN_NOT_ALLOWED',
      `origin not allowed: ${origin.slice(0, 200)} (this server's own origin and [rest] allowed_origins only)`,
    );
  }
  if (hasBody(headers)) {
    const type = headers['content-type'];
    if (type === undefined || !isJsonMediaType(type)) {
      return refusal(
        'UNSUPPORTED_MEDIA_TYPE',
        type === undefined
          ? 'a request body needs content-type: application/json'
          : `unsupported content-type: ${type.slice(0, 200)}; expected application/json`,
      );
    }
  }
  return null;
}

/** The refusal's error envelope as a JSON body. */
export function refusalBody(r: GuardRefusal): string {
  return JSON.stringify({ error: r.message, code: r.code });
}

/** Logs a refusal at warn (method, path and the offending headers; never the body). */
export function logRefusal(log: Logger, r: GuardRefusal, method: string, path: string, headers: Record<string, string>): void {
  log.warn(
    { code: r.code, method, path, host: headers.host, origin: headers.origin, content_type: headers['content-type'] },
    'request refused by the browser guard',
  );
}

/**
 * The transports' one call site: checks the request's headers and answers the refusal itself (true), or
 * returns false and the caller goes on (reads the body, dispatches). `res` must not have been used yet.
 */
export function refuseRequest(guard: BrowserGuard | undefined, req: HttpRequest, res: HttpResponder, beforeRefusal?: () => void): boolean {
  if (!guard) return false;
  const r = checkRequest(guard.policy, req.headers);
  if (r === null) return false;
  logRefusal(guard.log, r, req.method, req.path, req.headers);
  beforeRefusal?.();
  res.send(r.status, { 'content-type': 'application/json' }, refusalBody(r));
  return true;
}

/** The raw HTTP response refusing a WebSocket upgrade (node:http's socket path). */
export function upgradeRefusalResponse(r: GuardRefusal): string {
  const body = refusalBody(r);
  const reason = r.status === 415 ? 'Unsupported Media Type' : 'Forbidden';
  return `HTTP/1.1 ${r.status} ${reason}\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** Listen addresses that name no host a client would send (every interface). */
const UNSPECIFIED: ReadonlySet<string> = new Set(['0.0.0.0', '::', '[::]', '']);

/**
 * The policy of a running server: `[rest] allowed_hosts` / `allowed_origins` from the live config, plus the
 * specific address it listens on and the cluster's advertised host (peers forward to it by that name).
 */
export function configGuardPolicy(config: () => Config, listenHost: () => string): BrowserGuardPolicy {
  return {
    allowedHosts() {
      const c = config();
      const out = [...(c.rest.allowed_hosts ?? [])];
      const listen = listenHost();
      if (!UNSPECIFIED.has(listen)) out.push(listen.includes(':') && !listen.startsWith('[') ? `[${listen}]` : listen);
      const advertised = c.cluster?.advertise_url;
      if (advertised) {
        try {
          out.push(new URL(advertised).host);
        } catch {
          // an unparsable advertise_url names no host
        }
      }
      return out;
    },
    allowedOrigins() {
      return config().rest.allowed_origins ?? [];
    },
  };
}
