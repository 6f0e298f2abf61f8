// POST /help through the real server: a real session with the fixed help system prompt (README and
// route catalog), every tool category off, answered in the turn response shape; 400 for bad input.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { uwsSkip } from '../helpers/absent.ts';
import { WarrenClient } from '../../client/src/client.ts';
import { call, startApp } from '../helpers/app.ts';

for (const transport of ['node', 'uws'] as const) {
  describe(`POST /help (${transport})`, { skip: transport === 'uws' ? uwsSkip() : undefined }, () => {
    const opts = { httpTransport: transport };

    it('runs a help session from the docs with no tools and answers the turn response shape', async (t) => {
      const app = await startApp(t, [{ text: 'Use POST /sessions.' }], opts);
      await call(app.url, 'PATCH', '/config', { tools: { builtins_enabled: true } });
      const res = await call(app.url, 'POST', '/help', { question: 'How do I start a session?', prompt: 'I use curl', max_tokens: 500 });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.text, 'Use POST /sessions.');
      assert.equal(res.body.execution_mode, 'explain_only');
      assert.equal(res.body.turns, 1);
      assert.equal(typeof res.body.session_id, 'string');
      assert.ok(res.body.usage && typeof res.body.tool_calls === 'number');
      const [req] = app.provider.requests;
      assert.deepEqual(req.tools, [], 'every tool category is off');
      assert.equal(req.max_tokens, 500);
      assert.match(req.system ?? '', /help assistant of Warren/);
      assert.match(req.system ?? '', /POST \/sessions - Create a session/);
      assert.match(req.system ?? '', /POST \/help - /);
      assert.match(req.system ?? '', /## Quick start/, 'the README is in the prompt');
      const user = req.messages.at(-1);
      assert.equal(user?.role === 'user' ? user.content : '', 'How do I start a session?\n\nContext from the caller:\nI use curl');
      const detail = await call(app.url, 'GET', `/sessions/${res.body.session_id}`);
      assert.equal(detail.status, 200, 'the help session is a real session');
    });

    it('plan_execution asks for a plan; model and provider are honoured', async (t) => {
      const app = await startApp(t, [{ text: '1. do this' }], opts);
      const res = await call(app.url, 'POST', '/help', {
        question: 'Set a budget',
        execution_mode: 'plan_execution',
        provider: 'anthropic',
        model: 'claude-haiku-4-5',
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.execution_mode, 'plan_execution');
      assert.equal(app.provider.requests[0].model, 'claude-haiku-4-5');
      assert.match(app.provider.requests[0].system ?? '', /numbered plan/);
      const viaClient = await new WarrenClient(app.url).help({ question: 'And the typed client?' });
      assert.equal(viaClient.execution_mode, 'explain_only');
      assert.equal(typeof viaClient.text, 'string');
    });

    it('answers 400 for a missing question, a bad provider or a bad execution mode', async (t) => {
      const app = await startApp(t, [], opts);
      for (const body of [
        {},
        { question: '' },
        { question: 'q', provider: 'acme' },
        { question: 'q', execution_mode: 'do_it' },
        { question: 'q', max_tokens: 0 },
      ]) {
        const res = await call(app.url, 'POST', '/help', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'BAD_REQUEST');
      }
      assert.equal(app.provider.requests.length, 0);
    });
  });
}
