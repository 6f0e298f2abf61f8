// client/src/sse.ts: a Server-Sent Events reader over fetch. Parses frames incrementally (id, event,
// multi-line data, comments; LF, CRLF or CR line ends), and reconnects when the connection drops,
// sending `Last-Event-ID` with the last id seen so Warren replays what was missed. A `done` frame ends
// the stream; an HTTP error answer is thrown as a WarrenError (never retried).
import { errorFromResponse } from './errors.ts';

/** One dispatched frame. */
export interface SseFrame {
  id?: string;
  event: string;
  data: string;
}

/** Incremental frame parser (the WHATWG event-stream rules, minus `retry:`). */
export class SseParser {
  private buffer = '';
  private id: string | undefined;
  private event = '';
  private data: string[] = [];
  private hasData = false;

  /** Feeds decoded text; returns the frames completed by it. */
  push(text: string): SseFrame[] {
    this.buffer += text;
    const out: SseFrame[] = [];
    for (;;) {
      const m = /\r\n|\n|\r/.exec(this.buffer);
      // A lone CR at the end may be the first half of CRLF: wait for more.
      if (!m || (m[0] === '\r' && m.index === this.buffer.length - 1)) break;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      this.line(line, out);
    }
    return out;
  }

  private line(line: string, out: SseFrame[]): void {
    if (line === '') {
      if (this.hasData || this.event) {
        const frame: SseFrame = { event: this.event || 'message', data: this.data.join('\n') };
        if (this.id !== undefined) frame.id = this.id;
        out.push(frame);
      }
      this.id = undefined;
      this.event = '';
      this.data = [];
      this.hasData = false;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'event') this.event = value;
    else if (field === 'id' && !value.includes('\0')) this.id = value;
  }
}

export interface SseOptions {
  fetch?: typeof fetch;
  signal?: AbortSignal;
  headers?: Record<string, string>;
  /** Resume after this event id (sent as Last-Event-ID on the first connection too). */
  lastEventId?: string;
  /** Reconnects in a row without receiving a frame before giving up (default 5). */
  maxReconnects?: number;
  /** Wait before a reconnect, doubled per failed attempt (default 100 ms). */
  reconnectDelayMs?: number;
}

/** Frames of `url`, across reconnects, until `done`, the signal aborts, or reconnecting fails. */
export async function* sseFrames(url: string, opts: SseOptions = {}): AsyncGenerator<SseFrame & { connection: number }> {
  const doFetch = opts.fetch ?? fetch;
  const maxReconnects = opts.maxReconnects ?? 5;
  let lastId = opts.lastEventId;
  let failures = 0;
  for (let connection = 0; ; connection++) {
    let res: Response;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream', ...opts.headers };
      if (lastId !== undefined) headers['last-event-id'] = lastId;
      res = await doFetch(url, { headers, signal: opts.signal });
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (++failures > maxReconnects) throw err;
      await pause((opts.reconnectDelayMs ?? 100) * 2 ** (failures - 1), opts.signal);
      continue;
    }
    if (!res.ok || !res.body) throw errorFromResponse(res.status, await res.text(), res.headers.get('x-request-id') ?? undefined);
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const reader = res.body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const frame of parser.push(decoder.decode(value, { stream: true }))) {
          failures = 0;
          if (frame.id !== undefined) lastId = frame.id;
          yield { ...frame, connection };
          if (frame.event === 'done') return;
        }
      }
    } catch (err) {
      if (opts.signal?.aborted) return;
      if (failures >= maxReconnects) throw err;
    } finally {
      reader.releaseLock();
      await res.body.cancel().catch(() => undefined);
    }
    if (opts.signal?.aborted) return;
    if (++failures > maxReconnects) throw new Error(`event stream ${url} kept closing without a frame`);
    await pause((opts.reconnectDelayMs ?? 100) * 2 ** (failures - 1), opts.signal);
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
