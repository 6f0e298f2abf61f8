// actors/mcp-sealing.ts: persisted MCP servers (ns `mcp`, actors/mcp-live.ts) keep their `headers` and `env`
// (contracts/secret-paths.ts SECRET_MAP_FIELDS) sealed with the realm key, bound to the session and server
// name. Records written before sealing (plaintext) still open, and are re-sealed by the next write or load.
import type { SealedSecret } from '../contracts/auth.ts';
import type { McpPersistedRecord, McpServerConfig } from '../contracts/mcp.ts';
import type { RealmCipher } from './auth/realm-key.ts';

/** A persisted server config as stored: its secret maps replaced by one sealed blob. */
type StoredServer = McpServerConfig & { sealed_secrets?: SealedSecret };

const aad = (sessionId: string, name: string): string => `mcp:${sessionId}:${name}`;

/** True when a stored record still holds plaintext headers or env. */
export function hasPlaintextSecrets(record: McpPersistedRecord): boolean {
  return record.added.some((c) => c.headers !== undefined || c.env !== undefined);
}

/** The record to store: every added server's headers/env sealed. */
export function sealMcpRecord(cipher: RealmCipher, sessionId: string, record: McpPersistedRecord): McpPersistedRecord {
  const added = record.added.map((c): StoredServer => {
    if (c.headers === undefined && c.env === undefined) return c;
    const { headers, env, ...rest } = c;
    const secret = JSON.stringify({ headers, env });
    return { ...rest, sealed_secrets: cipher.seal(aad(sessionId, c.name), { secret }) };
  });
  return { ...record, added };
}

/** The record as used: sealed headers/env opened (a blob that no longer opens is dropped). */
export function openMcpRecord(cipher: RealmCipher, sessionId: string, record: McpPersistedRecord): McpPersistedRecord {
  const added = (record.added as StoredServer[]).map((c): McpServerConfig => {
    if (c.sealed_secrets === undefined) return c;
    const { sealed_secrets, ...rest } = c;
    const text = cipher.open(aad(sessionId, c.name), sealed_secrets)?.secret;
    if (text === undefined) return rest;
    const maps = JSON.parse(text) as Pick<McpServerConfig, 'headers' | 'env'>;
    return { ...rest, ...(maps.headers ? { headers: maps.headers } : {}), ...(maps.env ? { env: maps.env } : {}) };
  });
  return { ...record, added };
}
