// http/mob-stream.ts: one SSE connection of the mob surfaces (GET /mob/{id}/events, GET
// /toolkit/mob_events/stream). Frames are `id:` (structural events: the ledger cursor, so a client
// resumes with Last-Event-ID), `event:` and one `data:` line. Same drop policy as the session stream:
// while the transport reports backpressure at most 256 frames wait; older ones are dropped and the
// client first gets `stream_truncated` {reason: {kind: 'stream_lagged', dropped}} when writing resumes
// (a structural-event client then resumes from its last cursor to fill the gap).
import { controlFrame, sseDefaults, SUBSCRIBER_BUFFER, truncatedFrame } from './sse.ts';
import type { HttpResponder } from './transport.ts';

export class MobStream {
  private pending: string[] = [];
  private dropped = 0;
  private blocked = false;
  private ended = false;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly cleanups: Array<() => void> = [];

  constructor(private readonly res: HttpResponder) {
    res.startStream(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
    res.onDrain(() => {
      this.blocked = false;
      this.flush();
    });
    res.onAbort(() => this.dispose());
    this.heartbeat = setInterval(() => {
      if (!this.blocked && !this.ended) this.write(': heartbeat\n\n');
    }, sseDefaults.heartbeatMs);
    this.heartbeat.unref();
  }

  get closed(): boolean {
    return this.ended || this.res.aborted;
  }

  /** Runs `fn` when the stream ends (client gone or closed). */
  onEnd(fn: () => void): void {
    if (this.ended) fn();
    else this.cleanups.push(fn);
  }

  send(kind: string, data: unknown, id?: number | string): void {
    if (this.ended) return;
    const frame = id === undefined ? controlFrame(kind, data) : `id: ${id}\nevent: ${kind}\ndata: ${JSON.stringify(data)}\n\n`;
    if (this.blocked) {
      this.pending.push(frame);
      if (this.pending.length > SUBSCRIBER_BUFFER) {
        this.pending.shift();
        this.dropped++;
      }
      return;
    }
    this.write(frame);
  }

  close(): void {
    if (this.ended) return;
    const tail = this.take() + controlFrame('done', {});
    this.dispose();
    this.res.write(tail);
    this.res.end();
  }

  private flush(): void {
    const chunk = this.take();
    if (chunk) this.write(chunk);
  }

  private take(): string {
    let chunk = this.dropped > 0 ? truncatedFrame({ kind: 'stream_lagged', dropped: this.dropped }) : '';
    this.dropped = 0;
    chunk += this.pending.join('');
    this.pending = [];
    return chunk;
  }

  private write(chunk: string): void {
    if (!this.res.write(chunk)) this.blocked = true;
  }

  private dispose(): void {
    if (this.ended) return;
    this.ended = true;
    clearInterval(this.heartbeat);
    this.pending = [];
    for (const fn of this.cleanups.splice(0)) fn();
  }
}
