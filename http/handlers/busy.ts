// http/handlers/busy.ts: busy policies on POST /sessions/{id}/messages (Warren extension). A continue with
// `busy_policy: enqueue | steer` goes to the session's follow-up queue (actors/busy/follow-ups.ts); with
// `Prefer: respond-async` it answers 202 once its queue record is durable, otherwise it waits for its
// own turn (enqueue) or the running turn (steer) and answers with that turn's response.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DetachedAnswers, FollowUps } from '../../actors/busy/follow-ups.ts';
import type { DetachedRequests } from '../../actors/detached/detached-requests.ts';
import type { SESSION_ROUTE } from '../../contracts/routes-sessions.ts';
import { errorResponse } from '../errors.ts';
import type { HandlerResult, RouteContext } from '../handler.ts';
import { acceptedAsync, detachedHooks } from './detached.ts';
import { parseSessionId } from './session-id.ts';
import { clientRequestId, turnBody } from './sessions.ts';

export function busyContinue(follow: FollowUps, realmId: string) {
  return async (
    ctx: RouteContext<(typeof SESSION_ROUTE)['continue']>,
    policy: 'enqueue' | 'steer',
    detached: boolean,
  ): Promise<HandlerResult> => {
    const id = parseSessionId(ctx.params.id, realmId);
    const rid = clientRequestId(ctx) ?? `${detached ? 'req' : 'auto'}_${randomUUID()}`;
    const accepted = await follow.submit(id, ctx.body, rid, policy, detached);
    if (detached) return acceptedAsync(id, rid);
    return { status: 200, body: turnBody(realmId, await accepted.result) };
  };
}

/** Request records of detached busy requests (GET /requests/{id}), kept as for any detached turn. */
export function detachedAnswers(records: DetachedRequests, realmId: string, log: Logger): DetachedAnswers {
  const waiting = (rid: string, sessionId: string) => {
    const rec = records.fresh(rid, sessionId, 'continue', 0);
    delete rec.first_seq;
    return rec;
  };
  return {
    queuedOps: (rid, sessionId) => [records.putOp({ ...waiting(rid, sessionId), status: 'queued' })],
    hooks: (rid) => detachedHooks(records, 'continue', rid, realmId, log).hooks,
    settleOps: (rid, sessionId, result) => [
      records.putOp(
        records.finished(
          waiting(rid, sessionId),
          'reply' in result
            ? { status: 'completed', response: turnBody(realmId, result.reply) }
            : { status: result.cancelled ? 'cancelled' : 'failed', error: errorResponse(result.error, log) },
        ),
      ),
    ],
  };
}
