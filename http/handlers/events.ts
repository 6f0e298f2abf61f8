// http/handlers/events.ts: GET /sessions/{id}/events (SSE) and GET /sessions/{id}/ledger. A reconnect
// with Last-Event-ID (or ?after_seq=) replays the ledger (memory realms: the 256-entry ring) after that
// seq up to the hub's committed cursor, then goes live after that cursor: no gap, no duplicate. Without
// it the stream starts after the last seq committed when it opened (session_loaded's last_seq), even
// while the hub still paces a large commit out to older subscribers. Live
// entries wait in the subscriber's 256-entry buffer during the replay; in persistent realms any that
// overflow it are re-read from the ledger before going live, so a slow replay stays lossless.
import { ServiceError, sessionNotFound } from '../../contracts/errors.ts';
import type { EventHub } from '../../actors/event-hub.ts';
import type { SessionHost } from '../../actors/session/session-host.ts';
import { ledgerRange, replayEvents } from '../../actors/session/session-queries.ts';
import { on, type HandlerContext, type HandlerTable } from '../handler.ts';
import { SESSION_ROUTE } from '../../contracts/routes-sessions.ts';
import { envelopeOf, SseSubscriber, type SseOptions } from '../sse.ts';
import { MAX_PATH_PARAM_BYTES } from '../router.ts';
import { parseSessionId } from './session-id.ts';
import { turnExtensions } from './turn-extensions.ts';

function parseAfterSeq(ctx: HandlerContext): number | undefined {
  const header = ctx.headers['last-event-id'];
  const raw = header !== undefined && header.trim() !== '' ? header.trim() : ctx.query.after_seq;
  if (raw === undefined) return undefined;
  if (!/^[0-9]{1,15}$/.test(raw)) throw new ServiceError('BAD_REQUEST', `invalid event id '${raw}': expected a sequence number`);
  return Number(raw);
}

/** Options of the event stream (app.ts may pass them from config). */
export interface EventHandlerOptions {
  sse?: SseOptions;
}

/** Handlers of the event stream and the structural ledger read. */
export function eventHandlers(sup: SessionHost, realmId: string, opts: EventHandlerOptions = {}): HandlerTable {
  /**
   * Streams `hub` (a local session's, or a ledger tail's) from `afterSeq` (Last-Event-ID), else from
   * `openSeq` (the last seq committed when the stream opened; defaults to the hub's committed cursor).
   * Called with no await since the hub was read: the cursors and the subscription see one hub state.
   */
  async function stream(
    ctx: HandlerContext,
    id: string,
    hub: EventHub,
    subscribe: (s: SseSubscriber) => () => void,
    messageCount: number,
    afterSeq: number | undefined,
    openSeq?: number,
  ): Promise<{ streamed: true }> {
    const { res } = ctx;
    if (res.aborted) return { streamed: true };
    // Every entry up to upTo is committed; the hub may still be pacing some of them out, so live pushes
    // up to it are ignored (a turn acknowledged before the stream opened is never replayed unasked).
    const upTo = hub.committedSeq;
    const start = Math.min(afterSeq ?? openSeq ?? upTo, upTo);
    // Entries committed between the open and now (a ledger tail that had to catch up) come from the ledger.
    const replayAfter = afterSeq ?? (start < upTo ? start : undefined);
    res.startStream(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
    });
    let unsubscribe = (): void => {};
    const sub = new SseSubscriber(id, res, start, () => unsubscribe(), {
      ...opts.sse,
      log: ctx.log,
    });
    sub.ignoreLiveUpTo(upTo);
    if (replayAfter !== undefined) sub.beginReplay();
    unsubscribe = subscribe(sub);
    try {
      // The first write: on uWS it also carries the status line and headers.
      const lastSeq = afterSeq === undefined ? start : upTo;
      await sub.control('session_loaded', { type: 'session_loaded', session_id: id, message_count: messageCount, last_seq: lastSeq });
      if (replayAfter !== undefined) {
        await replayEvents(sup, hub, replayAfter, upTo, sub);
        sub.endReplay();
      }
    } catch (err) {
      unsubscribe();
      sub.close('shutdown');
      throw err;
    }
    return { streamed: true };
  }

  return {
    ...on(SESSION_ROUTE.events, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const rid = ctx.query.request_id;
      if (rid !== undefined && rid.length > MAX_PATH_PARAM_BYTES)
        throw new ServiceError('BAD_REQUEST', `request_id exceeds ${MAX_PATH_PARAM_BYTES} characters`);
      const startAt = rid ? turnExtensions(sup).requestStartSeq : undefined;
      // ?request_id= (detached turns): start at that turn's first event.
      const afterSeq = rid && startAt ? (await startAt(rid, id)) - 1 : parseAfterSeq(ctx);
      const tails = sup.deps.ledgerTails;
      if (tails && !tails.hostsHere(id)) {
        // A cluster node not hosting the session: its events come from the shared ledger (a tail that
        // follows the session across nodes, so the stream outlives the node hosting it).
        const record = await sup.deps.store.getSession(id);
        if (!record || record.archived) throw sessionNotFound(id);
        // Without Last-Event-ID the stream starts at the ledger's head now (read after the record, so
        // nothing committed before this request is replayed), even when a shared tail lags it.
        const openSeq = afterSeq === undefined ? await sup.deps.store.lastLedgerSeq(id) : undefined;
        const tail = await tails.open(id, afterSeq ?? openSeq ?? 0);
        return stream(ctx, id, tail.hub, (s) => tail.subscribe(s), record.message_count, afterSeq, openSeq);
      }
      const actor = await sup.get(id);
      // From here to subscribe() nothing awaits: the archived check, the delivered cursor and the
      // subscription see one consistent hub state.
      if (actor.snapshotRecord.archived) throw sessionNotFound(id);
      return stream(ctx, id, actor.hub, (s) => actor.hub.subscribe(s), actor.snapshotRecord.message_count, afterSeq);
    }),
    ...on(SESSION_ROUTE.ledger, async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const { entries, lastSeq, hasMore } = await ledgerRange(sup, id, {
        afterSeq: ctx.query.after_seq ? Number(ctx.query.after_seq) : 0,
        toSeq: ctx.query.to_seq ? Number(ctx.query.to_seq) : Number.MAX_SAFE_INTEGER,
        ...(ctx.query.limit ? { limit: Number(ctx.query.limit) } : {}),
      });
      return {
        status: 200,
        body: { session_id: id, events: entries.map((e) => envelopeOf(id, e)), last_seq: lastSeq, has_more: hasMore },
      };
    }),
  };
}
