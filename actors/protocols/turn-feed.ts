// actors/protocols/turn-feed.ts: one session's events from a given seq on, as an async sequence, for the
// protocol bindings (OpenAI Responses, ...). It is the event stream's own recipe (http/handlers/events.ts):
// subscribe to the hub, replay the ledger (memory realms: the ring) up to the delivered cursor, then go
// live from that cursor, so a protocol stream, and a protocol reconnect from a seq, loses and repeats
// nothing. The consumer pulls; live entries wait in the feed until pulled (a protocol stream reads one
// turn, so the backlog is bounded by that turn's events).
import type { EventSubscriber, HubEntry } from '../event-hub.ts';
import type { SessionHost } from '../session/session-host.ts';
import { replayEvents, type ReplaySink } from '../session/session-queries.ts';
import { sessionNotFound } from '../../contracts/errors.ts';

export class TurnFeed implements EventSubscriber, ReplaySink {
  private readonly queue: HubEntry[] = [];
  private readonly held: HubEntry[] = [];
  private replaying = true;
  private cursor: number;
  private closed: string | null = null;
  private wake: (() => void) | null = null;
  unsubscribe: () => void = () => {};

  constructor(afterSeq: number) {
    this.cursor = afterSeq;
  }

  push(entry: HubEntry): void {
    if (this.replaying) this.held.push(entry);
    else this.take(entry);
  }

  close(reason: 'archived' | 'shutdown'): void {
    this.closed = reason;
    this.notify();
  }

  async replay(entries: HubEntry[]): Promise<void> {
    for (const e of entries) this.take(e);
  }

  async control(): Promise<void> {}

  skipTo(seq: number): void {
    this.cursor = Math.max(this.cursor, seq);
  }

  takeReplayGap(): null {
    return null;
  }

  endReplay(): void {
    this.replaying = false;
    for (const e of this.held.splice(0)) this.take(e);
  }

  private take(e: HubEntry): void {
    if (e.seq <= this.cursor) return;
    this.cursor = e.seq;
    this.queue.push(e);
    this.notify();
  }

  private notify(): void {
    const w = this.wake;
    this.wake = null;
    w?.();
  }

  /** The next entry, or null once the session's stream closed (archived, shutdown) or `signal` aborted. */
  async next(signal?: AbortSignal): Promise<HubEntry | null> {
    for (;;) {
      const e = this.queue.shift();
      if (e) return e;
      if (this.closed || signal?.aborted) return null;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        signal?.addEventListener('abort', () => resolve(), { once: true });
      });
    }
  }

  /** The next entry already held, without waiting (null when none). */
  poll(): HubEntry | null {
    return this.queue.shift() ?? null;
  }

  stop(): void {
    this.unsubscribe();
    this.closed ??= 'stopped';
    this.notify();
  }
}

/** Opens a feed of session `sessionId`'s events with seq > afterSeq (this node or a ledger tail). */
export async function openFeed(sup: SessionHost, sessionId: string, afterSeq: number): Promise<TurnFeed> {
  const feed = new TurnFeed(afterSeq);
  const tails = sup.deps.ledgerTails;
  if (tails && !tails.hostsHere(sessionId)) {
    const record = await sup.deps.store.getSession(sessionId);
    if (!record || record.archived) throw sessionNotFound(sessionId);
    const tail = await tails.open(sessionId, afterSeq);
    const upTo = tail.hub.deliveredSeq;
    feed.unsubscribe = tail.subscribe(feed);
    await replayEvents(sup, tail.hub, afterSeq, upTo, feed);
    feed.endReplay();
    return feed;
  }
  const actor = await sup.get(sessionId);
  if (actor.snapshotRecord.archived) throw sessionNotFound(sessionId);
  const upTo = actor.hub.deliveredSeq;
  feed.unsubscribe = actor.hub.subscribe(feed);
  if (afterSeq < upTo) await replayEvents(sup, actor.hub, afterSeq, upTo, feed);
  feed.endReplay();
  return feed;
}
