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

const sse = { contentType: 'text/event-stream' as const };
const MEMBER = '/mob/{id}/members/{agent_identity}';

/** Every not-yet-built SPEC.md route, each gated by its capability id. */
export const LATER_ROUTES: RouteDef[] = [




  later('mob', 'mob.events', 'GET', '/mob/{id}/events', 'Mob event stream (SSE)', sse),
  later('mob', 'mob.spawnHelper', 'POST', '/mob/{id}/spawn-helper', 'Spawn a helper and wait for its result'),
  later('mob', 'mob.forkHelper', 'POST', '/mob/{id}/fork-helper', 'Fork a helper and wait for its result'),
  later('mob', 'mob.waitKickoff', 'POST', '/mob/{id}/wait-kickoff', 'Wait for member kickoff'),
  later('mob', 'mob.wireMembersBatch', 'POST', '/mob/{id}/wire-members-batch', 'Wire member pairs'),
  later('mob', 'mob.memberStatus', 'GET', `${MEMBER}/status`, 'Member status snapshot'),
  later('mob', 'mob.memberHistory', 'GET', `${MEMBER}/history`, 'Member history page'),
  later('mob', 'mob.memberCancel', 'POST', `${MEMBER}/cancel`, 'Cancel a member'),
  later('mob', 'mob.memberRespawn', 'POST', `${MEMBER}/respawn`, 'Respawn a member'),
  later('mob', 'mob.hosts', 'GET', '/mob/{id}/hosts', 'Mob hosts'),
  later('mob', 'mob.routeInstalls', 'GET', '/mob/{id}/route-installs', 'Outstanding route installs'),
];
