// contracts/inbound-auth.ts: inbound API keys (who may call Warren) and the scope of every route.
// The key record is what the realm store holds (only a slow scrypt hash of the token, never the token);
// ROUTE_SCOPE_RULES is the one table that gives each route catalog entry its scope. Outbound provider
// credentials are a different thing (contracts/auth.ts).
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

/** `read`: GETs and event streams. `sessions`: turns, interrupts, comms, schedules, mobs, work. `admin`: everything. */
export const INBOUND_SCOPES = ['read', 'sessions', 'admin'] as const;
export type InboundScope = (typeof INBOUND_SCOPES)[number];

const InboundScopeSchema = Type.Union([Type.Literal('read'), Type.Literal('sessions'), Type.Literal('admin')]);

/** Store namespace of key records, keyed by key id. */
export const INBOUND_KEYS_NS = 'inbound.keys';

/** Token layout: `wk_<id>_<secret>`; the id (12 hex) is the lookup prefix, the secret 43 base64url chars. */
const KEY_ID_PATTERN = '^[0-9a-f]{12}$';
export const TOKEN_PATTERN = /^wk_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** One inbound API key as stored. `hash` is scrypt(secret, salt); the token itself is never stored. */
export const InboundKeyRecord = Type.Object(
  {
    v: Type.Literal(1),
    id: Type.String({ pattern: KEY_ID_PATTERN }),
    name: Type.String({ minLength: 1, maxLength: 128 }),
    scopes: Type.Array(InboundScopeSchema, { minItems: 1 }),
    salt: Type.String({ minLength: 1 }),
    hash: Type.String({ minLength: 1 }),
    /** scrypt cost parameter used for `hash` (N; r=8, p=1). */
    cost: Type.Integer({ minimum: 1024 }),
    created_at_ms: Type.Number(),
    expires_at_ms: Type.Optional(Type.Number()),
    last_used_at_ms: Type.Optional(Type.Number()),
    revoked_at_ms: Type.Optional(Type.Number()),
  },
  { $id: 'InboundKeyRecord', additionalProperties: false },
);
export type InboundKeyRecord = Static<typeof InboundKeyRecord>;

/** What `warren keys list` shows of a key: everything but the salt and hash. */
export type InboundKeyView = Omit<InboundKeyRecord, 'v' | 'salt' | 'hash' | 'cost'> & { expired: boolean };

/** `[rest] auth`: off, or required (default: off on a loopback listener, required on any other). */
export const RestAuthMode = Type.Union([Type.Literal('off'), Type.Literal('required')]);
export type RestAuthMode = Static<typeof RestAuthMode>;

/** `[mcp]`: which stdio MCP commands a request may start when keys are on. */
export const McpPolicySection = Type.Object(
  {
    /** Exact `command` strings a request's `server_config` may name (servers named in config.toml are always allowed). */
    allowed_commands: Type.Array(Type.String({ minLength: 1 }), { default: [] }),
  },
  { additionalProperties: true },
);

/** A route's required scope, or `public` (answered without a key). */
export type RouteAccess = InboundScope | 'public';

/**
 * The one table of route scopes. Keys are route ids, or `prefix.*` for every id under the prefix; an exact
 * id wins over a prefix. A value is one access level, or `{get, write}` (GET vs. any other method).
 * test/integration/inbound-auth-routes.test.ts checks that every catalog route is covered here.
 */
const ROUTE_SCOPE_RULES: Record<string, RouteAccess | { get: RouteAccess; write: RouteAccess }> = {
  // A health probe for load balancers and supervisors: status only, no data.
  'system.health': 'public',
  'system.openapi': 'read',
  'config.*': { get: 'read', write: 'admin' },
  'realms.*': 'read',
  'capabilities.*': 'read',
  'runtime.*': 'read',
  'models.*': 'read',
  // Sessions: turns and control; MCP server changes are admin (they can start programs or reach URLs).
  'sessions.*': { get: 'read', write: 'sessions' },
  'sessions.mcpAdd': 'admin',
  'sessions.mcpRemove': 'admin',
  'sessions.mcpReload': 'admin',
  'requests.*': { get: 'read', write: 'sessions' },
  // Outbound credentials: listing and testing them is admin too.
  'auth.*': 'admin',
  // The MCP endpoint runs turns (tools/call), so every method of it needs `sessions`.
  'mcp.*': 'sessions',
  'workgraph.*': { get: 'read', write: 'sessions' },
  'help.*': 'sessions',
  'warren.*': 'read',
  'webhooks.*': 'admin',
  'skills.*': 'read',
  'comms.*': { get: 'read', write: 'sessions' },
  'mob.*': { get: 'read', write: 'sessions' },
  'toolkit.*': 'read',
  'schedules.*': { get: 'read', write: 'sessions' },
  'schedule.*': { get: 'read', write: 'sessions' },
  'observe.*': 'read',
  // The viewer's page, script and stylesheet (and the elkjs bundle): code, no data. A browser loads them
  // without a header; the page then asks for a key and sends it on every data request (docs/viewer.md).
  'ui.*': 'public',
  'inspect.*': 'read',
  'keys.*': 'admin',
  // Foreign protocols (OpenAI Responses, LangGraph, AG-UI, A2A): reads (the A2A agent card) are read, the rest runs turns.
  'protocols.*': { get: 'read', write: 'sessions' },
};

/** The access a route needs, or undefined when no rule covers it (the caller then fails closed: admin). */
export function routeAccess(route: Pick<RouteDef, 'id' | 'method'>): RouteAccess | undefined {
  let rule = ROUTE_SCOPE_RULES[route.id];
  if (rule === undefined) {
    const dot = route.id.indexOf('.');
    if (dot > 0) rule = ROUTE_SCOPE_RULES[`${route.id.slice(0, dot)}.*`];
  }
  if (rule === undefined) return undefined;
  if (typeof rule === 'string') return rule;
  return route.method === 'GET' ? rule.get : rule.write;
}

/** True when a key holding `held` may use a route needing `needed` (admin ⊇ sessions ⊇ read). */
export function scopeSatisfies(held: readonly InboundScope[], needed: InboundScope): boolean {
  if (held.includes('admin')) return true;
  if (needed === 'read') return held.includes('read') || held.includes('sessions');
  return held.includes(needed);
}
