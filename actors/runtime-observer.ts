// actors/runtime-observer.ts: the optional hooks through which observation (actors/observe/: metrics,
// traces, the actor viewer's inspector) sees the runtime without editing it in many places. Every hook
// is called synchronously on the hot path, so implementations must be cheap and must never throw.
import type { AnyActorRef } from 'xstate';
import type { Provider } from '../providers/provider.ts';
import type { LedgerEntry } from '../storage/store.ts';

/** The session an observed event belongs to. */
export interface SessionEventSource {
  readonly id: string;
  readonly settings: { readonly provider: string; readonly model: string; readonly comms_name?: string };
}

export interface RuntimeObserver {
  /** Each session event as it is published (before it is durable or delivered). */
  sessionEvent?(source: SessionEventSource, entry: LedgerEntry): void;
  /** An actor's XState actor was created, before it starts (any kind). */
  machineCreated?(kind: string, id: string, ref: AnyActorRef): void;
  /**
   * The provider a session's turn calls, wrapped (the turn tracer's span per model call). Called once per
   * turn; the wrapper must pass every call, reply and failure through unchanged.
   */
  wrapProvider?(source: SessionEventSource, provider: Provider): Provider;
  /** A lagging SSE subscriber was sent stream_truncated for `dropped` events. */
  sseTruncated?(stream: 'session' | 'inspect', dropped: number): void;
}
