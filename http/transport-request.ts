// http/transport-request.ts: the request-side rules both transports share (server-uws.ts, server-node.ts):
// building the HttpRequest, deciding whether a body follows, when to drop the connection after a 413,
// and running the handler so that a throw or a rejection becomes a 500 instead of a crash.
import type { HttpRequest, RequestHandler } from './transport.ts';

const EMPTY = Buffer.alloc(0);

/** A new request with no body yet. */
export function newRequest(method: string, path: string, query: string, headers: Record<string, string>): HttpRequest {
  return { method, path, query, headers, body: EMPTY, bodyTooLarge: false };
}

/**
 * The declared body length: a byte count, -1 for a body of unknown length (chunked), or 0 when no
 * body follows (no content-length and no transfer-encoding).
 */
export function declaredBodyLength(headers: Record<string, string>): number {
  const lengthHeader = headers['content-length'];
  if (lengthHeader !== undefined) return Number(lengthHeader);
  return headers['transfer-encoding'] === undefined ? 0 : -1;
}

/**
 * After a 413, up to `max` more bytes are read and dropped to keep the connection; beyond that, or with
 * an unknown length, the connection is closed once the 413 is out rather than reading an unbounded body.
 */
export function closeAfterTooLarge(declared: number, received: number, max: number): boolean {
  return declared < 0 || declared - received > max;
}

/** The responder side of dispatch: how a transport answers a handler failure. */
export interface FailingResponder {
  fail(err: unknown, req: HttpRequest): void;
}

/** Runs the handler; a synchronous throw or a rejected promise goes to `responder.fail`. */
export function dispatch<R extends FailingResponder>(
  handler: RequestHandler,
  req: HttpRequest,
  responder: R & Parameters<RequestHandler>[1],
): void {
  let result: void | Promise<void>;
  try {
    result = handler(req, responder);
  } catch (err) {
    responder.fail(err, req);
    return;
  }
  if (result) result.then(undefined, (err: unknown) => responder.fail(err, req));
}
