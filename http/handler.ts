// http/handler.ts: what a route handler receives and returns. Handlers live in http/handlers/*, one file
// per resource, and are looked up by RouteDef.id. They validate nothing themselves (the router did),
// send a command to actors/, and map the result onto the response schema.
import type { Logger } from 'pino';
import type { Static, TSchema } from 'typebox';
import type { RouteDef } from '../contracts/route.ts';
import type { HttpResponder } from './transport.ts';

export interface HandlerContext {
  /** Path parameters by template name, percent-decoded. */
  params: Record<string, string>;
  /** Query parameters; repeated keys keep every value in `queryAll`. */
  query: Record<string, string>;
  queryAll: URLSearchParams;
  /** Parsed and schema-validated JSON body (undefined when the route has none). */
  body: unknown;
  /** The request body as received (routes without a body schema parse it themselves, e.g. JSON-RPC). */
  rawBody?: Buffer;
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

/** The validated body type of a route (undefined when it takes none; possibly undefined when `bodyOptional`). */
type BodyOf<R extends RouteDef> = R extends { body: infer S extends TSchema }
  ? R extends { bodyOptional: true }
    ? Static<S> | undefined
    : Static<S>
  : undefined;
/** The validated query type of a route (plain strings when it declares none). */
type QueryOf<R extends RouteDef> = R extends { query: infer S extends TSchema }
  ? Static<S> & Record<string, string>
  : Record<string, string>;

/** A handler's context with the body and query its route's schemas validated. */
export interface RouteContext<R extends RouteDef> extends Omit<HandlerContext, 'body' | 'query'> {
  body: BodyOf<R>;
  query: QueryOf<R>;
}

/**
 * Binds a handler to its catalog route, typed by the route's schemas: the router validates the body and
 * query against exactly these schemas before it calls the handler, so the handler needs no casts.
 */
export function on<R extends RouteDef>(route: R, handler: (ctx: RouteContext<R>) => Promise<HandlerResult> | HandlerResult): HandlerTable {
  return { [route.id]: handler as Handler };
}
