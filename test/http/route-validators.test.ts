// test/http/route-validators.test.ts: route body checks are compiled on a route's first request
// (http/validate.ts), so a fresh server's first request to each route must still be checked. For every
// route of the live catalog (GET /openapi.json) whose body schema is an object, the first request with a
// JSON number as body answers 400 BAD_REQUEST naming the body (auth routes: their error-only envelope),
// never a 500; and a route whose check has compiled keeps checking on later requests.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';

interface Schema {
  type?: string;
  $ref?: string;
}
interface Operation {
  operationId: string;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

describe('route body checks compiled on first use', () => {
  it('the first request to each object-body route is checked (400, never 500), and so is the second', async (t) => {
    const app = await startApp(t);
    const doc = await call(app.url, 'GET', '/openapi.json');
    assert.equal(doc.status, 200);
    const schemas = doc.body.components.schemas as Record<string, Schema>;
    const resolve = (s: Schema | undefined): Schema | undefined =>
      s?.$ref ? resolve(schemas[s.$ref.slice('#/components/schemas/'.length)]) : s;

    const checked: string[] = [];
    for (const [path, methods] of Object.entries(doc.body.paths as Record<string, Record<string, Operation>>)) {
      for (const [method, op] of Object.entries(methods)) {
        const schema = resolve(op.requestBody?.content?.['application/json']?.schema);
        if (schema?.type !== 'object') continue;
        const url = path.replace(/\{[^}]+\}/g, 'x');
        const first = await call(app.url, method.toUpperCase(), url, 7);
        if (first.status === 501) continue; // a capability this build does not include: refused before its body
        const second = await call(app.url, method.toUpperCase(), url, 7);
        for (const [which, reply] of [
          ['first', first],
          ['second', second],
        ] as const) {
          assert.equal(reply.status, 400, `${which} ${method.toUpperCase()} ${url} (${op.operationId}): ${JSON.stringify(reply.body)}`);
          const message = (reply.body.message ?? reply.body.error_description ?? reply.body.error ?? '') as string;
          assert.match(JSON.stringify(reply.body), /body|BAD_REQUEST|invalid_request/i, `${op.operationId}: ${message}`);
        }
        checked.push(op.operationId);
      }
    }
    assert.ok(checked.length >= 30, `object-body routes checked: ${checked.length}`);
    assert.ok(checked.includes('sessions.create') && checked.includes('protocols.langgraph.threads.create'), checked.join(' '));
  });
});
