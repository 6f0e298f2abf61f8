// http/handlers/events.ts: GET /sessions/{id}/events (SSE) and GET /sessions/{id}/ledger. A reconnect
// with Last-Event-ID (or ?after_seq=) replays the ledger after that seq, then goes live with no gap and
// no duplicate (live entries are held during the replay and de-duplicated by seq).
import { ServiceError } from '../../contracts/errors.ts';
import type { Supervisor } from '../../actors/supervisor.ts';
import type { HubEntry } from '../../actors/event-hub.ts';
import type { HandlerContext, HandlerTable } from '../handler.ts';
import { envelopeOf, SseSubscriber } from '../sse.ts';
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

/** Handlers of the event stream and the structural ledger read. */
export function eventHandlers(sup: Supervisor, realmId: string): HandlerTable {
  return {
    'sessions.events': async (ctx) => {
      const id = parseSessionId(ctx.params.id, realmId);
      const afterSeq = parseAfterSeq(ctx);
      const actor = await sup.get(id);
      if (actor.snapshotRecord.archived) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${id}`, { session_id: id });
      const { res } = ctx;
      const hub = actor.hub;
      let unsubscribe = () => {};
      const sub = new SseSubscriber(id, res, afterSeq ?? hub.lastSeq, () => unsubscribe());
      res.startStream(200, {
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-accel-buffering': 'no',
      });
      if (afterSeq !== undefined) sub.holdLive();
      unsubscribe = hub.subscribe(sub);
      if (res.aborted) {
        unsubscribe();
        return { streamed: true };
      }
      await sub.control('session_loaded', {
        type: 'session_loaded', session_id: id, message_count: actor.snapshotRecord.message_count, last_seq: hub.lastSeq,
      });
      if (afterSeq !== undefined) {
        await replay(sup, id, afterSeq, hub.lastSeq, sub, actor.hub.ringAfter.bind(actor.hub));
        sub.releaseLive();
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

async function replay(
  sup: Supervisor, id: string, afterSeq: number, upTo: number, sub: SseSubscriber,
  ringAfter: (after: number) => HubEntry[] | null,
): Promise<void> {
  const { store } = sup.deps;
  if (!store.persistent) {
    const tail = ringAfter(afterSeq);
    if (tail === null) {
      await sub.control('stream_truncated', { type: 'stream_truncated', reason: { kind: 'replay_unavailable', requested_after_seq: afterSeq, last_seq: upTo } });
      return;
    }
    await sub.replay(tail);
    return;
  }
  let cursor = afterSeq;
  while (cursor < upTo) {
    const page = await store.readLedger(id, cursor, REPLAY_PAGE);
    if (page.length === 0) break;
    await sub.replay(page);
    cursor = page[page.length - 1].seq;
  }
  if (cursor < upTo) {
    // The audit ledger halted (append fault): say so rather than pretend the stream is complete.
    await sub.control('stream_truncated', { type: 'stream_truncated', reason: { kind: 'replay_gap', from_seq: cursor + 1, to_seq: upTo } });
  }
}
