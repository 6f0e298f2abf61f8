// actors/event-hub.ts: one session's event sequence and live fan-out. Every event gets the next
// per-session seq; persistent realms deliver an event to subscribers only after the session writer
// made it durable in the ledger (so a replay after reconnect never misses what a client saw live).
// Memory realms deliver at once and keep a 256-entry ring for short reconnect gaps.
// A group commit can make hundreds of events durable at once; they are handed to subscribers at most
// DELIVERY_SLICE per event-loop turn, so sockets get a chance to drain between slices and a reader that
// keeps up never trips the 256-entry lag policy of http/sse.ts merely because a commit was slow.
// Pacing makes the delivered cursor lag the commit: a stream opened meanwhile starts at `committedSeq`
// (every entry handed to deliver(), durable or memory) and skips what is still being paced out, so it
// never replays the tail of a turn that was committed (and acknowledged) before it opened.
import type { LedgerEntry } from '../contracts/records.ts';
import type { SessionEventKind, SessionEventPayload } from '../contracts/session-events.ts';

/** A live consumer of a session's events (http/sse.ts implements it). */
export interface EventSubscriber {
  push(entry: HubEntry): void;
  /** The stream ends (session archived, server closing). */
  close(reason: 'archived' | 'shutdown'): void;
}

/** A ledger entry plus its serialized SSE frame, built once and shared by every subscriber. */
export interface HubEntry extends LedgerEntry {
  frame?: string;
}

const RING_SIZE = 256;
/** Entries handed to subscribers per event-loop turn (well under the 256-entry subscriber buffer). */
const DELIVERY_SLICE = 32;

let liveSubscribers = 0;

/** @internal Live subscriptions across every hub of this process (tests observe cleanup with it). */
export function liveSubscriberTotal(): number {
  return liveSubscribers;
}

export class EventHub {
  private nextSeq: number;
  private readonly subscribers = new Set<EventSubscriber>();
  private readonly ring: HubEntry[] = [];
  private delivered: number;
  /** Highest seq handed to deliver(): committed (persistent realms), possibly still being paced out. */
  private committed: number;
  /** Durable entries not yet handed out (only while a large batch is being paced). */
  private backlog: HubEntry[] = [];
  private pumping = false;
  /** Sees every event as it is published while set: a turn requested with `verbose` logs through it. */
  verboseLog: ((entry: HubEntry) => void) | null = null;

  constructor(
    readonly sessionId: string,
    lastSeq: number,
    private readonly persist: ((entry: HubEntry) => void) | null,
    private readonly now: () => number,
    /** Sees every event as it is published (metrics, traces); null when nobody observes. */
    private readonly tap: ((entry: HubEntry) => void) | null = null,
  ) {
    this.nextSeq = lastSeq + 1;
    this.delivered = lastSeq;
    this.committed = lastSeq;
  }

  /** Highest seq handed out so far (persistent realms: possibly not durable yet). */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  /**
   * Highest seq handed to subscribers. Everything at or below it is durable (persistent realms) and
   * everything above it reaches a subscriber that subscribes now, so a new stream starts here.
   */
  get deliveredSeq(): number {
    return this.delivered;
  }

  /**
   * Highest seq committed (persistent realms: durable in the ledger; memory: published), including the
   * entries still being paced out to subscribers. A stream without Last-Event-ID starts after it.
   */
  get committedSeq(): number {
    return this.committed;
  }

  /** True while a large batch is still being handed out slice by slice. */
  get pacing(): boolean {
    return this.pumping;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Nothing would be lost by dropping this hub: no subscriber, no paced backlog, no replay ring. */
  get quiet(): boolean {
    return this.subscribers.size === 0 && this.backlog.length === 0 && this.ring.length === 0 && this.delivered === this.lastSeq;
  }

  /** Sequences an event; delivery happens now (memory) or once durable (persistent). */
  publish<K extends SessionEventKind>(kind: K, payload: SessionEventPayload<K>): HubEntry {
    const entry: HubEntry = { seq: this.nextSeq++, kind, timestamp_ms: this.now(), payload };
    if (this.tap) this.tap(entry);
    if (this.verboseLog) this.verboseLog(entry);
    if (this.persist) this.persist(entry);
    else this.deliver([entry]);
    return entry;
  }

  /** Hands durable (or memory) entries to every live subscriber, in seq order (paced, see header). */
  deliver(entries: HubEntry[]): void {
    for (const e of entries) {
      if (e.seq > this.committed) this.committed = e.seq;
      if (!this.persist) {
        this.ring.push(e);
        if (this.ring.length > RING_SIZE) this.ring.shift();
      }
    }
    if (!this.pumping && entries.length <= DELIVERY_SLICE) {
      this.handOut(entries);
      return;
    }
    for (const e of entries) this.backlog.push(e);
    if (!this.pumping) {
      this.pumping = true;
      this.pump();
    }
  }

  private pump(): void {
    this.handOut(this.backlog.splice(0, DELIVERY_SLICE));
    if (this.backlog.length === 0) {
      this.pumping = false;
      return;
    }
    setImmediate(() => this.pump());
  }

  private handOut(entries: HubEntry[]): void {
    for (const e of entries) {
      this.delivered = e.seq;
      for (const s of this.subscribers) s.push(e);
    }
  }

  /** Retained entries with seq > afterSeq (memory realms only); null when the gap cannot be filled. */
  ringAfter(afterSeq: number): HubEntry[] | null {
    if (afterSeq >= this.committed) return [];
    const first = this.ring[0];
    if (!first || first.seq > afterSeq + 1) return null;
    return this.ring.filter((e) => e.seq > afterSeq);
  }

  /** Adds a live subscriber; the returned function removes it (idempotent). */
  subscribe(s: EventSubscriber): () => void {
    if (!this.subscribers.has(s)) {
      this.subscribers.add(s);
      liveSubscribers++;
    }
    return () => {
      if (this.subscribers.delete(s)) liveSubscribers--;
    };
  }

  closeAll(reason: 'archived' | 'shutdown'): void {
    // Whatever is durable goes out before the streams end.
    if (this.backlog.length) this.handOut(this.backlog.splice(0));
    const all = [...this.subscribers];
    liveSubscribers -= all.length;
    this.subscribers.clear();
    for (const s of all) s.close(reason);
  }
}
