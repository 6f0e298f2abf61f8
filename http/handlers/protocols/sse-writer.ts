// http/handlers/protocols/sse-writer.ts: the SSE side of a protocol stream (OpenAI Responses, LangGraph,
// AG-UI, A2A): whole frames only, waits for the transport to drain when it reports backpressure, and a
// `: heartbeat` comment while the stream is idle so proxies keep the connection.
import type { HttpResponder } from '../../transport.ts';

export class SseWriter {
  private drained: (() => void) | null = null;
  private heartbeat: NodeJS.Timeout | null = null;

  constructor(
    private readonly res: HttpResponder,
    heartbeatMs = 15_000,
    headers: Record<string, string> = {},
  ) {
    res.startStream(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', 'x-accel-buffering': 'no', ...headers });
    res.onDrain(() => {
      const d = this.drained;
      this.drained = null;
      d?.();
    });
    res.onAbort(() => {
      const d = this.drained;
      this.drained = null;
      d?.();
      this.stopHeartbeat();
    });
    this.heartbeat = setInterval(() => {
      if (!this.drained && !res.aborted) res.write(': heartbeat\n\n');
    }, heartbeatMs);
    this.heartbeat.unref();
  }

  get aborted(): boolean {
    return this.res.aborted;
  }

  /** Writes one frame: `event:` (optional), `id:` (optional) and one JSON `data:` line. */
  async frame(data: unknown, opts: { event?: string; id?: string } = {}): Promise<void> {
    if (this.res.aborted) return;
    const text = `${opts.id !== undefined ? `id: ${opts.id}\n` : ''}${opts.event ? `event: ${opts.event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
    if (!this.res.write(text) && !this.res.aborted) await new Promise<void>((resolve) => (this.drained = resolve));
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  end(): void {
    this.stopHeartbeat();
    if (!this.res.aborted) this.res.end();
  }
}
