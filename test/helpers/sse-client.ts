// test/helpers/sse-client.ts: a small real SSE client over node:net for the event-stream tests. It
// speaks HTTP/1.1 by hand (GET; chunked, content-length or close-delimited bodies), parses `id:`,
// `event:`, `data:` frames and `:` comments incrementally as bytes arrive, and can stop reading from its
// socket (pause) so that server-side backpressure is real kernel backpressure.
import assert from 'node:assert/strict';
import net from 'node:net';
import { StringDecoder } from 'node:string_decoder';

/** One dispatched SSE frame. `id` is absent for frames without an `id:` field. */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/** The data of a frame that carries a session event envelope (wire-notes §2.2). */
export interface Envelope {
  event_id: string;
  source: { type: string; session_id: string };
  seq: number;
  timestamp_ms: number;
  payload: { type: string; [k: string]: unknown };
}

interface Waiter {
  check(): boolean;
  resolve(): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

export class SseClient {
  status = 0;
  headers: Record<string, string> = {};
  /** Body text of a non-SSE response (e.g. a JSON error envelope). */
  body = '';
  readonly frames: SseFrame[] = [];
  readonly comments: string[] = [];
  /** The response body ended (terminating chunk, content-length reached, or socket closed). */
  ended = false;
  /** Body bytes received (after HTTP framing). */
  bodyBytes = 0;
  readonly closed: Promise<void>;

  private raw: Buffer = Buffer.alloc(0);
  private headDone = false;
  private chunked = false;
  private remaining = -1; // content-length left, -1 = unknown
  private chunkLeft = 0; // bytes left in the current chunk (+2 for its CRLF once started)
  private readonly decoder = new StringDecoder('utf8');
  /** Pieces of the current incomplete line (a long data line arrives in many reads; join once). */
  private partial: string[] = [];
  private field: { id?: string; event?: string; data: string[] } = { data: [] };
  private waiters: Waiter[] = [];
  private onHead: (() => void) | null = null;

  constructor(private readonly socket: net.Socket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (b: Buffer) => this.receive(b));
    socket.on('error', () => {});
    socket.on('close', () => this.finish());
  }

  /** Opens GET `path` on `base`; resolves once the status line and headers have arrived. */
  static open(base: string, path: string, headers: Record<string, string> = {}): Promise<SseClient> {
    const url = new URL(base);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname);
      const client = new SseClient(socket);
      const fail = (err: Error): void => reject(err);
      socket.once('error', fail);
      client.onHead = () => {
        socket.off('error', fail);
        resolve(client);
      };
      socket.once('close', () => reject(new Error(`connection closed before a response to GET ${path}`)));
      const lines = [`GET ${path} HTTP/1.1`, `Host: ${url.host}`, 'Accept: text/event-stream'];
      for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
  }

  /** Frames that carry an `id:` (session events), parsed. */
  envelopes(): Envelope[] {
    return this.frames.filter((f) => f.id !== undefined).map((f) => JSON.parse(f.data) as Envelope);
  }

  /** Stops reading from the socket: the kernel buffers fill and the server sees backpressure. */
  pause(): void {
    this.socket.pause();
  }

  resume(): void {
    this.socket.resume();
  }

  /** Closes the connection from the client side. */
  close(): void {
    this.socket.destroy();
  }

  /**
   * Resolves once `pred` holds; re-checked after every frame, comment and the end of the body.
   * Rejects when the body ends first or after `timeoutMs` (a guard against hangs, not a sleep).
   */
  until(pred: (c: SseClient) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
    if (pred(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        check: () => pred(this),
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(new Error(`timed out waiting for ${what}; got ${this.frames.length} frames, last: ${this.frames.at(-1)?.event ?? '-'}`));
        }, timeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves once a frame of this kind has arrived; returns the first such frame. */
  async untilEvent(kind: string, timeoutMs?: number): Promise<SseFrame> {
    await this.until((c) => c.frames.some((f) => f.event === kind), `event '${kind}'`, timeoutMs);
    return this.frames.find((f) => f.event === kind)!;
  }

  private receive(b: Buffer): void {
    if (!this.headDone) {
      this.raw = this.raw.length ? Buffer.concat([this.raw, b]) : b;
      const end = this.raw.indexOf('\r\n\r\n');
      if (end < 0) return;
      this.parseHead(this.raw.subarray(0, end).toString('latin1'));
      const rest = this.raw.subarray(end + 4);
      this.raw = Buffer.alloc(0);
      this.headDone = true;
      this.onHead?.();
      this.onHead = null;
      if (this.remaining === 0) this.finish();
      if (rest.length) this.receive(rest);
      return;
    }
    if (!this.chunked) {
      const take = this.remaining >= 0 ? b.subarray(0, this.remaining) : b;
      this.bodyData(take);
      if (this.remaining >= 0) {
        this.remaining -= take.length;
        if (this.remaining === 0) this.finish();
      }
      return;
    }
    this.raw = this.raw.length ? Buffer.concat([this.raw, b]) : b;
    this.dechunk();
  }

  private parseHead(head: string): void {
    const [statusLine, ...lines] = head.split('\r\n');
    this.status = Number(statusLine.split(' ')[1]);
    for (const line of lines) {
      const colon = line.indexOf(':');
      this.headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    this.chunked = /chunked/i.test(this.headers['transfer-encoding'] ?? '');
    if (!this.chunked && this.headers['content-length'] !== undefined) this.remaining = Number(this.headers['content-length']);
  }

  private dechunk(): void {
    let pos = 0;
    const raw = this.raw;
    while (pos < raw.length) {
      if (this.chunkLeft === 0) {
        const eol = raw.indexOf('\r\n', pos);
        if (eol < 0) break;
        const size = Number.parseInt(raw.subarray(pos, eol).toString('latin1'), 16);
        pos = eol + 2;
        if (size === 0) {
          this.raw = Buffer.alloc(0);
          this.finish();
          return;
        }
        this.chunkLeft = size + 2;
        continue;
      }
      const take = Math.min(this.chunkLeft, raw.length - pos);
      const dataLeft = Math.max(0, this.chunkLeft - 2);
      this.bodyData(raw.subarray(pos, pos + Math.min(take, dataLeft)));
      this.chunkLeft -= take;
      pos += take;
    }
    this.raw = pos >= raw.length ? Buffer.alloc(0) : raw.subarray(pos);
  }

  private bodyData(b: Buffer): void {
    if (b.length === 0) return;
    this.bodyBytes += b.length;
    const s = this.decoder.write(b);
    if (this.status !== 200) {
      this.body += s;
      return;
    }
    let start = 0;
    let nl: number;
    while ((nl = s.indexOf('\n', start)) >= 0) {
      let line = s.slice(start, nl);
      if (this.partial.length) {
        this.partial.push(line);
        line = this.partial.join('');
        this.partial = [];
      }
      this.line(line.endsWith('\r') ? line.slice(0, -1) : line);
      start = nl + 1;
    }
    if (start < s.length) this.partial.push(s.slice(start));
    this.notify();
  }

  private line(line: string): void {
    if (line === '') {
      const f = this.field;
      if (f.data.length > 0 || f.event !== undefined || f.id !== undefined) {
        this.frames.push({ ...(f.id !== undefined ? { id: f.id } : {}), event: f.event ?? 'message', data: f.data.join('\n') });
      }
      this.field = { data: [] };
      return;
    }
    if (line.startsWith(':')) {
      this.comments.push(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') this.field.data.push(value);
    else if (name === 'event') this.field.event = value;
    else if (name === 'id') this.field.id = value;
  }

  private finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.notify();
    for (const w of this.waiters) {
      clearTimeout(w.timer);
      w.reject(new Error(`stream ended; got ${this.frames.length} frames, last: ${this.frames.at(-1)?.event ?? '-'}`));
    }
    this.waiters = [];
  }

  private notify(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.check()) {
        clearTimeout(w.timer);
        w.resolve();
      } else still.push(w);
    }
    this.waiters = still;
  }
}

/** The seqs of a run of envelopes. */
export function seqsOf(envs: Envelope[]): number[] {
  return envs.map((e) => e.seq);
}

/** [from, from+1, ..., to]. */
export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}

/** Opens GET /sessions/{id}/events and waits for its first frame (`session_loaded`). */
export async function openEvents(base: string, sessionId: string, headers: Record<string, string> = {}, query = ''): Promise<SseClient> {
  const c = await SseClient.open(base, `/sessions/${sessionId}/events${query}`, headers);
  if (c.status !== 200) throw new Error(`GET events answered ${c.status}: ${c.body}`);
  await c.untilEvent('session_loaded');
  return c;
}

/** The payload types of a run of envelopes. */
export function kindsOf(envs: Envelope[]): string[] {
  return envs.map((e) => e.payload.type);
}

/** What a lagging stream delivered (walkLagged). */
export interface LaggedWalk {
  received: number;
  dropped: number;
  markers: number;
  /** Events after the last marker. */
  tail: number;
}

/**
 * Walks a stream's frames after session_loaded, asserting as it goes: each event carries the expected
 * seq, and each stream_truncated {stream_lagged} marker skips exactly the `dropped` it reports.
 */
export function walkLagged(c: SseClient, firstSeq: number): LaggedWalk {
  let expected = firstSeq;
  const w: LaggedWalk = { received: 0, dropped: 0, markers: 0, tail: 0 };
  for (const f of c.frames.slice(1)) {
    if (f.id === undefined) {
      assert.equal(f.event, 'stream_truncated', `unexpected control frame ${f.event}`);
      const data = JSON.parse(f.data);
      assert.equal(data.reason.kind, 'stream_lagged');
      assert.ok(Number.isInteger(data.reason.dropped) && data.reason.dropped > 0);
      expected += data.reason.dropped;
      w.dropped += data.reason.dropped;
      w.markers++;
      w.tail = 0;
      continue;
    }
    assert.equal((JSON.parse(f.data) as Envelope).seq, expected, 'seq continuity (a marker accounts for every gap)');
    expected++;
    w.received++;
    w.tail++;
  }
  return w;
}
