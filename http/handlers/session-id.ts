// http/handlers/session-id.ts: parses a session locator (`<uuid>` or `<realm_id>:<uuid>`, any case) of a
// path, and brings a request body's session id to the same bare form before it is compared with the path's.
import { ServiceError } from '../../contracts/errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Returns the bare session id; a malformed locator or another realm's id is a 400. */
export function parseSessionId(raw: string, realmId: string): string {
  const colon = raw.lastIndexOf(':');
  const realm = colon >= 0 ? raw.slice(0, colon) : null;
  const id = colon >= 0 ? raw.slice(colon + 1) : raw;
  if (!UUID.test(id)) throw new ServiceError('BAD_REQUEST', `Invalid session locator: ${raw}`);
  if (realm !== null && realm !== realmId)
    throw new ServiceError('BAD_REQUEST', `session locator names realm '${realm}', this server serves '${realmId}'`);
  return id.toLowerCase();
}

/**
 * A body session id as a bare id when it is a valid locator of this realm; otherwise as sent, so the
 * route's comparison with the (parsed) path id reports the mismatch it always did.
 */
export function bareSessionId(raw: string, realmId: string): string {
  try {
    return parseSessionId(raw, realmId);
  } catch {
    return raw;
  }
}
