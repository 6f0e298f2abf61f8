// bench/sse-clients.ts: many raw-TCP SSE subscribers for the fan-out scenario. Every client counts event
// frames (`\nevent: ` occurrences, so heartbeats are not counted) with Buffer.indexOf; a sample of the
// clients also parses text_delta frames for the fake LLM's ` t<ns>` stamps and records token-to-client
// latency against process.hrtime (CLOCK_MONOTONIC).
import { connect, type Socket } from 'node:net';
import { Samples } from './stats.ts';

const EVENT = Buffer.from('\nevent: ');
const TRUNCATED = Buffer.from('event: stream_truncated');
const COMPLETED = Buffer.from('event: run_completed');
const FAILED = Buffer.from('event: run_failed');
const STAMP = /"delta":" t(\d+)"/g;

interface Client {
  socket: Socket;
  events: number;
  truncated: number;
  completed: number;
  failed: number;
  /** Last bytes of the previous chunk, so a pattern split across reads is still found. */
  tail: Buffer;
  sampled: boolean;
  text: string;
  ready: boolean;
}

export interface SseFanout {
  /** Sum of event frames seen by all clients. */
  events(): number;
  truncated(): number;
  /** `run_completed` / `run_failed` frames seen by all clients (the inflight scenario's turn ends). */
  completed(): number;
  failed(): number;
  /** Latency samples (ms) since the last reset. */
  latencies(): Float64Array;
  resetLatencies(): void;
  readyCount(): number;
  /** Connections opened again after failing before their first frame (opts.retries). */
  reconnects(): number;
  close(): void;
}

/** Longest pattern counted, less one: the bytes of a chunk kept to find a pattern split across reads. */
const KEEP = Math.max(EVENT.length, TRUNCATED.length, COMPLETED.length, FAILED.length) - 1;

/** Occurrences of `pattern` in `buf` that end after `seen` (the kept tail, already counted). */
function count(buf: Buffer, pattern: Buffer, seen = 0): number {
  let n = 0;
  let at = buf.indexOf(pattern);
  while (at !== -1) {
    if (at + pattern.length > seen) n++;
    at = buf.indexOf(pattern, at + pattern.length);
  }
  return n;
}

/**
 * Opens `n` subscribers to `GET {path}` on host:port and resolves once every one has received its first
 * frame (session_loaded). `path`: one path for all, or the i-th client's path. `sampleEvery`: every k-th
 * client parses stamps for latency.
 */
export async function openFanout(
  host: string,
  port: number,
  path: string | ((i: number) => string),
  n: number,
  sampleEvery: number,
  timeoutMs = 60_000,
  opts: { maxConnecting?: number; retries?: number } = {},
): Promise<SseFanout> {
  const clients: Client[] = [];
  let lat = new Samples();
  let ready = 0;
  let failed: Error | undefined;
  // maxConnecting: at most this many subscribers between connect and their first frame (default: all at
  // once). retries: a subscriber whose connection fails before its first frame is opened again this many times.
  const maxConnecting = opts.maxConnecting ?? n;
  const retries = opts.retries ?? 0;
  let connecting = 0;
  let started = 0;
  let reconnects = 0;
  const requestOf = (p: string) => `GET ${p} HTTP/1.1\r\nHost: ${host}:${port}\r\nAccept: text/event-stream\r\n\r\n`;
  const shared = typeof path === 'string' ? requestOf(path) : '';
  const open = (i: number, attempt: number): void => {
    const request = typeof path === 'string' ? shared : requestOf(path(i));
    const c: Client = {
      socket: connect(port, host),
      events: 0,
      truncated: 0,
      completed: 0,
      failed: 0,
      tail: Buffer.alloc(0),
      sampled: i % sampleEvery === 0,
      text: '',
      ready: false,
    };
    clients[i] = c;
    c.socket.setNoDelay(true);
    c.socket.on('connect', () => c.socket.write(request));
    c.socket.on('error', (err) => {
      if (!c.ready && attempt < retries) {
        reconnects++;
        c.socket.destroy();
        open(i, attempt + 1);
        return;
      }
      failed ??= err;
    });
    c.socket.on('data', (chunk: Buffer) => {
      const now = process.hrtime.bigint();
      const probe = c.tail.length ? Buffer.concat([c.tail, chunk]) : chunk;
      const kept = c.tail.length;
      const seen = count(probe, EVENT, kept);
      c.events += seen;
      c.truncated += count(probe, TRUNCATED, kept);
      c.completed += count(probe, COMPLETED, kept);
      c.failed += count(probe, FAILED, kept);
      c.tail = Buffer.from(probe.subarray(Math.max(0, probe.length - KEEP)));
      if (!c.ready && seen > 0) {
        c.ready = true;
        ready++;
        connecting--;
        more();
      }
      if (c.sampled) {
        c.text += chunk.toString('latin1');
        const end = c.text.lastIndexOf('\n\n');
        if (end >= 0) {
          const complete = c.text.slice(0, end);
          c.text = c.text.slice(end + 2);
          for (const m of complete.matchAll(STAMP)) lat.push(Number(now - BigInt(m[1])) / 1e6);
        }
      }
    });
  };
  const more = (): void => {
    while (started < n && connecting < maxConnecting) {
      connecting++;
      open(started++, 0);
    }
  };
  more();
  const deadline = Date.now() + timeoutMs;
  while (ready < n) {
    if (failed) throw failed;
    if (Date.now() > deadline) throw new Error(`only ${ready} of ${n} SSE subscribers connected`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    events: () => clients.reduce((s, c) => s + c.events, 0),
    truncated: () => clients.reduce((s, c) => s + c.truncated, 0),
    completed: () => clients.reduce((s, c) => s + c.completed, 0),
    failed: () => clients.reduce((s, c) => s + c.failed, 0),
    latencies: () => lat.values(),
    resetLatencies: () => {
      lat = new Samples();
    },
    readyCount: () => ready,
    reconnects: () => reconnects,
    close: () => {
      for (const c of clients) c.socket.destroy();
    },
  };
}
