// http/sse.ts: SSE framing and one live subscriber. Frames carry `id: <seq>`, `event: <kind>` and one
// `data:` line (JSON has no raw newlines). Each subscriber keeps a bounded best-effort buffer of 256
// entries: while the connection is backpressured, new events queue there and the OLDEST are dropped
// beyond 256; when the client catches up it first receives `stream_truncated` {reason: {kind:
// 'stream_lagged', dropped}} with the exact count, then the retained tail. Writes are coalesced per tick.
import type { EventSubscriber, HubEntry } from '../actors/event-hub.ts';
import type { HttpResponder } from './transport.ts';

export const SUBSCRIBER_BUFFER = 256;
export const HEARTBEAT_MS = 15_000;

/** The envelope of wire-notes §2.2 (`data:` of a frame, and a row of the ledger route). */
export function envelopeOf(sessionId: string, e: HubEntry): Record<string, unknown> {
  const payload = { type: e.kind, ...(e.payload as Record<string, unknown>) };
  return { event_id: `${sessionId}:${e.seq}`, source: { type: 'session', session_id: sessionId }, seq: e.seq, timestamp_ms: e.timestamp_ms, payload };
}

/** The SSE frame of an entry, serialized once and shared by every subscriber. */
export function frameOf(sessionId: string, e: HubEntry): string {
  if (e.frame === undefined) e.frame = `id: ${e.seq}\nevent: ${e.kind}\ndata: ${JSON.stringify(envelopeOf(sessionId, e))}\n\n`;
  return e.frame;
}

/** A frame without an id (not part of the ledger sequence). */
export function controlFrame(kind: string, data: unknown): string {
  return `event: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}

export class SseSubscriber implements EventSubscriber {
  private pending: HubEntry[] = [];
  private dropped = 0;
  private blocked = false;
  private scheduled = false;
  private holding = false;
  private held: HubEntry[] = [];
  private lastSentSeq: number;
  private readonly heartbeat: NodeJS.Timeout;
  private ended = false;
  private drainWaiters: Array<() => void> = [];
  /** Total events dropped for lag over the subscription's life. */
  droppedTotal = 0;

  constructor(private readonly sessionId: string, private readonly res: HttpResponder, afterSeq: number, onGone: () => void) {
    this.lastSentSeq = afterSeq;
    res.onDrain(() => {
      this.blocked = false;
      this.wakeWaiters();
      this.flush();
    });
    res.onAbort(() => {
      this.ended = true;
      this.wakeWaiters();
      clearInterval(this.heartbeat);
      onGone();
    });
    this.heartbeat = setInterval(() => {
      if (!this.blocked && !this.ended) this.blocked = !res.write(': heartbeat\n\n');
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** While replaying from the ledger, live entries are held (unbounded only for the replay's duration). */
  holdLive(): void {
    this.holding = true;
  }

  /** Writes replayed entries directly; resolves when the connection can take more. */
  async replay(entries: HubEntry[]): Promise<void> {
    let chunk = '';
    for (const e of entries) {
      if (e.seq <= this.lastSentSeq) continue;
      chunk += frameOf(this.sessionId, e);
      this.lastSentSeq = e.seq;
    }
    if (chunk) await this.writeAndWait(chunk);
  }

  /** Writes a control frame (session_loaded, stream_truncated for replay gaps). */
  async control(kind: string, data: unknown): Promise<void> {
    await this.writeAndWait(controlFrame(kind, data));
  }

  /** Ends the replay phase: held live entries after the replayed tail are queued normally. */
  releaseLive(): void {
    this.holding = false;
    const held = this.held;
    this.held = [];
    for (const e of held) this.push(e);
  }

  push(entry: HubEntry): void {
    if (this.ended) return;
    if (this.holding) {
      this.held.push(entry);
      return;
    }
    if (entry.seq <= this.lastSentSeq) return;
    this.pending.push(entry);
    if (this.pending.length > SUBSCRIBER_BUFFER) {
      this.pending.shift();
      this.dropped++;
      this.droppedTotal++;
    }
    if (!this.scheduled && !this.blocked) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  close(_reason: 'archived' | 'shutdown'): void {
    if (this.ended) return;
    this.flush();
    this.ended = true;
    clearInterval(this.heartbeat);
    this.res.write(controlFrame('done', {}));
    this.res.end();
  }

  private flush(): void {
    if (this.blocked || this.ended || (this.pending.length === 0 && this.dropped === 0)) return;
    let chunk = '';
    if (this.dropped > 0) {
      chunk += controlFrame('stream_truncated', { type: 'stream_truncated', reason: { kind: 'stream_lagged', dropped: this.dropped } });
      this.dropped = 0;
    }
    for (const e of this.pending) chunk += frameOf(this.sessionId, e);
    const last = this.pending[this.pending.length - 1];
    if (last) this.lastSentSeq = last.seq;
    this.pending = [];
    this.blocked = !this.res.write(chunk);
  }

  private writeAndWait(chunk: string): Promise<void> {
    if (this.ended) return Promise.resolve();
    if (this.res.write(chunk)) return Promise.resolve();
    this.blocked = true;
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private wakeWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
