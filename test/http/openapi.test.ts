// test/http/openapi.test.ts: the OpenAPI document is a complete projection of the catalog and error table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { ERROR_TABLE } from '../../contracts/errors.ts';
import type { RouteDef } from '../../contracts/route.ts';
import { COMMS_ROUTES } from '../../contracts/routes-comms.ts';
import { MOB_ROUTES } from '../../contracts/routes-mob.ts';
import { SYSTEM_ROUTES } from '../../contracts/routes-system.ts';
import { buildOpenApi } from '../../http/openapi.ts';

/** A free-form view of the document for reading it in assertions. */
interface Doc {
  [key: string]: Doc;
}
const list = (node: Doc | undefined): Doc[] => (node as unknown as Doc[] | undefined) ?? [];

const WithQuery = Type.Object({ n: Type.Integer() }, { $id: 'WithQueryBody' });
const extra: RouteDef[] = [
  {
    id: 'probe.query',
    method: 'POST',
    path: '/probe/{probe_id}/items/{item}',
    summary: 'probe',
    query: Type.Object({ limit: Type.String({ description: 'page size' }), after: Type.Optional(Type.String()) }),
    body: WithQuery,
    response: { status: 201, schema: Type.Object({ ref: Type.Ref('WithQueryBody') }) },
    errors: ['SESSION_NOT_FOUND', 'SKILL_NOT_FOUND', 'SESSION_BUSY'],
    headers: ['x-warren-request-id'],
  },
];
const catalog = [...SYSTEM_ROUTES, ...COMMS_ROUTES, ...MOB_ROUTES, ...extra];
const doc = buildOpenApi(catalog, { title: 'Warren', version: '0.1.0' }) as unknown as Doc;

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) collectRefs(n, out);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

describe('openapi projection', () => {
  it('is an OpenAPI 3.1 document with info, paths and components', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.deepEqual(doc.info, { title: 'Warren', version: '0.1.0' });
    assert.equal(typeof doc.paths, 'object');
    assert.equal(typeof doc.components.schemas, 'object');
    JSON.parse(JSON.stringify(doc));
  });

  it('lists every catalog route under its path and method with a unique operationId', () => {
    const ids = new Set<string>();
    for (const route of catalog) {
      const op = doc.paths[route.path]?.[route.method.toLowerCase()];
      assert.ok(op, `${route.method} ${route.path} missing`);
      assert.equal(op.operationId, route.id);
      assert.ok(!ids.has(route.id));
      ids.add(route.id);
      assert.ok(op.responses[String(route.response.status)], `${route.id} success response`);
    }
  });

  it('declares every path template parameter', () => {
    for (const route of catalog) {
      const op = doc.paths[route.path][route.method.toLowerCase()];
      const declared = list(op.parameters)
        .filter((p) => String(p.in) === 'path')
        .map((p) => p.name);
      const template = [...route.path.matchAll(/\{([^{}]+)\}/g)].map((m) => m[1]);
      assert.deepEqual(declared, template, route.id);
    }
  });

  it('contains every ERROR_TABLE code with its status and rpc', () => {
    const text = JSON.stringify(doc);
    const table = doc.components.schemas.ErrorCode['x-error-codes'];
    for (const [code, entry] of Object.entries(ERROR_TABLE)) {
      assert.ok(text.includes(`"${code}"`), code);
      assert.deepEqual(table[code], entry, code);
    }
    assert.deepEqual(doc.components.schemas.ErrorCode.enum, Object.keys(ERROR_TABLE));
  });

  it('resolves every $ref to a component schema', () => {
    const refs = collectRefs(doc);
    assert.ok(refs.length > 0);
    for (const ref of refs) {
      assert.match(ref, /^#\/components\/schemas\//);
      assert.ok(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref);
    }
  });

  it('hoists $id schemas into components and references them, nested ones included', () => {
    const put = doc.paths['/config'].put;
    assert.deepEqual(put.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/ConfigPutBody' });
    assert.deepEqual(put.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ConfigEnvelope' });
    const envelope = doc.components.schemas.ConfigEnvelope;
    assert.deepEqual(envelope.properties.config, { $ref: '#/components/schemas/Config' });
    assert.equal('$id' in envelope, false);
    const probe = doc.paths['/probe/{probe_id}/items/{item}'].post;
    assert.deepEqual(probe.responses['201'].content['application/json'].schema.properties.ref, {
      $ref: '#/components/schemas/WithQueryBody',
    });
  });

  it('projects query parameters, headers and error responses onto the envelope', () => {
    const op = doc.paths['/probe/{probe_id}/items/{item}'].post;
    const query = list(op.parameters).filter((p) => String(p.in) === 'query');
    assert.deepEqual(query, [
      { name: 'limit', in: 'query', required: true, schema: { type: 'string', description: 'page size' }, description: 'page size' },
      { name: 'after', in: 'query', required: false, schema: { type: 'string' } },
    ]);
    assert.deepEqual(
      list(op.parameters).find((p) => String(p.in) === 'header'),
      {
        name: 'x-warren-request-id',
        in: 'header',
        required: false,
        schema: { type: 'string' },
      },
    );
    assert.deepEqual(op.responses['404']['x-error-codes'], ['SESSION_NOT_FOUND', 'SKILL_NOT_FOUND']);
    assert.deepEqual(op.responses['404'].content['application/json'].schema, { $ref: '#/components/schemas/ErrorEnvelope' });
    for (const status of ['400', '409', '413', '415', '500']) assert.ok(op.responses[status], status);
  });

  it('marks capability-gated routes and documents their 501', () => {
    const op = doc.paths['/comms/send'].post;
    assert.equal(op['x-capability'], 'comms');
    assert.deepEqual(op.responses['501']['x-error-codes'], ['CAPABILITY_UNAVAILABLE']);
    assert.ok(doc.paths['/mob/{id}/events'].get.responses['200'].content['text/event-stream']);
    assert.ok(doc.paths['/health'].get.responses['200'].content['text/plain']);
  });

  it('refuses two different schemas under one $id', () => {
    const clash: RouteDef = {
      id: 'clash',
      method: 'GET',
      path: '/clash',
      summary: 'x',
      errors: [],
      response: { status: 200, schema: Type.Object({ other: Type.String() }, { $id: 'ConfigEnvelope' }) },
    };
    assert.throws(() => buildOpenApi([...SYSTEM_ROUTES, clash], { title: 't', version: '1' }), /ConfigEnvelope/);
  });
});
