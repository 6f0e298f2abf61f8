// actors/comms/comms-ids.ts: store namespaces and peer-kind names of comms.

/** Comms agents of this process: sessions with a comms name (key = session id). */
export const AGENTS_NS = 'comms.agents';

/** Peer requests a session received (key = request id). */
export function inboundNs(sessionId: string): string {
  return `comms.inbound:${sessionId}`;
}

/** The kinds a peer accepts. */
export const PEER_KINDS = ['peer_message', 'peer_lifecycle', 'peer_request', 'peer_response'];
