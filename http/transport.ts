// http/transport.ts: the small interface both HTTP transports implement (server-uws.ts default,
// server-node.ts fallback). The router and SSE code only ever see these types.
import type { Logger } from 'pino';
import type { BrowserGuard } from './browser-guard.ts';

export type TransportKind = 'uws' | 'node';

/** A fully-read request. Everything is copied out of the transport before the handler runs. */
export interface HttpRequest {
  method: string; // upper-case
  /** Path without the query string, percent-decoding NOT applied. */
  path: string;
  /** Raw query string without the leading '?' ('' when none). */
  query: string;
  /** Header names lower-cased. */
  headers: Record<string, string>;
  /** Request body; empty Buffer when none. */
  body: Buffer;
  /** Set when the body exceeded maxBodyBytes; `body` is then empty and the router must answer 413. */
  bodyTooLarge: boolean;
}

/** One response. Either `send` once, or `startStream` then `write`* then `end`. */
export interface HttpResponder {
  /** True once the client went away; every later call is a no-op. */
  readonly aborted: boolean;
  /** Registers a callback run once when the client disconnects (before or during a stream). */
  onAbort(cb: () => void): void;
  send(status: number, headers: Record<string, string>, body: string | Buffer): void;
  startStream(status: number, headers: Record<string, string>): void;
  /** Writes a chunk. Returns false when the chunk was buffered by backpressure: stop writing until onDrain. */
  write(chunk: string): boolean;
  /** Registers a callback run each time the connection becomes writable again after write() returned false. */
  onDrain(cb: () => void): void;
  end(): void;
}

export type RequestHandler = (req: HttpRequest, res: HttpResponder) => void | Promise<void>;

/** A WebSocket endpoint: each text message gets at most one text reply (JSON-RPC over WebSocket). */
export interface WebSocketRoute {
  path: string;
  /** Handles one message; resolves with the reply to send, or null for none. Headers are the upgrade request's. */
  onMessage(text: string, headers: Record<string, string>): Promise<string | null>;
}

export interface HttpServerOptions {
  handler: RequestHandler;
  /** WebSocket upgrades served beside the HTTP routes (GET with Upgrade: websocket on these paths). */
  websockets?: readonly WebSocketRoute[];
  maxBodyBytes: number;
  logger: Logger;
  /** Host / Origin / content-type checks run before any handler or upgrade (http/browser-guard.ts). */
  guard?: BrowserGuard;
}

export interface HttpServer {
  readonly kind: TransportKind;
  listen(host: string, port: number): Promise<{ port: number }>;
  /** Stops accepting, closes open connections (including streams) and resolves when done. */
  close(): Promise<void>;
}
