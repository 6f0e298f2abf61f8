// http/server-node.ts: the fallback HTTP transport on node:http (Node >= 22, or --http-transport node).
// Implements http/transport.ts with the same semantics as server-uws.ts; create-server.ts picks it.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WebSocketServer } from 'ws';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { checkRequest, logRefusal, refuseRequest, upgradeRefusalResponse, type BrowserGuard } from './browser-guard.ts';
import { lingerClose } from './linger-close.ts';
import { closeAfterTooLarge, declaredBodyLength, dispatch, newRequest } from './transport-request.ts';
import type { HttpRequest, HttpResponder, HttpServer, HttpServerOptions, RequestHandler, WebSocketRoute } from './transport.ts';

const INTERNAL_BODY = '{"error":"internal error","code":"INTERNAL_ERROR"}';
const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json' };
const EMPTY = Buffer.alloc(0);

/**
 * Keep-alive: clients are told `Keep-Alive: timeout=5`, but an idle connection is only closed after
 * IDLE_CLOSE_MS (node:http adds 1 s). The server's idle clock starts when its last byte went to the kernel;
 * a client's starts when it has read and handled the response, which for a large body on a slow link or a
 * loaded machine is seconds later, and a client whose event loop is busy meanwhile sends its next request
 * on the socket before it sees the close. With node's own 5 s (closing at 6 s) such a request was cut off
 * ("other side closed"); the wide margin keeps every client that honours the hint clear of the close.
 */
const ADVERTISED_KEEP_ALIVE = 'timeout=5';
const IDLE_CLOSE_MS = 30_000;

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
    // An explicit length: HTTP/1.1 clients get no chunked framing, HTTP/1.0 clients a delimited body.
    const sized = 'content-length' in headers ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) };
    this.advertiseKeepAlive();
    this.res.writeHead(status, sized); // throws on an invalid header: fail() can still answer 500
    this.done = true;
    this.res.end(body);
  }

  startStream(status: number, headers: Record<string, string>): void {
    if (this.done || this.streaming) return;
    this.streaming = true;
    this.advertiseKeepAlive();
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
  }

  /** The advertised hint, shorter than the real idle close (a header set here replaces node's own). */
  private advertiseKeepAlive(): void {
    if (this.res.shouldKeepAlive) this.res.setHeader('keep-alive', ADVERTISED_KEEP_ALIVE);
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

/**
 * After a 413 whose body is not read to its end, node:http would destroy the socket once the response is
 * out (a reset while the client is still sending). This socket instead closes lingering (linger-close.ts).
 */
function lingerAfterResponse(socket: Socket): void {
  const lingering = socket as Socket & { destroySoon?: () => void };
  lingering.destroySoon = () => lingerClose(socket);
}

/** An absolute-form request target (`http://host/path?q`) as its origin form (`/path?q`); others as they are. */
function originForm(target: string): string {
  if (target.charCodeAt(0) === 47 /* '/' */) return target;
  const m = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  if (!m) return target;
  const rest = target.slice(m[0].length);
  return rest.charCodeAt(0) === 47 ? rest : `/${rest}`;
}

/** A request node:http could not parse: the error envelope, then the connection ends. */
function clientErrorResponse(err: NodeJS.ErrnoException): string {
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const body = JSON.stringify(
    tooLarge
      ? { error: 'request header fields too large', code: 'BAD_REQUEST' }
      : { error: `malformed HTTP request${err.code ? ` (${err.code})` : ''}`, code: 'BAD_REQUEST' },
  );
  const status = tooLarge ? '431 Request Header Fields Too Large' : '400 Bad Request';
  return `HTTP/1.1 ${status}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}

/** Creates the node:http transport (HTTP/1.1 keep-alive). */
export function createNodeServer(opts: HttpServerOptions): HttpServer {
  const { handler, maxBodyBytes: max, logger } = opts;

  const onRequest = (ireq: IncomingMessage, res: ServerResponse): void => {
    const responder = new NodeResponder(res, logger);
    const url = originForm(ireq.url ?? '/');
    const q = url.indexOf('?');
    const headers = copyHeaders(ireq.headers);
    const req = newRequest(ireq.method ?? 'GET', q < 0 ? url : url.slice(0, q), q < 0 ? '' : url.slice(q + 1), headers);

    const declared = declaredBodyLength(headers);
    if (
      refuseRequest(opts.guard, req, responder, () => {
        if (declared === 0) return;
        ireq.resume(); // a refused body is never read: the connection closes once the refusal is out
        res.shouldKeepAlive = false;
        lingerAfterResponse(ireq.socket);
      })
    ) {
      return;
    }
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
      if (closeAfterTooLarge(declared, received, max)) {
        res.shouldKeepAlive = false;
        lingerAfterResponse(ireq.socket);
      }
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
  };

  const server = createServer({ noDelay: true, keepAliveTimeout: IDLE_CLOSE_MS }, onRequest);
  const wss = opts.websockets?.length ? serveWebSockets(server, opts.websockets, max, opts.guard) : undefined;
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // A reset leaves nothing to answer.
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    socket.end(clientErrorResponse(err));
  });
  // `Expect: 100-continue`: a declared length over the limit is answered (413) before the client sends
  // the body; anything else gets its 100 Continue and goes on as a normal request.
  server.on('checkContinue', (ireq: IncomingMessage, res: ServerResponse) => {
    if (declaredBodyLength(copyHeaders(ireq.headers)) <= max) {
      res.writeContinue();
      onRequest(ireq, res);
      return;
    }
    res.shouldKeepAlive = false;
    lingerAfterResponse(ireq.socket);
    onRequest(ireq, res);
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
      for (const ws of wss?.clients ?? []) ws.terminate();
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

/** Headers that only ask for a protocol switch; a request replayed as plain HTTP drops them. */
const UPGRADE_ONLY = new Set(['upgrade', 'http2-settings']);

/**
 * Hands a request node:http diverted to 'upgrade' back to the server as a plain request: its head is
 * rebuilt without the upgrade headers and put back in front of the unread bytes (`head` plus whatever
 * follows on the socket), and the server parses the connection afresh (body, keep-alive and all).
 */
function replayAsPlainRequest(server: Server, ireq: IncomingMessage, socket: Socket, head: Buffer): void {
  const lines = [`${ireq.method} ${ireq.url} HTTP/${ireq.httpVersion}`];
  const raw = ireq.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i].toLowerCase();
    if (UPGRADE_ONLY.has(name)) continue;
    let value = raw[i + 1];
    if (name === 'connection') {
      value = value
        .split(',')
        .map((t) => t.trim())
        .filter((t) => t && !UPGRADE_ONLY.has(t.toLowerCase()))
        .join(', ');
      if (!value) continue;
    }
    lines.push(`${raw[i]}: ${value}`);
  }
  socket.unshift(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), head]));
  server.emit('connection', socket);
}

/** WebSocket upgrades on the given paths (the `ws` package); any other request with `Upgrade:` is served as plain HTTP. */
function serveWebSockets(server: Server, routes: readonly WebSocketRoute[], maxPayload: number, guard?: BrowserGuard): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload });
  server.on('upgrade', (ireq: IncomingMessage, socket: Socket, head: Buffer) => {
    const path = (ireq.url ?? '').split('?', 1)[0];
    const route = routes.find((r) => r.path === path);
    if (!route || !/\bwebsocket\b/i.test(ireq.headers.upgrade ?? '')) {
      // Not a WebSocket upgrade of a WebSocket route (e.g. `curl --http2` asking for h2c): answer it as
      // the plain HTTP/1.1 request it also is.
      replayAsPlainRequest(server, ireq, socket, head);
      return;
    }
    const headers = copyHeaders(ireq.headers);
    const refused = guard ? checkRequest(guard.policy, headers) : null;
    if (refused && guard) {
      logRefusal(guard.log, refused, 'GET', path, headers);
      socket.end(upgradeRefusalResponse(refused));
      return;
    }
    wss.handleUpgrade(ireq, socket, head, (ws) => {
      ws.on('message', (data: Buffer, isBinary: boolean) => {
        if (isBinary) return;
        route
          .onMessage(data.toString('utf8'), headers)
          .then((reply) => {
            if (reply !== null && ws.readyState === ws.OPEN) ws.send(reply);
          })
          // A message the route could not answer at all ends the socket (1011: internal error), never the process.
          .catch(() => ws.close(1011));
      });
    });
  });
  return wss;
}
