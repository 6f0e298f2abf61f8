// A 400 for a schema mismatch names the field, the allowed values and what was sent, in one readable
// sentence (a union of constants is one issue, not one per constant; a missing field is reported at its
// own path), through the real server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';

describe('validation messages', () => {
  it('a wrong provider names every allowed value and what was sent, once', async (t) => {
    const app = await startApp(t, []);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'scriptd' });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    const message: string = res.body.error;
    assert.match(message, /\/provider must be one of /);
    for (const p of ['"anthropic"', '"openai"', '"gemini"', '"scripted"']) assert.ok(message.includes(p), `${p} named in: ${message}`);
    assert.match(message, /\(got "scriptd"\)/);
    assert.equal(message.match(/\/provider/g)?.length, 1, `one issue for the field: ${message}`);
    assert.deepEqual(
      res.body.details.errors.map((e: { path: string }) => e.path),
      ['/provider'],
    );
  });

  it('a missing field is reported at its own path as required', async (t) => {
    const app = await startApp(t, [{ text: 'ok' }]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'scripted' });
    assert.equal(created.status, 200);
    const id: string = created.body.session_id;
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { prompt: 'again' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /\/session_id is required/);
    assert.deepEqual(res.body.details.errors, [{ path: '/session_id', message: 'is required' }]);
  });

  it('a wrong type says what type was expected and what was sent', async (t) => {
    const app = await startApp(t, []);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'scripted', max_tokens: 'many' });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /\/max_tokens must be integer or null \(got "many"\)/);
  });
});
