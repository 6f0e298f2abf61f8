// test/providers/fake-vendor.ts: a loopback HTTP server that plays vendor responses in order, for
// the wire adapter tests. It records every request (headers + parsed JSON body).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown>;
}

/** Writes one response. Responders are used in order; the last one repeats. */
export type Responder = (req: FakeRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

export interface FakeVendor {
  url: string;
  requests: FakeRequest[];
  /** TCP connections accepted so far (a replay test asserts none is opened). */
  readonly connections: number;
  close(): Promise<void>;
}

/** Starts a fake vendor on 127.0.0.1:0. */
export async function startFakeVendor(responders: Responder[]): Promise<FakeVendor> {
  const requests: FakeRequest[] = [];
  const server = createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const req: FakeRequest = { method: raw.method ?? '', url: raw.url ?? '', headers: raw.headers, body: text ? JSON.parse(text) : {} };
      requests.push(req);
      const responder = responders[Math.min(requests.length - 1, responders.length - 1)];
      Promise.resolve(responder(req, res, raw)).catch((err: unknown) => {
        res.destroy(err instanceof Error ? err : new Error(String(err)));
      });
    });
  });
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One SSE frame. */
export function frame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return `${event ? `event: ${event}\n` : ''}data: ${payload}\n\n`;
}

/** Starts an SSE response. */
export function sseHead(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.flushHeaders();
}

/** A complete SSE response whose frames are written one write() each. */
export function sseReply(frames: string[]): Responder {
  return (_req, res) => {
    sseHead(res);
    for (const f of frames) res.write(f);
    res.end();
  };
}

/** A JSON error response. */
export function jsonError(status: number, body: unknown, headers: Record<string, string> = {}): Responder {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
}

/** Destroys the socket before any response header (a connection reset). */
export const resetConnection: Responder = (_req, _res, raw) => {
  raw.socket.destroy();
};

/** A promise with its resolver, for ordering tests without sleeps. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
