// contracts/secret-paths.ts: the one list of secret-bearing fields. GET /config masks them
// (config/realm-config.ts), the root logger redacts them (config/logger.ts), and the store seals them with
// the realm key (webhook subscriptions, persisted MCP servers). Add a secret field here, nowhere else.

/** How a masked secret is shown; written back unchanged, it keeps the stored value. */
export const MASK = '***';

/** Field names whose value is a credential wherever it appears (logs; config fields below). */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'api_key',
  'apiKey',
  'secret',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'client_secret',
  'code_verifier',
  'verifier',
  'password',
  'pairing_password',
  'authorization',
  // Database URLs carry the password (the postgres backend's [storage] postgres_url / WARREN_DATABASE_URL).
  'postgres_url',
  'database_url',
  'connectionString',
];

/**
 * Maps whose every value is secret: an MCP server's `headers` (bearer tokens) and `env` (keys handed to a
 * stdio server), in `[[tools.mcp_servers]]`, in `/mcp/add` bodies and in persisted MCP records.
 */
export const SECRET_MAP_FIELDS: readonly string[] = ['headers', 'env'];

/** Objects that carry an MCP server config (where SECRET_MAP_FIELDS are secret) in log lines. */
export const MCP_CONFIG_HOLDERS: readonly string[] = ['server_config', 'mcp_server', 'server'];

/** Config paths masked by GET /config (`[]` = every array item, `*` = every key). */
const SECRET_CONFIG_PATHS: readonly string[] = [
  'storage.postgres_url',
  'auth.oauth.*.client_secret',
  'tools.mcp_servers[].headers.*',
  'tools.mcp_servers[].env.*',
];

/** Masks every value of a string map (MCP `headers` / `env`). */
export function maskMap(map: Record<string, string> | undefined): Record<string, string> | undefined {
  return map === undefined ? undefined : Object.fromEntries(Object.keys(map).map((k) => [k, MASK]));
}

/** A written-back map: a value of `***` keeps the stored value of that key (when there is one). */
export function restoreMap(
  next: Record<string, string> | undefined,
  stored: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (next === undefined || stored === undefined) return next;
  return Object.fromEntries(Object.entries(next).map(([k, v]) => [k, v === MASK && stored[k] !== undefined ? stored[k] : v]));
}
