// http/handlers/turn-extensions.ts: where the extensions module plugs into the session routes without
// owning them: `Prefer: respond-async` on create/continue (detached turns) and `?request_id=` on the event
// stream. One slot per session host; empty slots leave the routes exactly as SPEC.md has them (a server
// may ignore a preference, RFC 7240).
import type { SessionHost } from '../../actors/session/session-host.ts';
import type { SESSION_ROUTE } from '../../contracts/routes-sessions.ts';
import type { HandlerContext, HandlerResult, RouteContext } from '../handler.ts';

/** A create or a continue request, each with the body its own route validated. */
export type TurnRequest =
  ['create', RouteContext<typeof SESSION_ROUTE.create>] | ['continue', RouteContext<(typeof SESSION_ROUTE)['continue']>];

export interface TurnExtensions {
  respondAsync?(...request: TurnRequest): Promise<HandlerResult>;
  /** A continue with busy_policy enqueue or steer (actors/busy); `detached` when it prefers respond-async. */
  busyContinue?(
    ctx: RouteContext<(typeof SESSION_ROUTE)['continue']>,
    policy: 'enqueue' | 'steer',
    detached: boolean,
  ): Promise<HandlerResult>;
  /** The seq of a detached request's first event on that session. */
  requestStartSeq?(requestId: string, sessionId: string): Promise<number>;
}

const slots = new WeakMap<SessionHost, TurnExtensions>();

export function turnExtensions(host: SessionHost): TurnExtensions {
  let slot = slots.get(host);
  if (!slot) slots.set(host, (slot = {}));
  return slot;
}

/** True when the Prefer header (RFC 7240) asks for respond-async. */
export function prefersAsync(ctx: HandlerContext): boolean {
  const raw = ctx.headers.prefer;
  if (!raw) return false;
  return raw.split(',').some((p) => p.split(';')[0].trim().toLowerCase() === 'respond-async');
}
