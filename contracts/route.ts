// contracts/route.ts: the shape of one route catalog entry. contracts/routes.ts concatenates the
// per-resource catalogs; http/router.ts registers them, http/validate.ts compiles their schemas once,
// http/openapi.ts projects them. A catalog entry without a handler answers 501 CAPABILITY_UNAVAILABLE.
import type { TSchema } from 'typebox';
import type { ErrorCode } from './errors.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteDef {
  /** Stable operation id, also the handler key (e.g. 'sessions.create'). */
  id: string;
  method: HttpMethod;
  /** OpenAPI-style template: '/sessions/{id}'. */
  path: string;
  summary: string;
  /** Query parameters as an object schema (values arrive as strings; use Type.String / numeric strings). */
  query?: TSchema;
  /** JSON body schema; omitted means the route takes no body. */
  body?: TSchema;
  /** True: an empty body is accepted (the handler sees `body` undefined); a present body is validated. */
  bodyOptional?: boolean;
  /** Success response. `contentType` defaults to application/json. */
  response: {
    status: number;
    schema?: TSchema;
    contentType?: 'application/json' | 'text/plain' | 'text/event-stream' | 'text/html' | 'text/css' | 'text/javascript';
  };
  /** Error codes this route can answer with (documented in OpenAPI). */
  errors: ErrorCode[];
  /** Request headers the route reads (documented in OpenAPI). */
  headers?: string[];
  /** Capability id gating the route, when it belongs to an optional feature. */
  capability?: string;
  /** 'error_only': every error of this route is projected as `{error}` (SPEC.md "Errors": auth routes). */
  errorBody?: 'error_only';
}
