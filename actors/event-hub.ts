// actors/event-hub.ts: one session's event sequence and live fan-out. Every event gets the next
// per-session seq; persistent realms deliver an event to subscribers only after the session writer
// made it durable in the ledger (so a replay after reconnect never misses what a client saw live).
// Memory realms deliver at once and keep a 256-entry ring for short reconnect gaps.
import type { LedgerEntry } from '../storage/store.ts';

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

export const RING_SIZE = 256;

export class EventHub {
  private nextSeq: number;
  private readonly subscribers = new Set<EventSubscriber>();
  private readonly ring: HubEntry[] = [];

  constructor(
    readonly sessionId: string,
    lastSeq: number,
    private readonly persist: ((entry: HubEntry) => void) | null,
    private readonly now: () => number,
  ) {
    this.nextSeq = lastSeq + 1;
  }

  /** Highest seq handed out so far. */
  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Sequences an event; delivery happens now (memory) or once durable (persistent). */
  publish(kind: string, payload: unknown): HubEntry {
    const entry: HubEntry = { seq: this.nextSeq++, kind, timestamp_ms: this.now(), payload };
    if (this.persist) this.persist(entry);
    else this.deliver([entry]);
    return entry;
  }

  /** Hands durable (or memory) entries to every live subscriber, in seq order. */
  deliver(entries: HubEntry[]): void {
    for (const e of entries) {
      if (!this.persist) {
        this.ring.push(e);
        if (this.ring.length > RING_SIZE) this.ring.shift();
      }
      for (const s of this.subscribers) s.push(e);
    }
  }

  /** Retained entries with seq > afterSeq (memory realms only); null when the gap cannot be filled. */
  ringAfter(afterSeq: number): HubEntry[] | null {
    if (afterSeq >= this.lastSeq) return [];
    const first = this.ring[0];
    if (!first || first.seq > afterSeq + 1) return null;
    return this.ring.filter((e) => e.seq > afterSeq);
  }

  subscribe(s: EventSubscriber): () => void {
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  closeAll(reason: 'archived' | 'shutdown'): void {
    for (const s of [...this.subscribers]) s.close(reason);
    this.subscribers.clear();
  }
}
