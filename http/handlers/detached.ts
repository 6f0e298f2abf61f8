// http/handlers/detached.ts: detached turns (Warren extension). Create/continue with `Prefer:
// respond-async` start the turn with hooks that write its durable request record (with the pending
// input, then with the commit or failure), answer 202 once the pending input is durable, and
// GET /requests/{request_id} reports the record. A refusal before the turn starts (busy, bad input)
// answers exactly as the synchronous route does.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { DetachedRequests } from '../../actors/detached/detached-requests.ts';
import type { TurnHooks } from '../../actors/session/session-actor.ts';
import { continueSession, createSession, CreatedWithTurnFailure } from '../../actors/session/session-commands.ts';
import type { SessionHost } from '../../actors/session/session-host.ts';
import type { DetachedRecord } from '../../contracts/detached.ts';
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import { errorResponse, sessionCreatedWithTurnFailure } from '../errors.ts';
import type { HandlerResult, HandlerTable } from '../handler.ts';
import { parseSessionId } from './session-id.ts';
import { clientRequestId, turnBody } from './sessions.ts';
import type { TurnRequest } from './turn-extensions.ts';

/** The error the synchronous route would have answered for a failed turn. */
function turnError(kind: 'create' | 'continue', sessionId: string, realmId: string, err: unknown): unknown {
  if (kind === 'continue') return err;
  const ref = `${realmId}:${sessionId}`;
  if (isServiceError(err) && err.code === 'REQUEST_CANCELLED') {
    return new ServiceError('REQUEST_CANCELLED', 'request cancelled', {
      session_id: sessionId,
      session_ref: ref,
      session_created: true,
      resumable: true,
    });
  }
  return sessionCreatedWithTurnFailure(sessionId, ref, err);
}

function envelope(err: unknown, log: Logger): { status: number; body: Record<string, unknown> } {
  return errorResponse(err, log);
}

/**
 * The hooks that keep a detached turn's request record: running with its pending input, then completed
 * or failed with its commit or failure write. Also used by busy policies for detached follow-ups.
 */
export function detachedHooks(records: DetachedRequests, kind: 'create' | 'continue', rid: string, realmId: string, log: Logger) {
  let base: DetachedRecord | null = null;
  let durable!: () => void;
  const pendingDurable = new Promise<void>((resolve) => (durable = resolve));
  const hooks: TurnHooks = {
    pendingOps: (sessionId, firstSeq) => {
      base = records.fresh(rid, sessionId, kind, firstSeq);
      return [records.putOp(base)];
    },
    onPendingDurable: () => durable(),
    commitOps: (outcome) => [
      records.putOp(
        records.finished(base!, { status: 'completed', response: turnBody(realmId, { sessionId: base!.session_id, ...outcome }) }),
      ),
    ],
    failOps: (err, cancelled) => [
      records.putOp(
        records.finished(base!, {
          status: cancelled ? 'cancelled' : 'failed',
          error: envelope(turnError(kind, base!.session_id, realmId, err), log),
        }),
      ),
    ],
  };
  return { hooks, pendingDurable, accepted: (): DetachedRecord | null => base };
}

export function detachedStarter(sup: SessionHost, records: DetachedRequests, realmId: string) {
  // Destructured in the parameter list, so `kind` narrows `ctx.body` to its route's request type.
  return async (...[kind, ctx]: TurnRequest): Promise<HandlerResult> => {
    const rid = clientRequestId(ctx) ?? `req_${randomUUID()}`;
    const pathId = kind === 'continue' ? parseSessionId(ctx.params.id, realmId) : '';
    const handle = sup.requests.begin(rid);
    const { hooks, pendingDurable, accepted: record } = detachedHooks(records, kind, rid, realmId, ctx.log);
    const run =
      kind === 'create'
        ? createSession(sup, ctx.body, { requestId: rid, signal: handle.signal, onCommitting: handle.markCommitting, hooks })
        : continueSession(sup, pathId, ctx.body, { requestId: rid, signal: handle.signal, onCommitting: handle.markCommitting, hooks });
    const settled = run.finally(() => handle.finish());
    // Settled in the background once answered; its outcome is in the request record.
    settled.catch(() => {});
    const early = await Promise.race([
      pendingDurable.then(() => null),
      settled.then(
        () => null,
        (err: unknown) => ({ err }),
      ),
    ]);
    const accepted = record();
    if (!accepted) {
      const err = early?.err;
      if (err instanceof CreatedWithTurnFailure) throw turnError('create', err.sessionId, realmId, err.cause);
      throw err ?? new ServiceError('INTERNAL_ERROR', 'detached turn ended without a record');
    }
    return acceptedAsync(accepted.session_id, rid);
  };
}

/** The 202 answer of a detached request (RFC 7240 respond-async). */
export function acceptedAsync(sessionId: string, rid: string): HandlerResult {
  const statusUrl = `/requests/${encodeURIComponent(rid)}`;
  return {
    status: 202,
    headers: { location: statusUrl, 'preference-applied': 'respond-async' },
    body: {
      session_id: sessionId,
      request_id: rid,
      status_url: statusUrl,
      events_url: `/sessions/${sessionId}/events?request_id=${encodeURIComponent(rid)}`,
    },
  };
}

export function detachedHandlers(records: DetachedRequests, ttlMs: () => number): HandlerTable {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    'requests.get': async (ctx) => {
      const r = await records.get(ctx.params.request_id);
      return {
        status: 200,
        body: {
          request_id: r.request_id,
          session_id: r.session_id,
          kind: r.kind,
          status: r.status,
          created_at: iso(r.created_ms),
          ...(r.first_seq !== undefined ? { first_seq: r.first_seq } : {}),
          ...(r.finished_ms !== undefined ? { finished_at: iso(r.finished_ms), expires_at: iso(r.finished_ms + ttlMs()) } : {}),
          ...(r.response !== undefined ? { response: r.response } : {}),
          ...(r.error ? { error: r.error.body, http_status: r.error.status } : {}),
        },
      };
    },
  };
}
