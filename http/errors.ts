// http/errors.ts: the one place that turns an error into an HTTP error response (STYLE.md "Error model"),
// plus the spec's irregular cases as named functions. Called by http/router.ts and by handlers whose
// routes project errors differently (auth routes, webhook admission).
import type { Logger } from 'pino';
import { ServiceError, isServiceError } from '../contracts/errors.ts';

/** An error response ready to send: HTTP status plus the JSON body. */
export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
}

const INTERNAL: ErrorResponse = { status: 500, body: { error: 'internal error', code: 'INTERNAL_ERROR' } };

/**
 * Maps any thrown value onto the ordinary envelope `{error, code, details?}` (SPEC.md "Errors").
 * A ServiceError keeps its message, code, table status and details. Anything else becomes
 * 500 INTERNAL_ERROR with a fixed message (internals never leak) and is logged once at error.
 * Coded 5xx answers are logged by the router's request line (with the code), not here.
 */
export function errorResponse(err: unknown, log: Logger): ErrorResponse {
  if (!isServiceError(err)) {
    log.error({ err }, 'unhandled error');
    return { status: INTERNAL.status, body: { ...INTERNAL.body } };
  }
  const body: Record<string, unknown> = { error: err.message, code: err.code };
  if (err.details !== undefined) body.details = err.details;
  return { status: err.status, body };
}

// The irregular cases. Convention: functions that *construct* an error return a ServiceError (throw it
// from anywhere; errorResponse maps it, so the status still comes from the table). Functions that
// *project* an error into a non-envelope body return an ErrorResponse for the handler to return as is.

/**
 * Auth routes (and realm lookups) reply with `{error}` only (SPEC.md "Errors"; wire-notes §2.9).
 * Status and message follow errorResponse, so an unknown error is still logged and stays opaque.
 */
export function authErrorBody(err: unknown, log: Logger): ErrorResponse {
  const { status, body } = errorResponse(err, log);
  return { status, body: { error: body.error } };
}

/** Webhook admission with a missing or wrong `X-Webhook-Secret`: 401 (wire-notes §11 item 15). */
export function webhookUnauthorized(): ServiceError {
  return new ServiceError('UNAUTHORIZED', 'invalid webhook secret');
}

/** Webhook admission when the session's bounded event inbox is full: 503 (SPEC.md ingress routes). */
export function webhookInboxFull(): ServiceError {
  return new ServiceError('SERVICE_UNAVAILABLE', 'event inbox full');
}

/**
 * A comms send that failed at the peer: 500 with the lowercase failure code in `code` and `details`
 * (wire-notes §2.7: peer_not_found_or_not_trusted, peer_unreachable, peer_admission_dropped, peer_input_rejected).
 */
export function commsSendFailure(code: string, message: string): ErrorResponse {
  return { status: 500, body: { error: message, code, details: { code } } };
}

/**
 * The session was durably created but its first turn failed: 500 SESSION_CREATED_WITH_TURN_FAILURE with
 * the resumable identity in `details` (SPEC.md "Errors"; wire-notes §2.1). `details.error` carries the
 * cause's `details.error` (e.g. `{kind: 'retry_exhausted', ...}`) and is omitted when the cause has none.
 */
export function sessionCreatedWithTurnFailure(sessionId: string, sessionRef: string, cause: unknown): ServiceError {
  const details: Record<string, unknown> = {
    session_id: sessionId,
    session_ref: sessionRef,
    session_created: true,
    resumable: true,
    turn_error_code: 'TURN_ABANDONED',
  };
  // Clients branch on details.error.kind, so a cause without one (e.g. a store fault) still gets a kind.
  details.error = causeDetailsError(cause) ?? { kind: 'fatal_failure', terminal: true };
  const reason = cause instanceof Error ? `: ${cause.message}` : '';
  return new ServiceError('SESSION_CREATED_WITH_TURN_FAILURE', `session created but its first turn failed${reason}`, details, { cause });
}

function causeDetailsError(cause: unknown): unknown {
  if (!isServiceError(cause)) return undefined;
  const details = cause.details;
  if (typeof details !== 'object' || details === null || !('error' in details)) return undefined;
  return (details as { error?: unknown }).error;
}
