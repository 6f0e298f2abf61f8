// contracts/routes-later.ts: catalog entries of SPEC.md routes whose capability is not built yet. Each
// carries `capability`, no body or query schema and a generic response, so the router answers 501
// CAPABILITY_UNAVAILABLE (never 404) whatever the request holds. When a capability is built, its routes
// move into that resource's catalog with real schemas and handlers.
import type { HttpMethod, RouteDef } from './route.ts';

type ContentType = NonNullable<RouteDef['response']['contentType']>;

function later(
  capability: string,
  id: string,
  method: HttpMethod,
  path: string,
  summary: string,
  response: { status?: number; contentType?: ContentType; headers?: string[] } = {},
): RouteDef {
  const route: RouteDef = {
    id,
    method,
    path,
    summary,
    response: { status: response.status ?? 200, contentType: response.contentType ?? 'application/json' },
    errors: ['CAPABILITY_UNAVAILABLE'],
    capability,
  };
  if (response.headers) route.headers = response.headers;
  return route;
}

/** Every not-yet-built SPEC.md route, each gated by its capability id. */
export const LATER_ROUTES: RouteDef[] = [];
