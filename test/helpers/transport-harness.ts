// test/helpers/transport-harness.ts: what the HTTP transport conformance suite drives a bare transport
// with: boot one on 127.0.0.1:0 with a captured logger, an echo handler, and a raw TCP client with an
// HTTP/1.1 response parser for requests undici will not send.
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import { pino } from 'pino';
import { Agent, request } from 'undici';
import { createHttpServer } from '../../http/create-server.ts';
import type { HttpRequest, HttpServer, RequestHandler, TransportKind } from '../../http/transport.ts';

export const MAX_BODY = 2 * 1024 * 1024;
export const JSON_CT = { 'content-type': 'application/json' };

export interface LogLine {
  level: number;
  msg: string;
}

export interface Booted {
  origin: string;
  port: number;
  server: HttpServer;
  logs: LogLine[];
  agent: Agent;
}

export async function boot(t: TestContext, kind: TransportKind, handler: RequestHandler): Promise<Booted> {
  const logs: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const server = await createHttpServer(kind, { handler, maxBodyBytes: MAX_BODY, logger });
  assert.equal(server.kind, kind);
  const { port } = await server.listen('127.0.0.1', 0);
  const agent = new Agent();
  t.after(async () => {
    await server.close();
    await agent.destroy();
  });
  return { origin: `http://127.0.0.1:${port}`, port, server, logs, agent };
}

/** A handler that answers with what it received, as JSON. */
export const echoHandler: RequestHandler = (req, res) => {
  res.send(200, { ...JSON_CT, 'x-reply': 'yes' }, describeRequest(req));
};

export function describeRequest(req: HttpRequest): string {
  const { method, path, query, headers, bodyTooLarge } = req;
  return JSON.stringify({ method, path, query, headers, bodyTooLarge, body: req.body.toString('base64') });
}

export interface Echo {
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  bodyTooLarge: boolean;
  body: string;
}

export async function get(b: Booted, path: string): Promise<{ status: number; text: string }> {
  const r = await request(b.origin + path, { dispatcher: b.agent });
  return { status: r.statusCode, text: await r.body.text() };
}

/** A raw TCP client that keeps everything it receives. */
export class RawClient {
  private chunks: Buffer[] = [];
  length = 0;
  closed = false;
  private waiter: (() => void) | undefined;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.chunks.push(chunk);
      this.length += chunk.length;
      this.waiter?.();
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
  }

  static open(port: number, opts: { allowHalfOpen?: boolean } = {}): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: opts.allowHalfOpen ?? false }, () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  buffer(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.length)];
    return this.chunks[0] ?? Buffer.alloc(0);
  }

  /** True when the received bytes end with `suffix` (cheap: looks at the tail only). */
  endsWith(suffix: string): boolean {
    const last = this.chunks[this.chunks.length - 1];
    if (last === undefined) return false;
    const tail = last.length >= suffix.length || this.chunks.length < 2 ? last : this.buffer();
    return tail.subarray(Math.max(0, tail.length - suffix.length)).toString('latin1') === suffix;
  }

  /** Resolves once `check` holds; rejects if the connection closes first. */
  waitFor(check: (c: RawClient) => boolean): Promise<void> {
    return new Promise((resolve, reject) => {
      const poke = (): void => {
        if (check(this)) {
          this.waiter = undefined;
          resolve();
        } else if (this.closed) {
          this.waiter = undefined;
          reject(new Error(`connection closed; got ${this.length} bytes: ${this.buffer().subarray(0, 200).toString('latin1')}`));
        }
      };
      this.waiter = poke;
      poke();
    });
  }
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Parses as many complete HTTP/1.1 responses (content-length or chunked) as `buf` holds. */
export function parseResponses(buf: Buffer): RawResponse[] {
  const out: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const headEnd = buf.indexOf('\r\n\r\n', at);
    if (headEnd < 0) return out;
    const lines = buf.subarray(at, headEnd).toString('latin1').split('\r\n');
    const status = Number(lines[0].split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    let pos = headEnd + 4;
    let body: Buffer;
    if (headers['transfer-encoding'] === 'chunked') {
      const parts: Buffer[] = [];
      for (;;) {
        const lineEnd = buf.indexOf('\r\n', pos);
        if (lineEnd < 0) return out;
        const size = parseInt(buf.subarray(pos, lineEnd).toString('latin1'), 16);
        if (buf.length < lineEnd + 2 + size + 2) return out;
        pos = lineEnd + 2 + size + 2;
        if (size === 0) break;
        parts.push(buf.subarray(lineEnd + 2, lineEnd + 2 + size));
      }
      body = Buffer.concat(parts);
    } else {
      const len = Number(headers['content-length'] ?? 0);
      if (buf.length < pos + len) return out;
      body = buf.subarray(pos, pos + len);
      pos += len;
    }
    out.push({ status, headers, body });
    at = pos;
  }
}
