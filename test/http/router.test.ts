// test/http/router.test.ts: the router over a real node:http server on 127.0.0.1:0.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Type } from 'typebox';
import { ServiceError } from '../../contracts/errors.ts';
import type { RouteDef } from '../../contracts/route.ts';
import type { HandlerTable } from '../../http/handler.ts';
import { createRouter } from '../../http/router.ts';
import { createNodeServer } from '../../http/server-node.ts';
import type { HttpResponder } from '../../http/transport.ts';

const MAX_BODY = 64;

const routes: RouteDef[] = [
  {
    id: 'echo.post',
    method: 'POST',
    path: '/echo/{name}',
    summary: 'echo',
    body: Type.Object({ n: Type.Integer() }),
    response: { status: 200 },
    errors: [],
  },
  {
    id: 'items.get',
    method: 'GET',
    path: '/items/{id}',
    summary: 'item',
    query: Type.Object({ limit: Type.Optional(Type.String({ pattern: '^[0-9]+$' })) }),
    response: { status: 200 },
    errors: [],
  },
  { id: 'items.delete', method: 'DELETE', path: '/items/{id}', summary: 'del', response: { status: 200 }, errors: [] },
  { id: 'items.special', method: 'GET', path: '/items/special', summary: 'static', response: { status: 200 }, errors: [] },
  { id: 'nobody.post', method: 'POST', path: '/nobody', summary: 'no body schema', response: { status: 200 }, errors: [] },
  { id: 'fail.service', method: 'GET', path: '/fail/service', summary: 'x', response: { status: 200 }, errors: ['SESSION_BUSY'] },
  { id: 'fail.plain', method: 'GET', path: '/fail/plain', summary: 'x', response: { status: 200 }, errors: [] },
  { id: 'text.get', method: 'GET', path: '/text', summary: 'x', response: { status: 200, contentType: 'text/plain' }, errors: [] },
  {
    id: 'later.widget',
    method: 'POST',
    path: '/later/{id}',
    summary: 'not built',
    body: Type.Object({ strict: Type.Boolean() }),
    response: { status: 200 },
    errors: [],
    capability: 'widgets',
  },
  { id: 'later.nocap', method: 'GET', path: '/nocap', summary: 'not built', response: { status: 200 }, errors: [] },
];

const handlers: HandlerTable = {
  'echo.post': (ctx) => ({ status: 200, body: { params: ctx.params, body: ctx.body, requestId: ctx.requestId } }),
  'items.get': (ctx) => ({ status: 200, body: { params: ctx.params, query: ctx.query } }),
  'items.delete': () => ({ status: 200, body: { deleted: true } }),
  'items.special': () => ({ status: 200, body: { special: true } }),
  'nobody.post': (ctx) => ({ status: 200, body: { bodyIsUndefined: ctx.body === undefined } }),
  'fail.service': () => {
    throw new ServiceError('SESSION_BUSY', 'turn already running', { session_id: 's1' });
  },
  'fail.plain': async () => {
    throw new Error('boom: secret internals');
  },
  'text.get': () => ({ status: 200, text: 'hello' }),
};

const logLines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, cb) {
    for (const line of chunk.toString('utf8').split('\n')) if (line) logLines.push(JSON.parse(line) as Record<string, unknown>);
    cb();
  },
});
const logger = pino({ level: 'debug' }, sink);

describe('router', () => {
  const server = createNodeServer({
    handler: createRouter({ routes, handlers, logger, maxBodyBytes: MAX_BODY }),
    maxBodyBytes: MAX_BODY,
    logger,
  });
  let base = '';
  before(async () => {
    const { port } = await server.listen('127.0.0.1', 0);
    base = `http://127.0.0.1:${port}`;
  });
  after(() => server.close());

  async function call(path: string, init: RequestInit = {}): Promise<{ status: number; headers: Headers; json: Record<string, unknown> }> {
    const res = await fetch(base + path, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
  const post = (path: string, body: string, contentType = 'application/json') =>
    call(path, { method: 'POST', body, headers: { 'content-type': contentType } });

  it('answers an unknown path with 404 NOT_FOUND in the envelope', async () => {
    const r = await call('/nope/at/all');
    assert.equal(r.status, 404);
    assert.equal(r.json.code, 'NOT_FOUND');
    assert.equal(typeof r.json.error, 'string');
    assert.match(r.headers.get('content-type') ?? '', /^application\/json/);
  });

  it('answers a known path with the wrong method with 405 and an Allow header', async () => {
    const r = await call('/echo/x');
    assert.equal(r.status, 405);
    assert.equal(r.json.code, 'METHOD_NOT_ALLOWED');
    assert.equal(r.headers.get('allow'), 'POST');
    const r2 = await call('/items/1', { method: 'PUT' });
    assert.equal(r2.headers.get('allow'), 'DELETE, GET');
  });

  it('answers an oversized body with 413 PAYLOAD_TOO_LARGE', async () => {
    const r = await post('/echo/a', JSON.stringify({ n: 1, pad: 'x'.repeat(MAX_BODY * 2) }));
    assert.equal(r.status, 413);
    assert.equal(r.json.code, 'PAYLOAD_TOO_LARGE');
  });

  it('answers a non-JSON content-type with 415 and accepts +json types', async () => {
    const r = await post('/echo/a', '{"n":1}', 'text/plain');
    assert.equal(r.status, 415);
    assert.equal(r.json.code, 'UNSUPPORTED_MEDIA_TYPE');
    const ok = await post('/echo/a', '{"n":1}', 'application/merge-patch+json; charset=utf-8');
    assert.equal(ok.status, 200);
  });

  it('answers an empty body with 400 request body required', async () => {
    const r = await post('/echo/a', '');
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { error: 'request body required', code: 'BAD_REQUEST' });
  });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    const r = await post('/echo/a', '{"n":');
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'BAD_REQUEST');
    assert.match(String(r.json.error), /^malformed JSON: /);
  });

  it('answers a schema mismatch with 400 and the failing paths in details', async () => {
    const r = await post('/echo/a', JSON.stringify({ n: 'one' }));
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'BAD_REQUEST');
    const errors = (r.json.details as { errors: Array<{ path: string; message: string }> }).errors;
    assert.equal(errors[0].path, '/n');
    assert.equal(typeof errors[0].message, 'string');
  });

  it('passes a valid body and decoded params to the handler', async () => {
    const r = await post('/echo/hello%20w%C3%B6rld', JSON.stringify({ n: 7 }));
    assert.equal(r.status, 200);
    assert.deepEqual(r.json.params, { name: 'hello wörld' });
    assert.deepEqual(r.json.body, { n: 7 });
  });

  it('answers malformed percent-encoding in a path parameter with 400', async () => {
    const r = await post('/echo/%E0%A4%A', JSON.stringify({ n: 7 }));
    assert.equal(r.status, 400);
    assert.equal(r.json.code, 'BAD_REQUEST');
  });

  it('validates the query against the route query schema', async () => {
    const bad = await call('/items/1?limit=abc');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, 'BAD_REQUEST');
    const good = await call('/items/1?limit=5&x=1&x=2');
    assert.equal(good.status, 200);
    assert.deepEqual(good.json.query, { limit: '5', x: '1' });
    const odd = await call('/items/1?constructor=c&__proto__=p&toString=t');
    assert.deepEqual(odd.json.query, JSON.parse('{"constructor":"c","__proto__":"p","toString":"t"}'));
  });

  it('prefers a static segment over a parameter', async () => {
    assert.deepEqual((await call('/items/special')).json, { special: true });
    assert.deepEqual((await call('/items/other')).json.params, { id: 'other' });
  });

  it('ignores bodies on routes without a body schema', async () => {
    const r = await post('/nobody', 'not json at all', 'text/plain');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { bodyIsUndefined: true });
  });

  it('answers a catalog route without a handler with 501 CAPABILITY_UNAVAILABLE, whatever the body', async () => {
    const r = await post('/later/1', 'garbage', 'text/plain');
    assert.equal(r.status, 501);
    assert.deepEqual(r.json, {
      error: 'capability not available in this build: widgets',
      code: 'CAPABILITY_UNAVAILABLE',
      details: { capability: 'widgets' },
    });
    const r2 = await call('/nocap');
    assert.equal(r2.status, 501);
    assert.deepEqual(r2.json.details, { capability: 'later.nocap' });
  });

  it('maps a thrown ServiceError onto its table status and envelope', async () => {
    const r = await call('/fail/service');
    assert.equal(r.status, 409);
    assert.deepEqual(r.json, { error: 'turn already running', code: 'SESSION_BUSY', details: { session_id: 's1' } });
  });

  it('maps a thrown plain Error to 500 INTERNAL_ERROR, logs it once and keeps serving', async () => {
    logLines.length = 0;
    const r = await call('/fail/plain', { headers: { 'x-request-id': 'req-plain-1' } });
    assert.equal(r.status, 500);
    assert.deepEqual(r.json, { error: 'internal error', code: 'INTERNAL_ERROR' });
    const withErr = logLines.filter((l) => l.err !== undefined);
    assert.equal(withErr.length, 1);
    assert.equal(withErr[0].level, 50);
    assert.equal(withErr[0].reqId, 'req-plain-1');
    assert.match(String((withErr[0].err as { message: string }).message), /boom/);
    const access = logLines.find((l) => l.msg === 'request');
    assert.equal(access?.status, 500);
    assert.equal(access?.level, 50);
    assert.equal((await call('/items/special')).status, 200);
  });

  it('writes text results as text/plain; charset=utf-8', async () => {
    const res = await fetch(`${base}/text`);
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await res.text(), 'hello');
  });

  it('echoes a sane incoming x-request-id and generates one otherwise', async () => {
    const r = await post('/echo/a', '{"n":1}', 'application/json');
    const generated = r.headers.get('x-request-id') ?? '';
    assert.match(generated, /^[0-9a-f-]{36}$/);
    assert.equal(r.json.requestId, generated);
    const echoed = await call('/echo/a', {
      method: 'POST',
      body: '{"n":1}',
      headers: { 'x-request-id': 'abc-123', 'content-type': 'application/json' },
    });
    assert.equal(echoed.headers.get('x-request-id'), 'abc-123');
    assert.equal(echoed.json.requestId, 'abc-123');
    const tooLong = await call('/items/special', { headers: { 'x-request-id': 'a'.repeat(129) } });
    assert.notEqual(tooLong.headers.get('x-request-id'), 'a'.repeat(129));
    const spaced = await call('/items/special', { headers: { 'x-request-id': 'has space' } });
    assert.notEqual(spaced.headers.get('x-request-id'), 'has space');
  });

  it('logs each request at debug with method, path, status and duration under the request id', async () => {
    logLines.length = 0;
    await call('/items/special', { headers: { 'x-request-id': 'dbg-1' } });
    const line = logLines.find((l) => l.msg === 'request' && l.reqId === 'dbg-1');
    assert.ok(line);
    assert.equal(line.level, 20);
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/items/special');
    assert.equal(line.status, 200);
    assert.equal(typeof line.durationMs, 'number');
  });
});

describe('router (direct)', () => {
  it('never writes to a responder whose client went away', async () => {
    const silent = pino({ level: 'silent' });
    const route = createRouter({ routes, handlers, logger: silent, maxBodyBytes: MAX_BODY });
    let sent = 0;
    const res: HttpResponder = {
      aborted: true,
      onAbort() {},
      send() {
        sent++;
      },
      startStream() {
        sent++;
      },
      write() {
        sent++;
        return true;
      },
      onDrain() {},
      end() {
        sent++;
      },
    };
    const req = { method: 'GET', path: '/items/special', query: '', headers: {}, body: Buffer.alloc(0), bodyTooLarge: false };
    await route(req, res);
    await route({ ...req, path: '/fail/plain' }, res);
    assert.equal(sent, 0);
  });

  it('refuses a handler key that matches no catalog route', () => {
    assert.throws(
      () =>
        createRouter({
          routes,
          handlers: { ...handlers, 'ghost.route': () => ({ status: 200, body: {} }) },
          logger: pino({ level: 'silent' }),
          maxBodyBytes: MAX_BODY,
        }),
      /ghost\.route/,
    );
  });

  it('refuses a duplicate method and path', () => {
    const dup: RouteDef = { ...routes[0], id: 'echo.dup' };
    assert.throws(
      () => createRouter({ routes: [...routes, dup], handlers, logger: pino({ level: 'silent' }), maxBodyBytes: MAX_BODY }),
      /duplicate route/,
    );
  });
});
