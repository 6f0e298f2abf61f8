// http/handler.ts: what a route handler receives and returns. Handlers live in http/handlers/*, one file
// per resource, and are looked up by RouteDef.id. They validate nothing themselves (the router did),
// send a command to actors/, and map the result onto the response schema.
import type { Logger } from 'pino';
import type { HttpResponder } from './transport.ts';

export interface HandlerContext {
  /** Path parameters by template name, percent-decoded. */
  params: Record<string, string>;
  /** Query parameters; repeated keys keep every value in `queryAll`. */
  query: Record<string, string>;
  queryAll: URLSearchParams;
  /** Parsed and schema-validated JSON body (undefined when the route has none). */
  body: unknown;
  headers: Record<string, string>;
  requestId: string;
  log: Logger;
  /** The raw responder, for streaming routes (SSE) only. */
  res: HttpResponder;
}

export type HandlerResult =
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { status: number; text: string; headers?: Record<string, string> }
  /** The handler took over the responder (a stream). */
  | { streamed: true };

export type Handler = (ctx: HandlerContext) => Promise<HandlerResult> | HandlerResult;

/** Handlers keyed by RouteDef.id. */
export type HandlerTable = Record<string, Handler>;
