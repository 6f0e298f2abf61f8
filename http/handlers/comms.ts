// http/handlers/comms.ts: POST /comms/send, GET /comms/peers and the two webhook admissions
// (external events, terminal peer responses). Maps requests onto the comms host (actors/comms/) and its
// failures onto the spec's projections: webhook 401/503 and the lowercase comms send codes.
import { createHash, timingSafeEqual } from 'node:crypto';
import { ServiceError } from '../../contracts/errors.ts';
import type { CommsHost } from '../../actors/comms/comms-host.ts';
import { CommsSendError } from '../../actors/comms/comms-errors.ts';
import { isCanonicalPeerId } from '../../actors/comms/comms-ids.ts';
import { sendComms } from '../../actors/comms/comms-send.ts';
import { InboxFullError } from '../../actors/comms/inbox.ts';
import { commsSendFailure, webhookInboxFull, webhookUnauthorized } from '../errors.ts';
import { COMMS_ROUTE } from '../../contracts/routes-comms.ts';
import { on, type HandlerContext, type HandlerTable } from '../handler.ts';
import { parseSessionId } from './session-id.ts';

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/**
 * SPEC "Authentication" 2: with WARREN_WEBHOOK_SECRET set, X-Webhook-Secret must match. Both sides are
 * hashed to a fixed length first, so the comparison takes the same time whatever the lengths.
 */
function webhookSecretMatches(given: string | undefined, expected: string): boolean {
  const same = timingSafeEqual(digest(given ?? ''), digest(expected));
  return same && given !== undefined;
}

async function admitting(run: () => Promise<void>): Promise<{ status: number; body: { queued: true } }> {
  try {
    await run();
  } catch (err) {
    if (err instanceof InboxFullError) throw webhookInboxFull();
    throw err;
  }
  return { status: 202, body: { queued: true } };
}

export function commsHandlers(host: CommsHost, realmId: string, webhookSecret: string | undefined): HandlerTable {
  const checkSecret = (ctx: HandlerContext) => {
    if (webhookSecret !== undefined && !webhookSecretMatches(ctx.headers['x-webhook-secret'], webhookSecret)) throw webhookUnauthorized();
  };
  return {
    ...on(COMMS_ROUTE.externalEvent, async (ctx) => {
      const env = ctx.body;
      if (env.kind === 'peer_response_terminal') {
        throw new ServiceError(
          'BAD_REQUEST',
          'kind peer_response_terminal is reserved here: use POST /sessions/{id}/peer-response-terminal',
        );
      }
      checkSecret(ctx);
      const id = parseSessionId(ctx.params.id, realmId);
      if (env.event_type.trim() === '') throw new ServiceError('BAD_REQUEST', 'event_type must be a non-empty string');
      return admitting(() => host.externalEvent(id, env));
    }),
    ...on(COMMS_ROUTE.peerResponseTerminal, async (ctx) => {
      checkSecret(ctx);
      const id = parseSessionId(ctx.params.id, realmId);
      const body = ctx.body;
      // SPEC "Peer terminal response": peer_id is the canonical routing id; display names are not accepted.
      if (!isCanonicalPeerId(body.peer_id)) {
        throw new ServiceError(
          'BAD_REQUEST',
          `peer_id must be a canonical peer id (<session id> or <session id>@<host:port>), not a display name: ${body.peer_id}`,
        );
      }
      return admitting(() => host.peerResponseTerminal(id, body));
    }),
    ...on(COMMS_ROUTE.peers, async (ctx) => {
      const id = parseSessionId(ctx.query.session_id ?? '', realmId);
      return { status: 200, body: { peers: await host.peers(id) } };
    }),
    ...on(COMMS_ROUTE.send, async (ctx) => {
      const body = ctx.body;
      try {
        const result = await sendComms(host, { ...body, session_id: parseSessionId(body.session_id, realmId) });
        return { status: 200, body: result };
      } catch (err) {
        if (err instanceof CommsSendError) return commsSendFailure(err.code, err.message);
        throw err;
      }
    }),
  };
}
