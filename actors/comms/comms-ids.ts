// actors/comms/comms-ids.ts: store namespaces, peer-kind names and peer ids of comms.
import { COMMS_AGENT_KIND, COMMS_INBOUND_KIND, namespaceOf } from '../../storage/record-kinds.ts';

/** Comms agents of this process: sessions with a comms name (key = session id). */
export const AGENTS_NS = namespaceOf(COMMS_AGENT_KIND);

/** Peer requests a session received (key = request id). */
export function inboundNs(sessionId: string): string {
  return namespaceOf(COMMS_INBOUND_KIND, sessionId);
}

/** The kinds a peer accepts. */
export const PEER_KINDS = ['peer_message', 'peer_lifecycle', 'peer_request', 'peer_response'];

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The parts of a peer id: `<session id>` (a session of this process) or `<session id>@<address>` (of
 * another process); the session id lower-cased. Null when the session part is not a session id (a
 * display name, say): display names are not peer ids.
 */
export function peerIdParts(id: string): { sessionId: string; address?: string } | null {
  const at = id.indexOf('@');
  const sessionId = (at < 0 ? id : id.slice(0, at)).toLowerCase();
  if (!SESSION_ID.test(sessionId)) return null;
  return at < 0 ? { sessionId } : { sessionId, address: id.slice(at + 1) };
}

/** A canonical peer id: a session id, or `<session id>@<host:port>` for a session of another process. */
export function isCanonicalPeerId(id: string): boolean {
  const parts = peerIdParts(id);
  return parts !== null && (parts.address === undefined || /^[^\s@]+:[0-9]{1,5}$/.test(parts.address));
}
