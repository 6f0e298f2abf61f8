// contracts/routes-comms.ts: catalog entries of comms (send, peer list) and ingress (external events,
// terminal peer responses). http/handlers/comms.ts serves them; http/modules/comms-module.ts wires them.
import type { RouteDef } from './route.ts';
import { CommsSendRequest, CommsSendResult, ExternalEventEnvelope, PeerList, PeerResponseTerminal, PeersQuery, Queued } from './comms.ts';

const WEBHOOK = 'x-webhook-secret';

export const COMMS_ROUTE = {
  externalEvent: {
    id: 'sessions.externalEvent',
    method: 'POST',
    path: '/sessions/{id}/external-events',
    summary: 'Queue an external event in the session inbox (does not wake it)',
    body: ExternalEventEnvelope,
    response: { status: 202, schema: Queued },
    headers: [WEBHOOK],
    capability: 'comms',
    errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'SESSION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  peerResponseTerminal: {
    id: 'sessions.peerResponseTerminal',
    method: 'POST',
    path: '/sessions/{id}/peer-response-terminal',
    summary: 'Queue a terminal peer response (may wake a keep-alive session)',
    body: PeerResponseTerminal,
    response: { status: 202, schema: Queued },
    headers: [WEBHOOK],
    capability: 'comms',
    errors: ['BAD_REQUEST', 'UNAUTHORIZED', 'SESSION_NOT_FOUND', 'SERVICE_UNAVAILABLE'],
  },
  peers: {
    id: 'comms.peers',
    method: 'GET',
    path: '/comms/peers',
    summary: 'List the peers a comms-enabled session can reach',
    query: PeersQuery,
    response: { status: 200, schema: PeerList },
    capability: 'comms',
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND'],
  },
  send: {
    id: 'comms.send',
    method: 'POST',
    path: '/comms/send',
    summary: 'Send comms input or a peer message, lifecycle notice, request or response',
    body: CommsSendRequest,
    response: { status: 200, schema: CommsSendResult },
    capability: 'comms',
    errors: ['BAD_REQUEST', 'SESSION_NOT_FOUND', 'INTERNAL_ERROR'],
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const COMMS_ROUTES: RouteDef[] = Object.values(COMMS_ROUTE);
