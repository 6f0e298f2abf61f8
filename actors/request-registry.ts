// actors/request-registry.ts: in-flight request ids (X-Warren-Request-Id) for duplicate rejection and
// POST /requests/{id}/cancel. Finished ids are remembered (bounded) so a late cancel answers
// already_terminal instead of 404.
import { ServiceError } from '../contracts/errors.ts';

interface InFlight {
  abort: AbortController;
  committing: boolean;
}

export interface RequestHandle {
  signal: AbortSignal;
  /** The request reached its commit: cancel can no longer stop it. */
  markCommitting(): void;
  finish(): void;
}

export class RequestRegistry {
  private readonly inflight = new Map<string, InFlight>();
  private readonly finished = new Map<string, true>();

  constructor(private readonly rememberFinished = 10_000) {}

  /** Registers a request id; a duplicate of one still in flight is rejected (SPEC "Limits"). */
  begin(requestId: string): RequestHandle {
    if (this.inflight.has(requestId)) {
      throw new ServiceError('DUPLICATE_REQUEST_ID', `request ID already in flight: ${requestId}`, { request_id: requestId });
    }
    const entry: InFlight = { abort: new AbortController(), committing: false };
    this.inflight.set(requestId, entry);
    return {
      signal: entry.abort.signal,
      markCommitting: () => {
        entry.committing = true;
      },
      finish: () => {
        if (this.inflight.get(requestId) === entry) this.inflight.delete(requestId);
        this.finished.set(requestId, true);
        if (this.finished.size > this.rememberFinished) {
          const oldest = this.finished.keys().next().value;
          if (oldest !== undefined) this.finished.delete(oldest);
        }
      },
    };
  }

  /** SPEC "States and transitions": cancel only affects uncommitted work. */
  cancel(requestId: string): { cancelled: true } | { cancelled: false; reason: 'already_terminal' } {
    const entry = this.inflight.get(requestId);
    if (entry && !entry.committing) {
      entry.abort.abort(new ServiceError('REQUEST_CANCELLED', 'request cancelled'));
      return { cancelled: true };
    }
    if (entry || this.finished.has(requestId)) return { cancelled: false, reason: 'already_terminal' };
    throw new ServiceError('NOT_FOUND', `Request not found: ${requestId}`, { request_id: requestId });
  }

  /** True when the id is in flight here or finished recently (a cluster peer forwards cancels it does not know). */
  knows(requestId: string): boolean {
    return this.inflight.has(requestId) || this.finished.has(requestId);
  }

  get inFlightCount(): number {
    return this.inflight.size;
  }
}
