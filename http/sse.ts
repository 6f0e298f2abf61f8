// http/sse.ts: SSE framing and one live subscriber (http/handlers/events.ts creates them). Frames carry
// `id: <seq>`, `event: <kind>` and one `data:` line (JSON.stringify escapes CR/LF, so a frame never
// needs multi-line data). Every write holds whole frames only.
//
// Drop policy (SPEC.md "Events", "Limits"): each subscriber holds at most SUBSCRIBER_BUFFER (256)
// entries not yet handed to the transport. Entries go out coalesced once per tick, or at once when a
// burst fills the buffer, so a reader that keeps up never loses anything. Only while the transport
// reports backpressure (write() returned false, waiting for onDrain) or a ledger replay is being
// written do entries wait; beyond 256 the OLDEST waiting entry is dropped and counted. When writing
// resumes the client first gets `stream_truncated` {reason: {kind: 'stream_lagged', dropped}} with the
// exact number dropped since the previous marker, then the retained tail in seq order. Memory per
// subscriber is thus bounded by 256 shared frames plus the one chunk the transport holds.
// Transport note: uWS closes a response that makes no write progress for about 10 s (its fixed HTTP
// timeout); http/server-uws.ts pauses a blocked response (which stops that timer) and probes it for
// writability, so on both transports a stalled reader keeps its connection and gets its marker.
import type { Logger } from 'pino';
import type { EventSubscriber, HubEntry } from '../actors/event-hub.ts';
import type { HttpResponder } from './transport.ts';

export const SUBSCRIBER_BUFFER = 256;
const HEARTBEAT_MS = 15_000;

/** @internal Process-wide defaults read when a subscriber is created (tests shorten the heartbeat). */
export const sseDefaults = { heartbeatMs: HEARTBEAT_MS };

export interface SseOptions {
  /** Interval of the `: heartbeat` comment (default sseDefaults.heartbeatMs). */
  heartbeatMs?: number;
  /** Receives a warn line per stream_truncated marker (STYLE.md: SSE drops are logged at warn). */
  log?: Logger;
  /** Told of each stream_truncated marker and how many events it reports dropped (metrics). */
  onTruncated?: (dropped: number) => void;
}

/**
 * An event's id, a UUIDv7 (wire-notes §2.2) derived from the entry alone, so a replay or a ledger read
 * repeats it: the 48-bit timestamp is the event's timestamp_ms; the random bits are 34 bits of the
 * session id and the seq (40 bits), so ids are unique within a session and practically across sessions.
 */
function eventIdOf(sessionId: string, e: HubEntry): string {
  const ts = Math.max(0, Math.floor(e.timestamp_ms)).toString(16).padStart(12, '0').slice(-12);
  const sid = sessionId.replace(/-/g, '');
  const variant = (8 | (Number.parseInt(sid[3] ?? '0', 16) & 3)).toString(16);
  const seq = (e.seq % 2 ** 40).toString(16).padStart(10, '0');
  return `${ts.slice(0, 8)}-${ts.slice(8)}-7${sid.slice(0, 3)}-${variant}${sid.slice(4, 7)}-${sid.slice(7, 9)}${seq}`;
}

/** The envelope of wire-notes §2.2 (`data:` of a frame, and a row of the ledger route). */
export function envelopeOf(sessionId: string, e: HubEntry): Record<string, unknown> {
  const payload = { type: e.kind, ...(e.payload as Record<string, unknown>) };
  return {
    event_id: eventIdOf(sessionId, e),
    source: { type: 'session', session_id: sessionId },
    seq: e.seq,
    timestamp_ms: e.timestamp_ms,
    payload,
  };
}

/**
 * What every frame of one session shares: the session-derived middle of its event ids and the JSON of its
 * `source` member. Built once per subscriber, so a frame costs no per-event work on the session id.
 */
export interface FrameParts {
  sessionId: string;
  /** `-7xxx-vxxx-xx` of eventIdOf (everything between the timestamp and the seq), as JSON string content. */
  idMiddle: string;
  sourceJson: string;
}

export function frameParts(sessionId: string): FrameParts {
  const sid = sessionId.replace(/-/g, '');
  const variant = (8 | (Number.parseInt(sid[3] ?? '0', 16) & 3)).toString(16);
  return {
    sessionId,
    // JSON-escaped here, so the id needs no escaping in envelopeJson (the rest of it is hex digits and dashes).
    idMiddle: JSON.stringify(`-7${sid.slice(0, 3)}-${variant}${sid.slice(4, 7)}-${sid.slice(7, 9)}`).slice(1, -1),
    sourceJson: JSON.stringify({ type: 'session', session_id: sessionId }),
  };
}

const ZEROS = '000000000000';
const kindJson = new Map<string, string>();

/**
 * JSON.stringify(envelopeOf(sessionId, e)) without building the envelope, its payload copy or the id's
 * pieces: the same bytes, by string concatenation. Entries whose payload JSON.stringify could order or
 * render differently once copied under `type` (a `type` or integer-like key, toJSON, a non-plain object),
 * or whose seq/timestamp are not plain integers, take the envelope path instead.
 */
export function envelopeJson(parts: FrameParts, e: HubEntry): string {
  const { seq, timestamp_ms: ts, payload } = e;
  if (!Number.isSafeInteger(seq) || seq < 0 || !Number.isSafeInteger(ts) || ts < 0 || !fastPayload(payload))
    return JSON.stringify(envelopeOf(parts.sessionId, e));
  const tsHex = ts.toString(16);
  const t = tsHex.length >= 12 ? tsHex.slice(-12) : ZEROS.slice(tsHex.length) + tsHex;
  const seqHex = (seq % 2 ** 40).toString(16);
  const id = `${t.slice(0, 8)}-${t.slice(8)}${parts.idMiddle}${ZEROS.slice(seqHex.length + 2)}${seqHex}`;
  let k = kindJson.get(e.kind);
  if (k === undefined) {
    k = JSON.stringify(e.kind);
    if (kindJson.size < 1024) kindJson.set(e.kind, k);
  }
  const body = payload === undefined || payload === null ? '{}' : JSON.stringify(payload);
  const p = body === '{}' ? `{"type":${k}}` : `{"type":${k},${body.slice(1)}`;
  return `{"event_id":"${id}","source":${parts.sourceJson},"seq":${seq},"timestamp_ms":${ts},"payload":${p}}`;
}

/** A payload whose spread under `type` keeps its own JSON text after `"type":…,` (see envelopeJson). */
function fastPayload(payload: unknown): boolean {
  if (payload === undefined || payload === null) return true;
  if (typeof payload !== 'object' || Array.isArray(payload)) return false;
  const proto: unknown = Object.getPrototypeOf(payload);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in payload) {
    const c = key.charCodeAt(0);
    // Integer-like keys sort before `type` in the spread copy; a `type` key would replace it; toJSON would run on the copy.
    if ((c >= 48 && c <= 57) || key === 'type' || key === 'toJSON') return false;
  }
  return true;
}

/** The SSE frame of an entry, serialized once and shared by every subscriber. */
function frameOf(parts: FrameParts, e: HubEntry): string {
  if (e.frame === undefined) e.frame = `id: ${e.seq}\nevent: ${e.kind}\ndata: ${envelopeJson(parts, e)}\n\n`;
  return e.frame;
}

/** A frame without an id (not part of the ledger sequence). */
export function controlFrame(kind: string, data: unknown): string {
  return `event: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The `stream_truncated` control frame with its reason. */
export function truncatedFrame(reason: Record<string, unknown>): string {
  return controlFrame('stream_truncated', { type: 'stream_truncated', reason });
}

/**
 * Subscribers with entries waiting for their once-per-tick write: one setImmediate for all of them rather
 * than one (and a closure) per subscriber per tick. Each is written in the order it was scheduled.
 */
let flushQueue: SseSubscriber[] = [];
let flushScheduled = false;

function scheduleFlush(s: SseSubscriber): void {
  flushQueue.push(s);
  if (flushScheduled) return;
  flushScheduled = true;
  setImmediate(runFlushes);
}

function runFlushes(): void {
  flushScheduled = false;
  const queue = flushQueue;
  flushQueue = [];
  let failure: unknown = null;
  for (const s of queue) {
    // One subscriber's failure must not leave the others waiting; it is rethrown once they are written.
    try {
      s.scheduledFlush();
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure !== null) throw failure;
}

// Written on a drain that has nothing else to send: uWS does not flush its own buffered bytes when an
// onWritable handler is registered and writes nothing, so an SSE comment pushes them out.
const KICK = ':\n\n';

export class SseSubscriber implements EventSubscriber {
  private pending: HubEntry[] = [];
  private dropped = 0;
  /** The transport reported backpressure; nothing is written until onDrain. */
  private blocked = false;
  /** A ledger replay is being written; live entries wait (bounded like backpressure). */
  private replaying = false;
  private scheduled = false;
  private ended = false;
  private lastSentSeq: number;
  /** Live entries at or below it are ignored: the stream's start (or its replay) covers them. */
  private liveFloor = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private drainWaiters: Array<() => void> = [];
  private wroteSinceDrain = false;
  /** Total events dropped for lag over the subscription's life. */
  droppedTotal = 0;
  private readonly log: Logger | undefined;
  private readonly onTruncated: ((dropped: number) => void) | undefined;
  private readonly parts: FrameParts;

  constructor(
    private readonly sessionId: string,
    private readonly res: HttpResponder,
    afterSeq: number,
    onGone: () => void,
    opts: SseOptions = {},
  ) {
    this.lastSentSeq = afterSeq;
    this.parts = frameParts(sessionId);
    this.log = opts.log;
    this.onTruncated = opts.onTruncated;
    res.onDrain(() => this.onDrain());
    res.onAbort(() => {
      this.dispose();
      onGone();
    });
    this.heartbeat = setInterval(() => {
      if (!this.blocked && !this.ended) this.write(': heartbeat\n\n');
    }, opts.heartbeatMs ?? sseDefaults.heartbeatMs);
    this.heartbeat.unref();
  }

  /**
   * Live entries with seq <= `seq` are ignored: they were committed before the stream opened (a hub may
   * still be pacing them out), so the stream either skips them or replays them from the ledger.
   */
  ignoreLiveUpTo(seq: number): void {
    this.liveFloor = seq;
  }

  /** Live entries wait (bounded, with the drop policy) until endReplay(). */
  beginReplay(): void {
    this.replaying = true;
  }

  /** Writes replayed entries with seq > the last one sent; resolves when the connection can take more. */
  async replay(entries: HubEntry[]): Promise<void> {
    let chunk = '';
    for (const e of entries) {
      if (e.seq <= this.lastSentSeq) continue;
      chunk += frameOf(this.parts, e);
      this.lastSentSeq = e.seq;
    }
    if (chunk) await this.writeAndWait(chunk);
  }

  /** Writes a control frame (session_loaded, stream_truncated for replay gaps). */
  async control(kind: string, data: unknown): Promise<void> {
    await this.writeAndWait(controlFrame(kind, data));
  }

  /** Moves the live cursor (a replay that cannot be served continues live from `seq`). */
  skipTo(seq: number): void {
    this.lastSentSeq = seq;
  }

  /**
   * During a replay: the seq range of live entries dropped from the full buffer since the last call, or
   * null. A persistent realm re-reads that range from the ledger, so a reconnect stays lossless.
   */
  takeReplayGap(): { from: number; to: number } | null {
    if (this.dropped === 0 || this.pending.length === 0) return null;
    // Entries arrive contiguously and the oldest are dropped: the gap ends just before the buffer.
    const gap = { from: this.lastSentSeq + 1, to: this.pending[0].seq - 1 };
    this.droppedTotal -= this.dropped;
    this.dropped = 0;
    return gap;
  }

  /** Ends the replay phase: waiting live entries (all after the replayed range) go out. */
  endReplay(): void {
    this.replaying = false;
    this.flush();
  }

  push(entry: HubEntry): void {
    if (this.ended || entry.seq <= this.lastSentSeq || entry.seq <= this.liveFloor) return;
    this.pending.push(entry);
    if (this.pending.length > SUBSCRIBER_BUFFER) {
      this.pending.shift();
      this.dropped++;
      this.droppedTotal++;
    }
    if (this.blocked || this.replaying) return;
    // A burst that fills the buffer goes out now: only a reader that is actually behind loses entries.
    if (this.pending.length >= SUBSCRIBER_BUFFER) {
      this.flush();
      return;
    }
    if (!this.scheduled) {
      this.scheduled = true;
      scheduleFlush(this);
    }
  }

  /** @internal The coalesced once-per-tick write scheduled by push() (runFlushes). */
  scheduledFlush(): void {
    this.scheduled = false;
    this.flush();
  }

  close(_reason: 'archived' | 'shutdown'): void {
    if (this.ended) return;
    // The tail goes out even under backpressure (bounded by the buffer), unless a replay is still
    // being written: sending later entries first would make the client's Last-Event-ID skip a gap.
    const chunk = (this.replaying ? '' : this.takePending()) + controlFrame('done', {});
    this.dispose();
    this.res.write(chunk);
    this.res.end();
  }

  /** Stops the heartbeat, frees the buffer and releases a pending replay write. */
  private dispose(): void {
    this.ended = true;
    clearInterval(this.heartbeat);
    this.pending = [];
    this.wakeWaiters();
  }

  private onDrain(): void {
    if (this.ended) return;
    this.blocked = false;
    this.wroteSinceDrain = false;
    this.wakeWaiters();
    this.flush();
    if (!this.wroteSinceDrain && !this.blocked) this.write(KICK);
  }

  private flush(): void {
    if (this.blocked || this.replaying || this.ended) return;
    const chunk = this.takePending();
    if (chunk) this.write(chunk);
  }

  /** The truncation marker (if any) plus every waiting frame not yet sent; empties the buffer. */
  private takePending(): string {
    let chunk = '';
    if (this.dropped > 0) {
      chunk += truncatedFrame({ kind: 'stream_lagged', dropped: this.dropped });
      this.log?.warn(
        { sessionId: this.sessionId, dropped: this.dropped, droppedTotal: this.droppedTotal },
        'sse subscriber lagged; events dropped',
      );
      this.onTruncated?.(this.dropped);
      this.dropped = 0;
    }
    for (const e of this.pending) {
      if (e.seq <= this.lastSentSeq) continue;
      chunk += frameOf(this.parts, e);
      this.lastSentSeq = e.seq;
    }
    this.pending.length = 0;
    return chunk;
  }

  private write(chunk: string): void {
    this.wroteSinceDrain = true;
    if (!this.res.write(chunk)) this.blocked = true;
  }

  private async writeAndWait(chunk: string): Promise<void> {
    while (this.blocked && !this.ended) await this.drained();
    if (this.ended) return;
    this.write(chunk);
    while (this.blocked && !this.ended) await this.drained();
  }

  private drained(): Promise<void> {
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private wakeWaiters(): void {
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const w of waiters) w();
  }
}
