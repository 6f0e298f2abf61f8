// OpenAI Responses over Warren sessions, driven by the official `openai` client: plain, streamed, chained
// with previous_response_id, in background then retrieved and cancelled, a server-side tool call as an
// mcp_call item; the session then read through Warren's own history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

function client(url: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
}

describe('OpenAI Responses (openai SDK)', () => {
  it('create, stream, chain with previous_response_id, then one transcript in Warren history', async (t) => {
    const app = await startApp(t, [{ text: 'first answer', usage: { input_tokens: 3, output_tokens: 2 } }, { chunks: ['sec', 'ond'] }]);
    const openai = client(app.url);
    const r1 = await openai.responses.create({ model: 'warren', input: 'hello', instructions: 'be brief' });
    assert.equal(r1.status, 'completed');
    assert.equal(r1.output_text, 'first answer');
    assert.equal(r1.usage?.total_tokens, 5);
    const sessionId = (r1 as unknown as { session_id: string }).session_id;
    assert.ok(sessionId);

    const stream = await openai.responses.create({ model: 'warren', input: 'again', previous_response_id: r1.id, stream: true });
    const types: string[] = [];
    let text = '';
    let done: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') done = ev.response;
    }
    assert.equal(text, 'second');
    assert.equal(types[0], 'response.created');
    assert.equal(types.at(-1), 'response.completed');
    assert.ok(types.includes('response.output_item.done'));
    assert.equal(done?.previous_response_id, r1.id);
    assert.equal((done as unknown as { session_id: string }).session_id, sessionId, 'previous_response_id continues the same session');

    const again = await openai.responses.retrieve(done!.id);
    assert.equal(again.output_text, 'second');

    const hist = await call(app.url, 'GET', `/sessions/${sessionId}/history`);
    assert.equal(hist.status, 200);
    const rows = hist.body.messages as Array<{ role: string; content?: unknown; blocks?: Array<{ data: { text?: string } }> }>;
    assert.deepEqual(
      rows.map((m) => m.role),
      ['system', 'user', 'block_assistant', 'user', 'block_assistant'],
    );
    assert.equal(rows[0].content, 'be brief', 'instructions become the system prompt');
    assert.equal(rows[1].content, 'hello');
    assert.equal(rows[4].blocks?.[0].data.text, 'second');
  });

  it('runs Warren tools server side and reports them as mcp_call items', async (t) => {
    const app = await startApp(t, [
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] },
      { text: 'made it' },
    ]);
    const r = await client(app.url).responses.create({ model: 'warren', input: 'make a task', enable_builtins: true } as never);
    assert.equal(r.status, 'completed');
    const kinds = r.output.map((o) => o.type);
    assert.deepEqual(kinds, ['mcp_call', 'message']);
    const mcp = r.output[0] as OpenAI.Responses.ResponseOutputItem.McpCall;
    assert.equal(mcp.name, 'task_create');
    assert.deepEqual(JSON.parse(mcp.arguments), { subject: 's', description: 'd' });
    assert.equal(JSON.parse(mcp.output!).subject, 's');
    assert.equal(r.output_text, 'made it');
  });

  it('background: answers at once, retrieve reports it running then completed; cancel stops a running one', async (t) => {
    const open = deferred();
    const hold = deferred();
    const app = await startApp(t, [
      { text: 'later', waitFor: open.promise },
      { text: 'never', waitFor: hold.promise },
    ]);
    const openai = client(app.url);
    const bg = await openai.responses.create({ model: 'warren', input: 'slow', background: true });
    assert.equal(bg.status, 'in_progress');
    assert.equal(bg.background, true);
    assert.equal((await openai.responses.retrieve(bg.id)).status, 'in_progress');
    open.resolve();
    const stream = await openai.responses.retrieve(bg.id, { stream: true });
    let final: OpenAI.Responses.Response | undefined;
    for await (const ev of stream) if (ev.type === 'response.completed') final = ev.response;
    assert.equal(final?.output_text ?? (await openai.responses.retrieve(bg.id)).output_text, 'later');
    const got = await openai.responses.retrieve(bg.id);
    assert.equal(got.status, 'completed');
    assert.equal(got.output_text, 'later');

    const bg2 = await openai.responses.create({ model: 'warren', input: 'stuck', background: true, previous_response_id: bg.id });
    const cancelled = await openai.responses.cancel(bg2.id);
    assert.equal(cancelled.status, 'cancelled');
    assert.equal((await openai.responses.retrieve(bg2.id)).status, 'cancelled');
  });

  it('refuses what it cannot express with the error envelope', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/v1/responses', {
      model: 'warren',
      input: 'x',
      tools: [{ type: 'function', name: 'f', parameters: {} }],
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 'BAD_REQUEST');
    const missing = await call(app.url, 'GET', '/v1/responses/resp_nope');
    assert.equal(missing.status, 404);
    const chained = await call(app.url, 'POST', '/v1/responses', { input: 'x', previous_response_id: 'resp_nope' });
    assert.equal(chained.status, 404);
  });
});
