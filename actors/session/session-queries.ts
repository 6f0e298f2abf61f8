// actors/session/session-queries.ts: the session reads behind the HTTP handlers: list (label filters served by
// the store's label index), detail, history pages, ledger ranges and the replay of a reconnecting event
// stream. A resident actor's record wins over the stored one (it may hold writes not flushed yet);
// reads that must agree with the committed rows wait for the actor's writer first.
import { sessionNotFound, ServiceError } from '../../contracts/errors.ts';
import type { LedgerEntry, SessionRecord } from '../../contracts/records.ts';
import type { Message } from '../../contracts/transcript.ts';
import type { EventHub, HubEntry } from '../event-hub.ts';
import type { SessionHost } from './session-host.ts';

const REPLAY_PAGE = 1000;
const LEDGER_PAGE_MAX = 1000;

/** One row of GET /sessions. */
export interface SessionListItem {
  record: SessionRecord;
  /** A turn is running now (only resident sessions can be). */
  running: boolean;
}

/** Non-archived sessions in creation order, every label filter matching (AND), paged. */
export async function listSessions(
  host: SessionHost,
  query: { labels: ReadonlyArray<readonly [string, string]>; offset: number; limit?: number },
): Promise<SessionListItem[]> {
  // A session is listed once its first turn has begun, so creation writes in flight land first.
  await host.creationsSettled();
  const records = await host.deps.store.listSessions({
    offset: query.offset,
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
    ...(query.labels.length ? { labels: query.labels } : {}),
  });
  return records.map((r) => {
    const live = host.peek(r.session_id);
    return live ? { record: live.snapshotRecord, running: live.isRunning() } : { record: r, running: false };
  });
}

/** The current record of a non-archived session (404 otherwise), without hydrating its actor. */
export async function sessionDetail(host: SessionHost, sessionId: string): Promise<SessionRecord> {
  const actor = host.peek(sessionId);
  const record = actor ? actor.snapshotRecord : await host.deps.store.getSession(sessionId);
  if (!record || record.archived) throw sessionNotFound(sessionId);
  return record;
}

/** Committed transcript rows [offset, offset+limit) and the committed message count. */
export async function historyPage(
  host: SessionHost,
  sessionId: string,
  page: { offset: number; limit?: number },
  /** Mob member routes read a retired helper's archived session (the session routes never do). */
  opts: { includeArchived?: boolean } = {},
): Promise<{ total: number; rows: Message[] }> {
  const actor = host.peek(sessionId);
  // Read the record after pending writes are durable, so message_count and the rows agree.
  if (actor?.writer) await actor.writer.flushed();
  const record = actor ? actor.snapshotRecord : await host.deps.store.getSession(sessionId);
  if (!record) throw sessionNotFound(sessionId);
  // SPEC "Errors": archived or unavailable history returns 400.
  if (record.archived && !opts.includeArchived)
    throw new ServiceError('BAD_REQUEST', `history of archived session ${sessionId} is not available`, { session_id: sessionId });
  // Only the committed snapshot: rows beyond the record's message_count belong to no commit yet.
  const total = record.message_count;
  const { offset, limit } = page;
  const want = limit === undefined ? Math.max(0, total - offset) : Math.max(0, Math.min(limit, total - offset));
  const { rows } = want > 0 ? await host.deps.store.readRows(sessionId, offset, want) : { rows: [] };
  return { total, rows };
}

/** Ledger entries with afterSeq < seq <= toSeq, at most `limit` (1..1000, default 100). */
export async function ledgerRange(
  host: SessionHost,
  sessionId: string,
  range: { afterSeq: number; toSeq: number; limit?: number },
): Promise<{ entries: LedgerEntry[]; lastSeq: number; hasMore: boolean }> {
  const { store } = host.deps;
  if (!store.persistent) throw new ServiceError('SESSION_PERSISTENCE_DISABLED', 'the memory realm keeps no event ledger');
  const record = await store.getSession(sessionId);
  if (!record) throw sessionNotFound(sessionId);
  const actor = host.peek(sessionId);
  if (actor?.writer) await actor.writer.flushed();
  const limit = Math.min(LEDGER_PAGE_MAX, range.limit ?? 100);
  if (limit < 1) throw new ServiceError('BAD_REQUEST', 'limit must be at least 1');
  const entries = (await store.readLedger(sessionId, range.afterSeq, limit + 1)).filter((e) => e.seq <= range.toSeq);
  const lastSeq = await store.lastLedgerSeq(sessionId);
  return { entries: entries.slice(0, limit), lastSeq, hasMore: entries.length > limit };
}

/** Where a replay writes (http/sse.ts's SseSubscriber). */
export interface ReplaySink {
  replay(entries: HubEntry[]): Promise<void>;
  control(kind: string, data: unknown): Promise<void>;
  skipTo(seq: number): void;
  /** Live entries dropped from the subscriber's buffer during the replay, as a seq range, or null. */
  takeReplayGap(): { from: number; to: number } | null;
}

/** Writes the ledger (or memory ring) entries in (afterSeq, upTo], or a stream_truncated saying why not. */
export async function replayEvents(host: SessionHost, hub: EventHub, afterSeq: number, upTo: number, sink: ReplaySink): Promise<void> {
  const { store } = host.deps;
  if (afterSeq > upTo) {
    // An id this session never delivered (another server's, or a ledger that lost its tail).
    await sink.control('stream_truncated', {
      type: 'stream_truncated',
      reason: { kind: 'replay_unavailable', requested_after_seq: afterSeq, last_seq: upTo },
    });
    return;
  }
  if (!store.persistent) {
    const tail = hub.ringAfter(afterSeq);
    if (tail === null) {
      await sink.control('stream_truncated', {
        type: 'stream_truncated',
        reason: { kind: 'replay_unavailable', requested_after_seq: afterSeq, last_seq: upTo },
      });
      sink.skipTo(upTo);
      return;
    }
    await sink.replay(tail.filter((e) => e.seq <= upTo));
    return;
  }
  // Retention (`[ledger]`, ledger-retention.ts) pruned the oldest entries: say so, with the first one kept.
  const [first] = await store.readLedger(hub.sessionId, 0, 1);
  if (first && first.seq > 1 && afterSeq + 1 < first.seq) {
    await sink.control('stream_truncated', {
      type: 'stream_truncated',
      reason: { kind: 'ledger_pruned', requested_after_seq: afterSeq, first_retained_seq: first.seq },
    });
  }
  await replayRange(host, hub.sessionId, sink, afterSeq, upTo);
  // Live entries that overflowed the subscriber's buffer during a slow replay are in the ledger too.
  for (let gap = sink.takeReplayGap(); gap; gap = sink.takeReplayGap()) {
    await replayRange(host, hub.sessionId, sink, gap.from - 1, gap.to);
  }
}

async function replayRange(host: SessionHost, sessionId: string, sink: ReplaySink, after: number, upTo: number): Promise<void> {
  let cursor = after;
  while (cursor < upTo) {
    const page = (await host.deps.store.readLedger(sessionId, cursor, REPLAY_PAGE)).filter((e) => e.seq <= upTo);
    if (page.length === 0) break;
    await sink.replay(page);
    cursor = page[page.length - 1].seq;
  }
  if (cursor < upTo) {
    // The audit ledger halted (append fault): say so rather than pretend the stream is complete.
    await sink.control('stream_truncated', {
      type: 'stream_truncated',
      reason: { kind: 'replay_gap', from_seq: cursor + 1, to_seq: upTo },
    });
    sink.skipTo(upTo);
  }
}
