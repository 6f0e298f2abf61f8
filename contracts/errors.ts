// contracts/errors.ts: the one error-code table (SPEC.md "Errors") and ServiceError.
// Every module raises ServiceError with a code from this table; http/errors.ts is the only place
// that turns an error into a response envelope. Nothing matches on message text.

/** Code → HTTP status and JSON-RPC code. RPC values follow SPEC.md's session error table. */
export const ERROR_TABLE = {
  BAD_REQUEST: { status: 400, rpc: -32602 },
  UNAUTHORIZED: { status: 401, rpc: -32030 },
  HOOK_DENIED: { status: 403, rpc: -32012 },
  /** Inbound auth: the API key is valid but lacks the route's scope, or the request is refused by policy. */
  FORBIDDEN: { status: 403, rpc: -32032 },
  ScopeDenied: { status: 403, rpc: -32025 },
  /** Browser guard (http/browser-guard.ts): a `Host` that is not loopback nor in `[rest] allowed_hosts`. */
  HOST_NOT_ALLOWED: { status: 403, rpc: -32026 },
  /** Browser guard: an `Origin` that is not the server's own nor in `[rest] allowed_origins`. */
  ORIGIN_NOT_ALLOWED: { status: 403, rpc: -32027 },
  NOT_FOUND: { status: 404, rpc: -32004 },
  SESSION_NOT_FOUND: { status: 404, rpc: -32001 },
  SKILL_NOT_FOUND: { status: 404, rpc: -32021 },
  METHOD_NOT_ALLOWED: { status: 405, rpc: -32601 },
  SESSION_BUSY: { status: 409, rpc: -32002 },
  SESSION_NOT_RUNNING: { status: 409, rpc: -32603 },
  DUPLICATE_REQUEST_ID: { status: 409, rpc: -32006 },
  CONFLICT: { status: 409, rpc: -32007 },
  PAYLOAD_TOO_LARGE: { status: 413, rpc: -32008 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, rpc: -32009 },
  SKILL_RESOLUTION_FAILED: { status: 422, rpc: -32022 },
  BUDGET_EXHAUSTED: { status: 429, rpc: -32011 },
  REQUEST_CANCELLED: { status: 499, rpc: -32005 },
  AGENT_ERROR: { status: 500, rpc: -32603 },
  INTERNAL_ERROR: { status: 500, rpc: -32603 },
  SESSION_CREATED_WITH_TURN_FAILURE: { status: 500, rpc: -32603 },
  SESSION_PERSISTENCE_DISABLED: { status: 400, rpc: -32603 },
  SESSION_COMPACTION_DISABLED: { status: 400, rpc: -32603 },
  SESSION_DURABLE_TAIL_HELD_FOR_RECOVERY: { status: 409, rpc: -32003 },
  SESSION_DURABLE_TAIL_RECOVERY_REFUSED: { status: 409, rpc: -32003 },
  SESSION_DURABLE_EVIDENCE_QUARANTINED: { status: 409, rpc: -32003 },
  SESSION_STORE_ERROR: { status: 503, rpc: -32603 },
  SESSION_UNSUPPORTED: { status: 400, rpc: -32603 },
  SESSION_ERROR: { status: 500, rpc: -32603 },
  CAPABILITY_UNAVAILABLE: { status: 501, rpc: -32013 },
  PROVIDER_ERROR: { status: 502, rpc: -32010 },
  SERVICE_UNAVAILABLE: { status: 503, rpc: -32031 },
  /** Mobs: an event cursor older than the ledger retains or beyond its head (CLI exit 47). */
  STALE_CURSOR: { status: 410, rpc: -32023 },
  /** Mobs: a mutation's expected mob revision or member generation no longer matches (CLI exit 48). */
  STALE_FENCE: { status: 409, rpc: -32024 },
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** A failure with a table code. `status` always comes from ERROR_TABLE, never from the caller. */
export class ServiceError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: unknown;
  constructor(code: ErrorCode, message: string, details?: unknown, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ServiceError';
    this.code = code;
    this.status = ERROR_TABLE[code].status;
    if (details !== undefined) this.details = details;
  }
}

/** True when `value` is a ServiceError (also across realms of tsx module instances). */
export function isServiceError(value: unknown): value is ServiceError {
  return value instanceof ServiceError;
}

/** Kinds carried in `details.error.kind` for provider failures (SPEC.md "Errors"). */
type ProviderFailureKind = 'llm_failure' | 'retry_exhausted';

// The spec's irregular session cases, beside the table (STYLE.md "Error model").

/** The one 404 of an unknown (or archived) session. */
export function sessionNotFound(sessionId: string): ServiceError {
  return new ServiceError('SESSION_NOT_FOUND', `Session not found: ${sessionId}`, { session_id: sessionId });
}

/** SPEC.md "Errors": a busy session during create maps to 400 BAD_REQUEST, not 409 SESSION_BUSY. */
export function busyOnCreate(sessionId: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `session is busy: ${sessionId}`, { session_id: sessionId });
}

/** Durable resume hold classes (SPEC.md "Errors"). */
export type DurableHoldClass = 'tail_held_for_recovery' | 'recovery_refused' | 'evidence_quarantined';

const HOLD_CODES: Record<DurableHoldClass, ErrorCode> = {
  tail_held_for_recovery: 'SESSION_DURABLE_TAIL_HELD_FOR_RECOVERY',
  recovery_refused: 'SESSION_DURABLE_TAIL_RECOVERY_REFUSED',
  evidence_quarantined: 'SESSION_DURABLE_EVIDENCE_QUARANTINED',
};

/**
 * A durable resume hold is not a fault: 409 SESSION_NOT_RUNNING with a `durable_resume_hold` payload
 * carrying the hold class, the session error code, the session id and `content_retained: true`.
 */
export function durableResumeHold(sessionId: string, holdClass: DurableHoldClass): ServiceError {
  return new ServiceError('SESSION_NOT_RUNNING', `session is held for durable recovery: ${sessionId}`, {
    durable_resume_hold: {
      hold_class: holdClass,
      session_error_code: HOLD_CODES[holdClass],
      session_id: sessionId,
      content_retained: true,
    },
  });
}
