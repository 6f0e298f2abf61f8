// contracts/busy.ts: busy policies (a Warren extension beyond SPEC.md). `busy_policy` on continue says
// what happens when the session is already running a turn: `reject` (SPEC.md's 409, the default),
// `enqueue` (a durable follow-up turn, run in order after the current one) or `steer` (injected into the
// running turn at its next model call). actors/busy/ keeps the queue; records live in `busy_queue`.
import { Type, type Static } from 'typebox';
import type { ContinueSessionRequest } from './session.ts';

export const BusyPolicy = Type.Union([Type.Literal('reject'), Type.Literal('enqueue'), Type.Literal('steer')], {
  $id: 'BusyPolicy',
  description:
    'Warren extension (GET /warren/extensions): what a continue does when the session is busy. reject (default): 409 SESSION_BUSY; enqueue: a durable follow-up turn run in order after the current one (503 when the queue is full); steer: injected into the running turn at its next model call. Create accepts and ignores it.',
});
export type BusyPolicy = Static<typeof BusyPolicy>;

/** Store namespace of queued follow-ups; key `<session id>/<seq, zero-padded>` so a prefix lists one session in order. */
export const BUSY_QUEUE_NS = 'busy_queue';

/** One durable follow-up (or steering input not yet taken by a turn). */
export interface QueuedTurnRecord {
  v: 1;
  session_id: string;
  seq: number;
  request_id: string;
  policy: 'enqueue' | 'steer';
  /** Accepted with Prefer: respond-async (its result goes to GET /requests/{id}). */
  detached: boolean;
  created_ms: number;
  body: ContinueSessionRequest;
}

export function queueKey(sessionId: string, seq: number): string {
  return `${sessionId}/${String(seq).padStart(12, '0')}`;
}
