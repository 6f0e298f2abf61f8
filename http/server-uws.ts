// http/server-uws.ts: the default HTTP transport, on uWebSockets.js (native binding, Node 20).
// Implements http/transport.ts; create-server.ts picks it when the native binding loads.
// uWS rules followed here (reference/dependencies.md): onAborted is attached before anything else,
// request data is copied synchronously, onData buffers are copied, every write is corked, and the
// native response is never touched after abort or end.
import uWS from 'uWebSockets.js';
import type { HttpResponse as UwsResponse, HttpRequest as UwsRequest, us_listen_socket } from 'uWebSockets.js';
import type { Logger } from 'pino';
import { checkRequest, logRefusal, refuseRequest, refusalBody } from './browser-guard.ts';
import { declaredBodyLength, dispatch, newRequest } from './transport-request.ts';
import type { HttpRequest, HttpResponder, HttpServer, HttpServerOptions, RequestHandler } from './transport.ts';

const STATUS_TEXT: Record<number, string> = {
  100: 'Continue',
  101: 'Switching Protocols',
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  206: 'Partial Content',
  301: 'Moved Permanently',
  302: 'Found',
  303: 'See Other',
  304: 'Not Modified',
  307: 'Temporary Redirect',
  308: 'Permanent Redirect',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  406: 'Not Acceptable',
  408: 'Request Timeout',
  409: 'Conflict',
  410: 'Gone',
  411: 'Length Required',
  412: 'Precondition Failed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  425: 'Too Early',
  428: 'Precondition Required',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
  504: 'Gateway Timeout',
};
const statusLines = new Map<number, string>();

/** "413 Payload Too Large" for 413: uWS writes the status line verbatim. */
function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_TEXT[status] ?? 'Status'}`;
    statusLines.set(status, line);
  }
  return line;
}

/**
 * While a stream is blocked by backpressure its response is paused, which stops uWS's fixed ~10 s
 * timeout for responses that make no write progress (a paused reader would otherwise be dropped
 * before it could get its stream_truncated marker). Every PROBE_MS the response is resumed (which
 * re-arms that timeout and lets uWS poll for writability, so onWritable fires once the reader drains)
 * and, if still blocked at the next probe, paused and resumed again: the timeout never runs out.
 */
const PROBE_MS = 2_000;

const INTERNAL_BODY = '{"error":"internal error","code":"INTERNAL_ERROR"}';
const JSON_HEADERS: Record<string, string> = { 'content-type': 'application/json' };
const EMPTY = Buffer.alloc(0);

/** Shared per-server state the responders need. */
interface UwsServerState {
  readonly open: Set<UwsResponder>;
  readonly log: Logger;
}

class UwsResponder implements HttpResponder {
  aborted = false;
  /** Ended or aborted: the native response must not be touched any more. */
  done = false;
  streaming = false;
  /** Ask the client to close after the response (oversized body still arriving); see send(). */
  closeAfter = false;
  private abortCbs: Array<() => void> | undefined;
  private drainCbs: Array<() => void> | undefined;
  /** Set while a write is blocked by backpressure (the response is paused between probes). */
  private probe: NodeJS.Timeout | undefined;
  /** The native response is paused (no polling, no timeout). */
  private paused = false;

  constructor(
    private readonly res: UwsResponse,
    private readonly state: UwsServerState,
  ) {}

  /** Called from the native onAborted: the client went away or close() closed the connection. */
  handleAbort(): void {
    if (this.done) return;
    this.done = true;
    this.aborted = true;
    this.stopProbe();
    this.state.open.delete(this);
    const cbs = this.abortCbs;
    this.abortCbs = undefined;
    if (cbs) for (const cb of cbs) this.safely(cb, 'abort callback failed');
  }

  onAbort(cb: () => void): void {
    if (this.aborted) return;
    (this.abortCbs ??= []).push(cb);
  }

  send(status: number, headers: Record<string, string>, body: string | Buffer): void {
    if (this.done || this.streaming) return;
    this.done = true;
    this.state.open.delete(this);
    const res = this.res;
    const close = this.closeAfter;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      writeHeaders(res, headers);
      // Lingering close (http/linger-close.ts): uWS's own close would reset a client still sending its
      // body, so the client is asked to close while uWS keeps reading and dropping what it sends (bounded by
      // the declared length and uWS's idle timeout; uWS gives JavaScript no handle once the response ended).
      if (close) res.writeHeader('connection', 'close');
      res.end(body);
    });
  }

  startStream(status: number, headers: Record<string, string>): void {
    if (this.done || this.streaming) return;
    this.streaming = true;
    const res = this.res;
    // uWS flushes the header block together with the first chunk (it appends the chunked
    // framing header on the first write), so clients see the headers on the first write().
    res.cork(() => {
      res.writeStatus(statusLine(status));
      writeHeaders(res, headers);
    });
  }

  write(chunk: string): boolean {
    if (this.done || !this.streaming) return false;
    if (chunk.length === 0) return true;
    const res = this.res;
    let ok = true;
    res.cork(() => {
      ok = res.write(chunk);
    });
    if (!ok) this.block();
    return ok;
  }

  /** Backpressure: pause the response (no idle timeout) and probe for writability (see PROBE_MS). */
  private block(): void {
    if (this.probe !== undefined || this.done) return;
    this.watchWritable();
    const res = this.res;
    res.pause();
    this.paused = true;
    this.probe = setInterval(() => {
      if (this.done) return this.stopProbe();
      // resume() re-arms the timeout (and polling); pausing first makes the re-arm explicit each time.
      res.cork(() => {
        if (!this.paused) res.pause();
        res.resume();
      });
      this.paused = false;
    }, PROBE_MS);
    this.probe.unref();
  }

  /**
   * Ends the backpressure state. onWritable only fires while resumed, and uWS clears the timeout
   * before calling it, so nothing is resumed here (that would arm the timeout on a healthy stream).
   */
  private unblock(): void {
    this.stopProbe();
  }

  private stopProbe(): void {
    clearInterval(this.probe);
    this.probe = undefined;
  }

  onDrain(cb: () => void): void {
    if (this.done) return;
    this.watchWritable();
    this.drainCbs!.push(cb);
  }

  /** Registers the one native onWritable handler (a blocked stream needs it even with no drain callback). */
  private watchWritable(): void {
    if (this.drainCbs !== undefined) return;
    this.drainCbs = [];
    this.res.onWritable(() => {
      this.unblock();
      const cbs = this.drainCbs;
      if (cbs) for (const fn of cbs) this.safely(fn, 'drain callback failed');
      // Whatever a callback wrote is buffered by uWS; nothing is left for us to retry.
      return true;
    });
  }

  end(): void {
    if (this.done) return;
    if (!this.streaming) {
      this.send(200, {}, EMPTY);
      return;
    }
    this.stopProbe();
    // A paused response would never flush its tail: resume it (uWS then times out a reader that never drains).
    if (this.paused) this.res.resume();
    this.done = true;
    this.state.open.delete(this);
    const res = this.res;
    res.cork(() => {
      res.end();
    });
  }

  /** Force-closes the connection (server shutdown); the native onAborted follows synchronously. */
  forceClose(): void {
    if (this.done) return;
    this.stopProbe();
    this.res.close();
    this.handleAbort();
  }

  /** Ends the response after the handler failed: 500 when nothing was sent, else end the stream. */
  fail(err: unknown, req: HttpRequest): void {
    this.state.log.error({ err, method: req.method, path: req.path }, 'request handler failed');
    if (this.done) return;
    if (this.streaming) this.end();
    else this.send(500, JSON_HEADERS, INTERNAL_BODY);
  }

  private safely(fn: () => void, msg: string): void {
    // An exception escaping a native uWS callback would take the whole process down.
    try {
      fn();
    } catch (err) {
      this.state.log.error({ err }, msg);
    }
  }
}

function writeHeaders(res: UwsResponse, headers: Record<string, string>): void {
  for (const name in headers) {
    // uWS computes the framing itself; a second content-length would corrupt the response.
    if (name === 'content-length' || name === 'transfer-encoding') continue;
    res.writeHeader(name, headers[name]);
  }
}

/**
 * Creates the uWebSockets.js transport. Only import this module where the native binding loads
 * (create-server.ts checks); on an unsupported Node ABI the package falls back to an incomplete shim.
 */
export function createUwsServer(opts: HttpServerOptions): HttpServer {
  const { handler, maxBodyBytes } = opts;
  const state: UwsServerState = { open: new Set(), log: opts.logger };
  const app = uWS.App();
  let listenSocket: us_listen_socket | undefined;

  const sockets = new Set<{ end(code?: number): void }>();
  for (const route of opts.websockets ?? []) {
    app.ws<{ headers: Record<string, string>; closed: boolean }>(route.path, {
      maxPayloadLength: maxBodyBytes,
      upgrade: (res, ureq, context) => {
        const headers: Record<string, string> = {};
        ureq.forEach((name, value) => (headers[name] = value));
        const refused = opts.guard ? checkRequest(opts.guard.policy, headers) : null;
        if (refused && opts.guard) {
          logRefusal(opts.guard.log, refused, 'GET', route.path, headers);
          res.cork(() => {
            res.writeStatus(statusLine(refused.status));
            res.writeHeader('content-type', 'application/json');
            res.end(refusalBody(refused));
          });
          return;
        }
        res.upgrade(
          { headers, closed: false },
          ureq.getHeader('sec-websocket-key'),
          ureq.getHeader('sec-websocket-protocol'),
          ureq.getHeader('sec-websocket-extensions'),
          context,
        );
      },
      open: (ws) => void sockets.add(ws),
      message: (ws, message) => {
        const data = ws.getUserData();
        void route.onMessage(Buffer.from(message).toString('utf8'), data.headers).then(
          (reply) => {
            if (reply !== null && !data.closed) ws.send(reply, false);
          },
          (err: unknown) => state.log.error({ err }, 'websocket message failed'),
        );
      },
      close: (ws) => {
        ws.getUserData().closed = true;
        sockets.delete(ws);
      },
    });
  }

  app.any('/*', (res: UwsResponse, ureq: UwsRequest) => {
    const responder = new UwsResponder(res, state);
    res.onAborted(() => responder.handleAbort());
    state.open.add(responder);

    const headers: Record<string, string> = {};
    ureq.forEach((name, value) => {
      const prev = headers[name];
      headers[name] = prev === undefined ? value : `${prev}, ${value}`;
    });
    const req = newRequest(ureq.getMethod().toUpperCase(), ureq.getUrl(), ureq.getQuery() ?? '', headers);

    const declared = declaredBodyLength(headers);
    if (
      refuseRequest(opts.guard, req, responder, () => {
        if (declared === 0) return;
        res.onData(() => {}); // a refused body is never read: dropped, and the client is asked to close
        responder.closeAfter = true;
      })
    ) {
      return;
    }
    if (declared === 0) {
      dispatch(handler, req, responder);
      return;
    }
    readBody(res, req, responder, declared, maxBodyBytes, handler);
  });

  return {
    kind: 'uws',
    listen(host: string, port: number): Promise<{ port: number }> {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (!socket) {
            reject(new Error(`uWS could not listen on ${host}:${port}`));
            return;
          }
          listenSocket = socket;
          resolve({ port: uWS.us_socket_local_port(socket) });
        });
      });
    },
    close(): Promise<void> {
      if (listenSocket) {
        uWS.us_listen_socket_close(listenSocket);
        listenSocket = undefined;
      }
      for (const responder of [...state.open]) responder.forceClose();
      for (const ws of [...sockets]) ws.end(1001);
      // The native App.close() (uWS >= 20.27, not in the typings) also closes idle keep-alive sockets.
      const closeAll = (app as unknown as { close?: () => void }).close;
      if (typeof closeAll === 'function') closeAll.call(app);
      return Promise.resolve();
    },
  };
}

/**
 * How much of an oversized body is read and dropped before its 413 goes out (uWS closes a socket at once
 * after an answer with `connection: close`, and closing with request bytes unread makes the kernel send
 * a reset that can destroy the answer: dependencies.md "Closing after an early answer"). A body within it
 * is drained to its end, then answered 413 on a connection that stays usable; beyond it, or after
 * TOO_LARGE_DRAIN_MS, the 413 goes out with `connection: close`.
 */
const TOO_LARGE_DRAIN_BYTES = 64 * 1024 * 1024;
const TOO_LARGE_DRAIN_MS = 5_000;

/** Buffers the body with a running size check, then dispatches. */
function readBody(
  res: UwsResponse,
  req: HttpRequest,
  responder: UwsResponder,
  declared: number,
  max: number,
  handler: RequestHandler,
): void {
  let received = 0;
  let tooLarge = false;
  let answered = false;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;

  /** The 413 (the router answers it from req.bodyTooLarge); `close` ends the connection after it. */
  const answer = (close: boolean): void => {
    if (answered) return;
    answered = true;
    if (timer) clearTimeout(timer);
    responder.closeAfter = close;
    dispatch(handler, req, responder);
  };

  const rejectTooLarge = (): void => {
    tooLarge = true;
    req.bodyTooLarge = true;
    chunks.length = 0;
    // A declared body far beyond the drain bound is refused at once (the client may not even send it).
    if (declared >= 0 && declared - received > TOO_LARGE_DRAIN_BYTES) return answer(true);
    timer = setTimeout(() => answer(true), TOO_LARGE_DRAIN_MS);
    timer.unref();
    responder.onAbort(() => clearTimeout(timer));
  };

  // Known length: copy straight into one buffer. Unknown (chunked): collect and concatenate.
  const target = declared > 0 && declared <= max ? Buffer.allocUnsafe(declared) : undefined;
  const chunks: Buffer[] = [];
  res.onData((ab: ArrayBuffer, isLast: boolean) => {
    const len = ab.byteLength;
    if (tooLarge) {
      // Drained and dropped; the 413 goes out once the body ended (or the drain bound is reached).
      dropped += len;
      if (isLast) answer(false);
      else if (dropped > TOO_LARGE_DRAIN_BYTES) answer(true);
      return;
    }
    if (received + len > max || (target !== undefined && received + len > target.length)) {
      received += len;
      rejectTooLarge();
      if (isLast) answer(false);
      return;
    }
    if (target !== undefined) target.set(new Uint8Array(ab), received);
    else if (len > 0) chunks.push(Buffer.from(ab.slice(0)));
    received += len;
    if (!isLast) return;
    if (target !== undefined) req.body = received === target.length ? target : target.subarray(0, received);
    else req.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
    dispatch(handler, req, responder);
  });
  if (declared > max) rejectTooLarge();
}
