// http/handlers/session-id.ts: parses a path session locator: `<uuid>` or `<realm_id>:<uuid>`.
import { ServiceError } from '../../contracts/errors.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Returns the bare session id; a malformed locator or another realm's id is a 400. */
export function parseSessionId(raw: string, realmId: string): string {
  const colon = raw.lastIndexOf(':');
  const realm = colon >= 0 ? raw.slice(0, colon) : null;
  const id = colon >= 0 ? raw.slice(colon + 1) : raw;
  if (!UUID.test(id)) throw new ServiceError('BAD_REQUEST', `Invalid session locator: ${raw}`);
  if (realm !== null && realm !== realmId) throw new ServiceError('BAD_REQUEST', `session locator names realm '${realm}', this server serves '${realmId}'`);
  return id.toLowerCase();
}
