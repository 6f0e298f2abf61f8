import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';

describe('sessions smoke', () => {
  it('creates a session, continues it and reads history', async (t) => {
    const app = await startApp(t, [{ text: 'hello there', usage: { input_tokens: 5, output_tokens: 2 } }, { text: 'second' }]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.text, 'hello there');
    assert.deepEqual(created.body.usage, { input_tokens: 5, output_tokens: 2, total_tokens: 7 });
    const id = created.body.session_id;
    const cont = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(cont.status, 200, JSON.stringify(cont.body));
    assert.equal(cont.body.text, 'second');
    const hist = await call(app.url, 'GET', `/sessions/${id}/history`);
    assert.equal(hist.status, 200);
    assert.equal(hist.body.message_count, 4);
    assert.deepEqual(
      hist.body.messages.map((m: { role: string }) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant'],
    );
  });
});
