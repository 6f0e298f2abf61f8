// http/server-node.ts: the fallback HTTP transport on node:http (Node >= 22, or --http-transport node).
// Implements http/transport.ts with the same semantics as server-uws.ts; create-server.ts picks it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { closeAfterTooLarge, declaredBodyLength, dispatch, newRequest } from './transport-request.ts';
import type {
  HttpRequest,
  HttpResponder,
  HttpServer,
  HttpServerOptions,
  RequestHandler,
} from './transport.ts';

const INTERNAL_BODY = '{"error":"internal error","code":"INTERNAL_ERROR"}';
const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json' };
const EMPTY = Buffer.alloc(0);

class NodeResponder implements HttpResponder {
  aborted = false;
  done = false;
  streaming = false;
  private abortCbs: Array<() => void> | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly log: Logger,
  ) {
    res.on('close', () => {
      // 'close' after 'finish' is the normal end of a response; before it, the client went away.
      if (!res.writableFinished) this.handleAbort();
    });
  }

  private handleAbort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.done = true;
    const cbs = this.abortCbs;
    this.abortCbs = undefined;
    if (!cbs) return;
    for (const cb of cbs) {
      try {
        cb();
      } catch (err) {
        this.log.error({ err }, 'abort callback failed');
      }
    }
  }

  onAbort(cb: () => void): void {
    if (this.aborted) return;
    (this.abortCbs ??= []).push(cb);
  }

  send(status: number, headers: Record<string, string>, body: string | Buffer): void {
    if (this.done || this.streaming) return;
    this.res.writeHead(status, headers); // throws on an invalid header: fail() can still answer 500
    this.done = true;
    this.res.end(body);
  }

  startStream(status: number, headers: Record<string, string>): void {
    if (this.done || this.streaming) return;
    this.streaming = true;
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
  }

  write(chunk: string): boolean {
    if (this.done || !this.streaming) return false;
    return this.res.write(chunk);
  }

  onDrain(cb: () => void): void {
    if (this.done) return;
    this.res.on('drain', () => {
      try {
        cb();
      } catch (err) {
        this.log.error({ err }, 'drain callback failed');
      }
    });
  }

  end(): void {
    if (this.done) return;
    if (!this.streaming) {
      this.send(200, {}, EMPTY);
      return;
    }
    this.done = true;
    this.res.end();
  }

  /** Ends the response after the handler failed: 500 when nothing was sent, else end the stream. */
  fail(err: unknown, req: HttpRequest): void {
    this.log.error({ err, method: req.method, path: req.path }, 'request handler failed');
    if (this.done) return;
    if (this.streaming) this.end();
    else this.send(500, JSON_HEADERS, INTERNAL_BODY);
  }
}

function copyHeaders(raw: IncomingMessage['headers']): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name in raw) {
    const value = raw[name];
    if (value === undefined) continue;
    headers[name] = typeof value === 'string' ? value : value.join(', ');
  }
  return headers;
}

/** Creates the node:http transport (HTTP/1.1 keep-alive). */
export function createNodeServer(opts: HttpServerOptions): HttpServer {
  const { handler, maxBodyBytes: max, logger } = opts;

  const server = createServer({ noDelay: true }, (ireq: IncomingMessage, res: ServerResponse) => {
    const responder = new NodeResponder(res, logger);
    const url = ireq.url ?? '/';
    const q = url.indexOf('?');
    const headers = copyHeaders(ireq.headers);
    const req = newRequest(ireq.method ?? 'GET', q < 0 ? url : url.slice(0, q), q < 0 ? '' : url.slice(q + 1), headers);

    const declared = declaredBodyLength(headers);
    if (declared === 0) {
      dispatch(handler, req, responder);
      return;
    }

    // A client that disconnects mid-body makes the request emit 'error'; 'close' on res covers it.
    ireq.on('error', () => {});
    let received = 0;
    let tooLarge = false;
    const rejectTooLarge = (): void => {
      tooLarge = true;
      req.bodyTooLarge = true;
      // Discard up to `max` more bytes to keep the connection; beyond that (or with an unknown
      // length) end the connection once the 413 is out instead of reading an unbounded body.
      if (closeAfterTooLarge(declared, received, max)) res.shouldKeepAlive = false;
      dispatch(handler, req, responder);
    };

    if (declared > max) {
      ireq.resume();
      rejectTooLarge();
      return;
    }
    const chunks: Buffer[] = [];
    ireq.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      received += chunk.length;
      if (received > max) {
        chunks.length = 0;
        rejectTooLarge();
        return;
      }
      chunks.push(chunk);
    });
    ireq.on('end', () => {
      if (tooLarge) return;
      req.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      dispatch(handler, req, responder);
    });
  });

  return {
    kind: 'node',
    listen(host: string, port: number): Promise<{ port: number }> {
      return new Promise((resolve, reject) => {
        const onError = (err: Error): void => reject(err);
        server.once('error', onError);
        server.listen(port, host, () => {
          server.off('error', onError);
          const addr = server.address();
          resolve({ port: typeof addr === 'object' && addr !== null ? addr.port : port });
        });
      });
    },
    close(): Promise<void> {
      return new Promise((resolve) => {
        if (!server.listening) {
          server.closeAllConnections();
          resolve();
          return;
        }
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
