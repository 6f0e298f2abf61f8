// actors/comms/comms-ids.ts: store namespaces and peer-kind names of comms.

/** Comms agents of this process: sessions with a comms name (key = session id). */
export const AGENTS_NS = 'comms.agents';

/** Peer requests a session received (key = request id). */
export function inboundNs(sessionId: string): string {
  return `comms.inbound:${sessionId}`;
}

/** The kinds a peer accepts. */
export const PEER_KINDS = ['peer_message', 'peer_lifecycle', 'peer_request', 'peer_response'];

const PEER_SESSION = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A canonical peer id: a session id, or `<session id>@<host:port>` for a session of another process.
 * Display names are not peer ids.
 */
export function isCanonicalPeerId(id: string): boolean {
  const at = id.indexOf('@');
  const session = at < 0 ? id : id.slice(0, at);
  return PEER_SESSION.test(session) && (at < 0 || /^[^\s@]+:[0-9]{1,5}$/.test(id.slice(at + 1)));
}
