// test/integration/catalog-coverage.test.ts: requests EVERY route catalog entry (SYSTEM_ROUTES,
// SESSION_ROUTES, OBSERVE_ROUTES, ...) against the real server on both transports (STYLE.md "a test requests
// every catalog entry"). A catalog path is never a route miss, never 405 and never 500; errors carry only
// codes the route documents; successes match the catalog's status, content type and response schema.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import type { ErrorCode } from '../../contracts/errors.ts';
import type { RouteDef } from '../../contracts/route.ts';
import { AUTH_ROUTES } from '../../contracts/routes-auth.ts';
import { MCP_ROUTES } from '../../contracts/mcp.ts';
import { SCHEDULE_ROUTES } from '../../contracts/schedule.ts';
import { SKILL_ROUTES } from '../../contracts/skills.ts';
import { MCP_ENDPOINT_ROUTES } from '../../contracts/mcp-endpoint.ts';
import { COMMS_ROUTES } from '../../contracts/routes-comms.ts';
import { MOB_ROUTES } from '../../contracts/routes-mob.ts';
import { OBSERVE_ROUTES } from '../../contracts/routes-observe.ts';
import { SESSION_ROUTES } from '../../contracts/routes-sessions.ts';
import { SYSTEM_ROUTES } from '../../contracts/routes-system.ts';
import { WORKGRAPH_ROUTES } from '../../contracts/workgraph.ts';
import { uwsSkip } from '../helpers/absent.ts';
import { startApp } from '../helpers/app.ts';

const UWS_SKIP = uwsSkip();
const DUMMY_UUID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const ALL_ROUTES = [
  ...SYSTEM_ROUTES,
  ...SESSION_ROUTES,
  ...AUTH_ROUTES,
  ...MCP_ROUTES,
  ...MCP_ENDPOINT_ROUTES,
  ...OBSERVE_ROUTES,
  ...WORKGRAPH_ROUTES,
  ...SCHEDULE_ROUTES,
  ...SKILL_ROUTES,
  ...COMMS_ROUTES,
  ...MOB_ROUTES,
];

/** Bodies that pass each route's schema, so the request reaches the handler; other body routes get {}. */
function sampleBody(route: RouteDef, sessionId: string): unknown {
  switch (route.id) {
    case 'sessions.create':
      return { prompt: 'coverage' };
    case 'sessions.continue':
      return { session_id: sessionId, prompt: 'coverage' };
    case 'sessions.system_context':
      return { content: { type: 'text', text: 'coverage context' } };
    case 'sessions.system_prompt':
      return { key: 'coverage', content: 'be brief' };
    case 'workgraph.goalStatus':
      return { binding_id: 'attention_none' };
    default:
      return {};
  }
}

function concretePath(route: RouteDef, sessionId: string): string {
  return route.path.replace(/\{([^{}]+)\}/g, (_m, name: string) => (name === 'id' ? sessionId : `dummy-${name}`));
}

/** Codes the route documents plus the ones the router itself answers for its shape (cf. http/openapi.ts). */
function allowedCodes(route: RouteDef): Set<string> {
  const codes = new Set<string>(route.errors);
  if (route.body || route.query || route.path.includes('{')) codes.add('BAD_REQUEST');
  if (route.body) for (const c of ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'] satisfies ErrorCode[]) codes.add(c);
  if (route.capability) codes.add('CAPABILITY_UNAVAILABLE');
  return codes;
}

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

/** One request; an event stream that opens is cancelled after its headers. */
async function request(base: string, route: RouteDef, path: string, body: unknown): Promise<Answer> {
  const res = await fetch(base + path, {
    method: route.method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const contentType = res.headers.get('content-type') ?? '';
  if (contentType.startsWith('text/event-stream')) {
    await res.body?.cancel();
    return { status: res.status, contentType, body: undefined };
  }
  const text = await res.text();
  return { status: res.status, contentType, body: contentType.startsWith('application/json') && text ? JSON.parse(text) : text };
}

const validators = new Map(ALL_ROUTES.filter((r) => r.response.schema).map((r) => [r.id, Compile(r.response.schema!)]));

function checkAnswer(route: RouteDef, answer: Answer, missError: string): void {
  const where = `${route.id} ${route.method} ${route.path} -> ${answer.status} ${JSON.stringify(answer.body)?.slice(0, 200)}`;
  assert.ok(answer.status < 500 || answer.status === 501, `server error: ${where}`);
  assert.notEqual(answer.status, 405, `method not routed: ${where}`);
  if (answer.status >= 400) {
    const body = answer.body as { error?: unknown; code?: unknown };
    assert.equal(typeof body?.error, 'string', `error envelope: ${where}`);
    assert.notEqual(body.error, missError, `route miss for a catalog path: ${where}`);
    if (body.code !== undefined) assert.ok(allowedCodes(route).has(String(body.code)), `undocumented code: ${where}`);
    return;
  }
  assert.equal(answer.status, route.response.status, `success status: ${where}`);
  const expectedType = route.response.contentType ?? 'application/json';
  assert.ok(answer.contentType.startsWith(expectedType), `content type ${answer.contentType}: ${where}`);
  const validator = validators.get(route.id);
  if (validator && expectedType === 'application/json') {
    assert.ok(validator.Check(answer.body), `response schema: ${where} ${JSON.stringify([...validator.Errors(answer.body)].slice(0, 3))}`);
  }
}

/** Session routes with the archive last, so every other route still sees a live session. */
const SESSION_ORDER = [...SESSION_ROUTES].sort((a, b) => Number(a.id === 'sessions.archive') - Number(b.id === 'sessions.archive'));

for (const transport of ['uws', 'node'] as const) {
  describe(`route catalog coverage (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('the catalog has no duplicate ids or method+path pairs', () => {
      assert.equal(new Set(ALL_ROUTES.map((r) => r.id)).size, ALL_ROUTES.length);
      assert.equal(new Set(ALL_ROUTES.map((r) => `${r.method} ${r.path}`)).size, ALL_ROUTES.length);
    });

    it('every catalog entry is routed, with a dummy session id: never a miss, never 500, only documented codes', async (t) => {
      const app = await startApp(t, [], opts);
      const miss = await request(app.url, { ...SYSTEM_ROUTES[0], method: 'GET' }, '/zz-no-such-route', undefined);
      assert.equal(miss.status, 404);
      const missError = (method: string, path: string) =>
        String((miss.body as { error: string }).error).replace('GET /zz-no-such-route', `${method} ${path}`);
      for (const route of ALL_ROUTES) {
        const path = concretePath(route, DUMMY_UUID);
        const answer = await request(app.url, route, path, route.body ? sampleBody(route, DUMMY_UUID) : undefined);
        checkAnswer(route, answer, missError(route.method, path));
        if (SESSION_ROUTES.includes(route) && route.path.includes('{id}') && answer.status >= 400) {
          assert.ok([400, 404].includes(answer.status), `${route.id}: ${answer.status} ${JSON.stringify(answer.body)}`);
        }
      }
      const health = await fetch(`${app.url}/health`);
      assert.equal(await health.text(), 'ok');
    });

    it('every session route answers within its contract for a live session', async (t) => {
      const app = await startApp(t, [], opts);
      const created = await request(app.url, SESSION_ROUTES[0], '/sessions', { prompt: 'seed' });
      assert.equal(created.status, 200);
      const id = (created.body as { session_id: string }).session_id;
      const noMiss = 'no route miss expected';
      for (const route of SESSION_ORDER) {
        const answer = await request(app.url, route, concretePath(route, id), route.body ? sampleBody(route, id) : undefined);
        checkAnswer(route, answer, noMiss);
        if (route.path.includes('{id}')) assert.equal(answer.status, 200, `${route.id}: ${JSON.stringify(answer.body)}`);
      }
    });
  });
}
