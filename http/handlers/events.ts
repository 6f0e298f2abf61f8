// http/handlers/events.ts: GET /sessions/{id}/events (SSE) and GET /sessions/{id}/ledger. A reconnect
// with Last-Event-ID (or ?after_seq=) replays the ledger (memory realms: the 256-entry ring) after that
// seq up to the hub's delivered cursor, then goes live from that cursor: no gap, no duplicate. Live
// entries wait in the subscriber's 256-entry buffer during the replay; in persistent realms any that
// overflow it are re-read from the ledger before going live, so a slow replay stays lossless.
import { ServiceError } from '../../contracts/errors.ts';
import type { SessionHost } from '../../actors/session-host.ts';
import type { EventHub } from '../../actors/event-hub.ts';
import type { Store } from '../../storage/store.ts';
import type { HandlerContext, HandlerTable } from '../handler.ts';
import { envelopeOf, SseSubscriber, type SseOptions } from '../sse.ts';
import { parseSessionId } from './session-id.ts';

const REPLAY_PAGE = 1000;
const LEDGER_PAGE_MAX = 1000;

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
  return {
    'sessions.events': async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const afterSeq = parseAfterSeq(ctx);
      const actor = await sup.get(id);
      // From here to subscribe() nothing awaits: the archived check, the delivered cursor and the
      // subscription see one consistent hub state.
      if (actor.snapshotRecord.archived) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${id}`, { session_id: id });
      const { res } = ctx;
      if (res.aborted) return { streamed: true };
      const hub = actor.hub;
      // Every entry up to upTo was delivered (and is durable); every later one reaches this subscriber.
      const upTo = hub.deliveredSeq;
      res.startStream(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      let unsubscribe = (): void => {};
      const sub = new SseSubscriber(id, res, afterSeq === undefined ? upTo : Math.min(afterSeq, upTo), () => unsubscribe(), { ...opts.sse, log: ctx.log });
      if (afterSeq !== undefined) sub.beginReplay();
      unsubscribe = hub.subscribe(sub);
      try {
        // The first write: on uWS it also carries the status line and headers.
        await sub.control('session_loaded', {
          type: 'session_loaded', session_id: id, message_count: actor.snapshotRecord.message_count, last_seq: upTo,
        });
        if (afterSeq !== undefined) {
          await replay(sup, hub, afterSeq, upTo, sub);
          sub.endReplay();
        }
      } catch (err) {
        unsubscribe();
        sub.close('shutdown');
        throw err;
      }
      return { streamed: true };
    },
    'sessions.ledger': async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const { store } = sup.deps;
      if (!store.persistent) throw new ServiceError('SESSION_PERSISTENCE_DISABLED', 'the memory realm keeps no event ledger');
      const record = await store.getSession(id);
      if (!record) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${id}`, { session_id: id });
      const actor = sup.peek(id);
      if (actor?.writer) await actor.writer.flushed();
      const after = ctx.query.after_seq ? Number(ctx.query.after_seq) : 0;
      const to = ctx.query.to_seq ? Number(ctx.query.to_seq) : Number.MAX_SAFE_INTEGER;
      const limit = Math.min(LEDGER_PAGE_MAX, ctx.query.limit ? Number(ctx.query.limit) : 100);
      if (limit < 1) throw new ServiceError('BAD_REQUEST', 'limit must be at least 1');
      const entries = (await store.readLedger(id, after, limit + 1)).filter((e) => e.seq <= to);
      const page = entries.slice(0, limit);
      const lastSeq = await store.lastLedgerSeq(id);
      return {
        status: 200,
        body: {
          session_id: id,
          events: page.map((e) => envelopeOf(id, e)),
          last_seq: lastSeq,
          has_more: entries.length > limit,
        },
      };
    },
  };
}

/** Writes the ledger (or memory ring) entries in (afterSeq, upTo], or a stream_truncated saying why not. */
async function replay(sup: SessionHost, hub: EventHub, afterSeq: number, upTo: number, sub: SseSubscriber): Promise<void> {
  const { store } = sup.deps;
  if (afterSeq > upTo) {
    // An id this session never delivered (another server's, or a ledger that lost its tail).
    await sub.control('stream_truncated', { type: 'stream_truncated', reason: { kind: 'replay_unavailable', requested_after_seq: afterSeq, last_seq: upTo } });
    return;
  }
  if (!store.persistent) {
    const tail = hub.ringAfter(afterSeq);
    if (tail === null) {
      await sub.control('stream_truncated', { type: 'stream_truncated', reason: { kind: 'replay_unavailable', requested_after_seq: afterSeq, last_seq: upTo } });
      sub.skipTo(upTo);
      return;
    }
    await sub.replay(tail.filter((e) => e.seq <= upTo));
    return;
  }
  await replayRange(store, hub.sessionId, sub, afterSeq, upTo);
  // Live entries that overflowed the subscriber's buffer during a slow replay are in the ledger too.
  for (let gap = sub.takeReplayGap(); gap; gap = sub.takeReplayGap()) {
    await replayRange(store, hub.sessionId, sub, gap.from - 1, gap.to);
  }
}

async function replayRange(store: Store, sessionId: string, sub: SseSubscriber, after: number, upTo: number): Promise<void> {
  let cursor = after;
  while (cursor < upTo) {
    const page = (await store.readLedger(sessionId, cursor, REPLAY_PAGE)).filter((e) => e.seq <= upTo);
    if (page.length === 0) break;
    await sub.replay(page);
    cursor = page[page.length - 1].seq;
  }
  if (cursor < upTo) {
    // The audit ledger halted (append fault): say so rather than pretend the stream is complete.
    await sub.control('stream_truncated', { type: 'stream_truncated', reason: { kind: 'replay_gap', from_seq: cursor + 1, to_seq: upTo } });
    sub.skipTo(upTo);
  }
}
