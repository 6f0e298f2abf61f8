// providers/errors.ts: turns every provider failure (HTTP status, vendor stream error, transport
// error, broken stream, missing key) into a coded ServiceError whose details.error says whether the
// retry loop may try again. Used by the wire adapters, retry.ts and the registry.
import { ServiceError, isServiceError, type ErrorCode } from '../contracts/errors.ts';
import type { RetryNotice } from './provider.ts';

/** The retryable failure classes of the `retrying` event payload. */
type RetryableKind = RetryNotice['failure']['kind'];

/** Why a failure is not retried (absent on retryable failures). */
type TerminalReason = 'auth' | 'missing_api_key' | 'bad_request' | 'misconfigured' | 'stream_interrupted' | 'cancelled';

/** `details.error` of an `llm_failure`. `retryable` is what withRetry reads; nothing reads messages. */
export interface LlmFailureInfo {
  kind: 'llm_failure';
  provider: string;
  model: string;
  status?: number;
  terminal: boolean;
  retryable: boolean;
  failure?: RetryableKind;
  reason?: TerminalReason;
  retry_after_ms?: number;
}

interface FailureInput {
  code: ErrorCode;
  message: string;
  provider: string;
  model: string;
  status?: number;
  failure?: RetryableKind;
  reason?: TerminalReason;
  retryAfterMs?: number;
  cause?: unknown;
}

function llmFailure(f: FailureInput): ServiceError {
  const retryable = f.failure !== undefined;
  const info: LlmFailureInfo = { kind: 'llm_failure', provider: f.provider, model: f.model, terminal: !retryable, retryable };
  if (f.status !== undefined) info.status = f.status;
  if (f.failure !== undefined) info.failure = f.failure;
  if (f.reason !== undefined) info.reason = f.reason;
  if (f.retryAfterMs !== undefined) info.retry_after_ms = f.retryAfterMs;
  return new ServiceError(f.code, f.message, { error: info }, { cause: f.cause });
}

/** The llm_failure info carried by `err`, or undefined for any other error. */
export function failureInfo(err: unknown): LlmFailureInfo | undefined {
  if (!isServiceError(err)) return undefined;
  const details = err.details as { error?: { kind?: unknown } } | undefined;
  return details?.error?.kind === 'llm_failure' ? (details.error as LlmFailureInfo) : undefined;
}

/** PROVIDER_ERROR naming the environment variable that should hold the key. Never retried. */
export function missingApiKey(provider: string, model: string, envVar: string): ServiceError {
  return llmFailure({ code: 'PROVIDER_ERROR', message: `${envVar} is not set`, provider, model, reason: 'missing_api_key' });
}

/** PROVIDER_ERROR for a provider that cannot be built from the configuration. Never retried. */
export function misconfigured(provider: string, model: string, message: string): ServiceError {
  return llmFailure({ code: 'PROVIDER_ERROR', message, provider, model, reason: 'misconfigured' });
}

/**
 * Classifies an HTTP (or HTTP-equivalent vendor error) status.
 * 401/402/403 → PROVIDER_ERROR (credentials, billing); 408 → network_timeout; 429 → rate_limited;
 * 409/425/5xx (529 overloaded included) → retryable_provider_error; anything else → AGENT_ERROR, final.
 */
export function statusFailure(provider: string, model: string, status: number, vendorMessage: string, retryAfterMs?: number): ServiceError {
  const message = `${provider} returned HTTP ${status}${vendorMessage ? `: ${vendorMessage}` : ''}`;
  const base = { message, provider, model, status, retryAfterMs };
  if (status === 401 || status === 402 || status === 403) return llmFailure({ ...base, code: 'PROVIDER_ERROR', reason: 'auth' });
  if (status === 429) return llmFailure({ ...base, code: 'AGENT_ERROR', failure: 'rate_limited' });
  if (status === 408) return llmFailure({ ...base, code: 'AGENT_ERROR', failure: 'network_timeout' });
  if (status === 409 || status === 425 || status >= 500) {
    return llmFailure({ ...base, code: 'AGENT_ERROR', failure: 'retryable_provider_error' });
  }
  return llmFailure({ ...base, code: 'AGENT_ERROR', reason: 'bad_request' });
}

/** Classifies a non-2xx response from its status, headers and (already read) body text. */
export function httpFailure(
  provider: string,
  model: string,
  status: number,
  headers: Record<string, unknown>,
  bodyText: string,
): ServiceError {
  const body = parseJsonObject(bodyText);
  const retryAfterMs = retryAfterFromHeaders(headers) ?? retryDelayFromBody(body);
  return statusFailure(provider, model, status, vendorMessage(body, bodyText), retryAfterMs);
}

/** A stream that broke the vendor's protocol (malformed JSON, no terminal event). Retryable. */
export function streamFailure(provider: string, model: string, message: string, cause?: unknown): ServiceError {
  return llmFailure({
    code: 'AGENT_ERROR',
    message: `${provider} stream: ${message}`,
    provider,
    model,
    failure: 'retryable_provider_error',
    cause,
  });
}

/** The caller aborted the call. Never retried. */
export function cancelledFailure(provider: string, model: string, cause?: unknown): ServiceError {
  return llmFailure({ code: 'REQUEST_CANCELLED', message: `${provider} call cancelled`, provider, model, reason: 'cancelled', cause });
}

const TIMEOUT_CODES = new Set(['UND_ERR_BODY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ETIMEDOUT']);

/**
 * Classifies anything thrown while calling or reading (transport errors, timeouts, unknown bugs).
 * ServiceErrors pass through. Unknown failures are retryable (wire-notes section 6).
 */
export function thrownFailure(
  provider: string,
  model: string,
  err: unknown,
  state: { cancelled: boolean; callTimedOut: boolean },
): ServiceError {
  if (isServiceError(err)) return err;
  if (state.cancelled) return cancelledFailure(provider, model, err);
  const detail = err instanceof Error ? err.message : String(err);
  if (state.callTimedOut) {
    return llmFailure({ code: 'AGENT_ERROR', message: `${provider} call timed out`, provider, model, failure: 'call_timeout', cause: err });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && TIMEOUT_CODES.has(code)) {
    return llmFailure({
      code: 'AGENT_ERROR',
      message: `${provider} network timeout: ${detail}`,
      provider,
      model,
      failure: 'network_timeout',
      cause: err,
    });
  }
  return llmFailure({
    code: 'AGENT_ERROR',
    message: `${provider} request failed: ${detail}`,
    provider,
    model,
    failure: 'retryable_provider_error',
    cause: err,
  });
}

/**
 * A retryable failure that happened after deltas reached onEvent becomes terminal, so a retry can
 * never stream the same text twice. Non-retryable failures are returned unchanged.
 */
export function afterStreamFailure(err: ServiceError): ServiceError {
  const info = failureInfo(err);
  if (!info?.retryable) return err;
  return llmFailure({
    code: 'AGENT_ERROR',
    message: `${err.message} (after output was streamed; not retried)`,
    provider: info.provider,
    model: info.model,
    status: info.status,
    reason: 'stream_interrupted',
    cause: err,
  });
}

/** AGENT_ERROR `retry_exhausted` once the bounded retry policy gave up. */
export function retryExhausted(provider: string, model: string, attempts: number, last: ServiceError): ServiceError {
  const info = failureInfo(last);
  const lastError: Record<string, unknown> = { message: last.message, code: last.code };
  if (info?.failure) lastError.kind = info.failure;
  if (info?.status !== undefined) lastError.status = info.status;
  return new ServiceError(
    'AGENT_ERROR',
    `${provider} call failed after ${attempts} attempts: ${last.message}`,
    { error: { kind: 'retry_exhausted', provider, model, terminal: true, attempts, last_error: lastError } },
    { cause: last },
  );
}

/** `retry-after-ms` (OpenAI) or `retry-after` in seconds or as an HTTP date, in ms. */
function retryAfterFromHeaders(headers: Record<string, unknown>, now: number = Date.now()): number | undefined {
  const ms = Number(headerValue(headers['retry-after-ms']));
  if (Number.isFinite(ms) && ms >= 0 && headerValue(headers['retry-after-ms']) !== '') return Math.ceil(ms);
  const raw = headerValue(headers['retry-after']);
  if (!raw) return undefined;
  const secs = Number(raw);
  if (Number.isFinite(secs)) return secs >= 0 ? Math.ceil(secs * 1000) : undefined;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function headerValue(v: unknown): string {
  if (Array.isArray(v)) return String(v[0] ?? '').trim();
  return typeof v === 'string' ? v.trim() : '';
}

/** Google's `RetryInfo.retryDelay` ("12s" / "0.5s") inside error.details. */
function retryDelayFromBody(body: Record<string, unknown> | undefined): number | undefined {
  const details = (body?.error as { details?: unknown } | undefined)?.details;
  if (!Array.isArray(details)) return undefined;
  for (const d of details) {
    const delay = (d as { retryDelay?: unknown } | null)?.retryDelay;
    const m = typeof delay === 'string' ? /^(\d+(?:\.\d+)?)s$/.exec(delay) : null;
    if (m) return Math.ceil(Number(m[1]) * 1000);
  }
  return undefined;
}

function vendorMessage(body: Record<string, unknown> | undefined, bodyText: string): string {
  const err = body?.error;
  if (typeof err === 'string') return truncate(err);
  const msg = (err as { message?: unknown } | undefined)?.message ?? body?.message;
  if (typeof msg === 'string') return truncate(msg);
  return truncate(bodyText.trim());
}

/** The parsed body when it is a JSON object, else undefined. */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function truncate(s: string): string {
  return s.length > 500 ? `${s.slice(0, 500)}…` : s;
}
