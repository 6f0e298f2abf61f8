// client/src/errors.ts: every non-2xx answer becomes a WarrenError carrying the envelope's `code` and
// `details` (the codes are Warren's error table, typed), plus the HTTP status and request id.
import type { ErrorCode } from '../../contracts/errors.ts';

/** A failed call. `code` is Warren's error code; 'UNKNOWN' when the body carried none (auth routes). */
export class WarrenError<C extends ErrorCode | 'UNKNOWN' = ErrorCode | 'UNKNOWN'> extends Error {
  readonly status: number;
  readonly code: C;
  readonly details: unknown;
  readonly requestId: string | undefined;

  constructor(status: number, code: C, message: string, details?: unknown, requestId?: string) {
    super(message);
    this.name = 'WarrenError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.requestId = requestId;
  }
}

/** Narrows `err` to a WarrenError, optionally of one of `codes`. */
export function isWarrenError<C extends ErrorCode>(err: unknown, ...codes: C[]): err is WarrenError<C> {
  return err instanceof WarrenError && (codes.length === 0 || (codes as string[]).includes(err.code));
}

/** Builds the error of a non-2xx response from its body text. */
export function errorFromResponse(status: number, text: string, requestId: string | undefined): WarrenError {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  const env = (body && typeof body === 'object' ? body : {}) as { error?: unknown; code?: unknown; details?: unknown };
  const message = typeof env.error === 'string' ? env.error : text || `HTTP ${status}`;
  const code = typeof env.code === 'string' ? (env.code as ErrorCode) : 'UNKNOWN';
  return new WarrenError(status, code, message, env.details, requestId);
}
