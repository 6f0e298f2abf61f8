// Structured output through the real server: output_schema (wrapper and raw) on create and continue,
// extraction after the committed turn with retries, extraction_error, schema_warnings and the 400s.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { uwsSkip } from '../helpers/absent.ts';
import { assertFeatureEventShapes } from '../helpers/feature-events.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

const SCHEMA = { type: 'object', properties: { answer: { type: 'integer' } }, required: ['answer'] };
const UWS_SKIP = uwsSkip();

async function ledgerKinds(base: string, id: string): Promise<Array<{ type: string; [k: string]: unknown }>> {
  const res = await call(base, 'GET', `/sessions/${id}/ledger`);
  assert.equal(res.status, 200);
  const payloads = res.body.events.map((e: { payload: { type: string } }) => e.payload);
  assertFeatureEventShapes(payloads);
  return payloads;
}

for (const transport of ['node', 'uws'] as const) {
  describe(`structured output (${transport})`, { skip: transport === 'uws' ? UWS_SKIP : undefined }, () => {
    const opts = { httpTransport: transport };

    it('extracts after the committed turn: raw schema, native slot, no tools, turns counts the attempt', async (t) => {
      const app = await startApp(t, [{ text: 'The answer is 42.' }, { text: '{"answer": 42}' }], opts);
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'what is it?', output_schema: SCHEMA, enable_builtins: true });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.text, 'The answer is 42.');
      assert.deepEqual(res.body.structured_output, { answer: 42 });
      assert.equal(res.body.turns, 2);
      assert.ok(!('extraction_error' in res.body) && !('schema_warnings' in res.body), 'optional members omitted');
      const [main, extraction] = app.provider.requests;
      assert.ok(main.tools.length > 0 && main.json_schema === undefined);
      assert.deepEqual(extraction.tools, []);
      assert.equal(extraction.json_schema?.name, 'output');
      assert.deepEqual(extraction.json_schema?.schema.required, ['answer']);
      const history = await call(app.url, 'GET', `/sessions/${res.body.session_id}/history`);
      assert.deepEqual(
        history.body.messages.map((m: { role: string }) => m.role),
        ['user', 'block_assistant', 'user', 'block_assistant'],
      );
      const events = await ledgerKinds(app.url, res.body.session_id);
      const completed = events.find((e) => e.type === 'run_completed');
      assert.equal(completed?.extraction_required, true);
      assert.equal(completed?.result, 'The answer is 42.');
      const ok = events.find((e) => e.type === 'extraction_succeeded');
      assert.deepEqual(ok?.structured_output, { answer: 42 });
      assert.ok(events.indexOf(completed!) < events.indexOf(ok!));
    });

    it('accepts the wrapper form, strips fences, unwraps a named wrapper object and retries with the error fed back', async (t) => {
      const app = await startApp(
        t,
        [
          { text: 'done' },
          { text: 'not json at all' },
          { text: '{"answer": "forty-two"}' },
          { text: '```json\n{"result": {"answer": 7}}\n```' },
        ],
        opts,
      );
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'go',
        output_schema: { schema: SCHEMA, name: 'result', strict: false, compat: 'lossy', format: 'warren_v1' },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.structured_output, { answer: 7 });
      assert.equal(res.body.turns, 4);
      const retry = app.provider.requests[3].messages.at(-1);
      assert.equal(retry?.role, 'user');
      assert.match(String(retry?.role === 'user' ? retry.content : ''), /previous output was invalid: .*must be integer/);
      assert.equal(app.provider.requests[1].json_schema?.name, 'result');
    });

    it('reports extraction_error with the committed text after retries + 1 attempts (HTTP 200)', async (t) => {
      const app = await startApp(t, [{ text: 'plain answer' }, { text: 'nope' }, { text: '{"answer": true}' }], opts);
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'go', output_schema: SCHEMA, structured_output_retries: 1 });
      assert.equal(res.status, 200);
      assert.equal(res.body.text, 'plain answer');
      assert.ok(!('structured_output' in res.body));
      assert.equal(res.body.extraction_error.last_output, 'plain answer');
      assert.equal(res.body.extraction_error.attempts, 2);
      assert.match(res.body.extraction_error.reason, /does not match the schema/);
      assert.equal(res.body.turns, 3);
      const events = await ledgerKinds(app.url, res.body.session_id);
      const failed = events.find((e) => e.type === 'extraction_failed');
      assert.equal(failed?.attempts, 2);
      assert.ok(!events.some((e) => e.type === 'run_failed'), 'extraction failure is not a run failure');
    });

    it('null retries use [agent] structured_output_retries (default 2) at create', async (t) => {
      const app = await startApp(t, [], opts);
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'x', output_schema: SCHEMA, structured_output_retries: null });
      assert.equal(res.body.extraction_error.attempts, 3, 'echo replies never match: 2 retries + 1');
      assert.equal((await call(app.url, 'PATCH', '/config', { agent: { structured_output_retries: 0 } })).status, 200);
      const again = await call(app.url, 'POST', '/sessions', { prompt: 'x', output_schema: SCHEMA });
      assert.equal(again.body.extraction_error.attempts, 1);
      assert.equal(again.body.turns, 2);
    });

    it('continue: output_schema per turn; retries inherit the persisted session value', async (t) => {
      const app = await startApp(t, [{ text: 'first' }, { text: 'second' }, { text: 'bad' }], opts);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'a', structured_output_retries: 0 });
      assert.equal(created.status, 200);
      assert.ok(!('structured_output' in created.body) && !('extraction_error' in created.body));
      const id = created.body.session_id;
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'b', output_schema: SCHEMA });
      assert.equal(res.status, 200);
      assert.equal(res.body.extraction_error.attempts, 1, 'retries 0 persisted at create');
      const again = await call(app.url, 'POST', `/sessions/${id}/messages`, {
        session_id: id,
        prompt: 'c',
        output_schema: SCHEMA,
        structured_output_retries: 1,
      });
      assert.equal(again.body.extraction_error.attempts, 2, 'an explicit value replaces the persisted one');
    });

    it('answers 400 before anything runs for invalid JSON Schema, a non-object root or a bad wrapper field', async (t) => {
      const app = await startApp(t, [], opts);
      const bad = [
        { type: 'object', properties: { a: { type: 'no-such-type' } } },
        { type: 'array', items: { type: 'string' } },
        { schema: SCHEMA, compat: 'sometimes' },
        { schema: SCHEMA, format: 'other_v9' },
        { type: 'object', properties: { a: { $ref: '#/$defs/missing' } } },
      ];
      for (const output_schema of bad) {
        const res = await call(app.url, 'POST', '/sessions', { prompt: 'x', output_schema });
        assert.equal(res.status, 400, JSON.stringify(output_schema));
        assert.equal(res.body.code, 'BAD_REQUEST');
      }
      assert.equal(app.provider.requests.length, 0);
      assert.equal((await call(app.url, 'GET', '/sessions')).body.sessions.length, 0);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'x' });
      const id = created.body.session_id;
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'y', output_schema: bad[1] });
      assert.equal(res.status, 400);
      assert.equal(app.provider.requests.length, 1);
    });

    it('compat: lossy drops what the provider slot cannot express with schema_warnings; strict answers 400', async (t) => {
      const app = await startApp(t, [{ text: 'x' }, { text: '{"n": 5}' }], opts);
      const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
      const strict = await call(app.url, 'POST', '/sessions', {
        prompt: 'x',
        provider: 'anthropic',
        output_schema: { schema, compat: 'strict' },
      });
      assert.equal(strict.status, 400);
      assert.equal(strict.body.details.schema_warnings[0].path, '/properties/n/minimum');
      const lossy = await call(app.url, 'POST', '/sessions', { prompt: 'x', provider: 'anthropic', output_schema: { schema } });
      assert.equal(lossy.status, 200, JSON.stringify(lossy.body));
      assert.deepEqual(lossy.body.structured_output, { n: 5 });
      assert.deepEqual(
        lossy.body.schema_warnings.map((w: { provider: string; path: string }) => [w.provider, w.path]),
        [['anthropic', '/properties/n/minimum']],
      );
      const sent = app.provider.requests[1].json_schema?.schema as {
        properties: { n: Record<string, unknown> };
        additionalProperties: unknown;
      };
      assert.equal(sent.properties.n.minimum, undefined);
      assert.equal(sent.additionalProperties, false);
    });

    it('an interrupt during extraction keeps the committed turn: 200 with extraction_error, session usable', async (t) => {
      const entered = deferred();
      const never = deferred();
      const app = await startApp(
        t,
        (_req, i) => {
          if (i === 0) return { text: 'committed answer' };
          if (i > 1) return { text: 'next' };
          entered.resolve();
          return { text: '{}', waitFor: never.promise };
        },
        opts,
      );
      const pending = call(app.url, 'POST', '/sessions', { prompt: 'x', output_schema: SCHEMA });
      await entered.promise;
      const id = (await call(app.url, 'GET', '/sessions')).body.sessions[0].session_id;
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/interrupt`)).body.interrupted, true);
      const res = await pending;
      assert.equal(res.status, 200);
      assert.equal(res.body.text, 'committed answer');
      assert.match(res.body.extraction_error.reason, /interrupted/);
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 2, 'the turn, not the cut extraction');
      const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'y' });
      assert.equal(next.status, 200);
    });

    it('/capabilities reports structured_output and hooks Available', async (t) => {
      const app = await startApp(t, [], opts);
      const res = await call(app.url, 'GET', '/capabilities');
      const status = Object.fromEntries(res.body.capabilities.map((c: { id: string; status: unknown }) => [c.id, c.status]));
      assert.equal(status.structured_output, 'Available');
      assert.equal(status.hooks, 'Available');
    });

    it('still validates dropped constraints locally', async (t) => {
      const app = await startApp(t, [{ text: 'x' }, { text: '{"n": 0}' }], opts);
      const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 1 } }, required: ['n'] };
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'x',
        provider: 'anthropic',
        output_schema: schema,
        structured_output_retries: 0,
      });
      assert.equal(res.status, 200);
      assert.match(res.body.extraction_error.reason, /must be >= 1/);
      assert.equal(res.body.schema_warnings.length, 1);
    });
  });
}
