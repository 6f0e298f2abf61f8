// The LangGraph Agent Protocol over Warren sessions, driven by @langchain/langgraph-sdk's client: create a
// thread, runs.wait, runs.stream in each supported mode, getState/getHistory, cancel, a resumed join
// stream; then the same session through Warren's own history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@langchain/langgraph-sdk';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

type Msg = { type: string; content: string; tool_calls?: Array<{ name: string }> };

describe('LangGraph Agent Protocol (@langchain/langgraph-sdk)', () => {
  it('thread, runs.wait, runs.stream in each mode, state and history, one transcript', async (t) => {
    const app = await startApp(t, [
      { text: 'one' },
      { chunks: ['tw', 'o'] },
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_9' }] },
      { chunks: ['thr', 'ee'] },
      { text: 'four' },
      { text: 'five' },
    ]);
    const client = new Client({ apiUrl: app.url });
    const [assistant] = await client.assistants.search();
    assert.equal(assistant.assistant_id, 'agent');
    const thread = await client.threads.create();
    const empty = await client.threads.getState(thread.thread_id);
    assert.deepEqual((empty.values as { messages: Msg[] }).messages, []);

    const values = (await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'hi' }] } })) as {
      messages: Msg[];
    };
    assert.deepEqual(
      values.messages.map((m) => [m.type, m.content]),
      [
        ['human', 'hi'],
        ['ai', 'one'],
      ],
    );

    // messages-tuple: the deltas; values: the state before and after.
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const p of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ type: 'human', content: 'again' }] },
      streamMode: ['values', 'messages-tuple', 'updates'],
    })) {
      parts.push(p as { event: string; data: unknown });
    }
    assert.equal(parts[0].event, 'metadata');
    const deltas = parts.filter((p) => p.event === 'messages').map((p) => (p.data as [{ content: string }])[0].content);
    assert.deepEqual(deltas, ['tw', 'o']);
    const lastValues = parts.filter((p) => p.event === 'values').at(-1)!.data as { messages: Msg[] };
    assert.deepEqual(
      lastValues.messages.map((m) => m.content),
      ['hi', 'one', 'again', 'two'],
    );
    assert.ok(parts.some((p) => p.event === 'updates'));

    // messages + events with a server-side tool call.
    const tool: Array<{ event: string; data: unknown }> = [];
    for await (const p of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'tool please' }] },
      streamMode: ['messages', 'events'],
    })) {
      tool.push(p as { event: string; data: unknown });
    }
    const complete = tool.filter((p) => p.event === 'messages/complete').map((p) => (p.data as Msg[])[0]);
    assert.deepEqual(
      complete.map((m) => m.type),
      ['ai', 'tool', 'ai'],
    );
    assert.equal(complete[0].tool_calls?.[0].name, 'task_create');
    assert.equal(complete[2].content, 'three');
    assert.ok(tool.some((p) => p.event === 'events' && (p.data as { event: string }).event === 'on_tool_end'));

    const state = await client.threads.getState(thread.thread_id);
    const msgs = (state.values as { messages: Msg[] }).messages;
    assert.deepEqual(
      msgs.map((m) => m.type),
      ['human', 'ai', 'human', 'ai', 'human', 'ai', 'tool', 'ai'],
    );
    const history = await client.threads.getHistory(thread.thread_id);
    assert.equal(history.length, 3, 'one checkpoint per run');
    assert.equal((history[2].values as { messages: Msg[] }).messages.length, 2);

    // Warren's own history reads the same session.
    const hist = await call(app.url, 'GET', `/sessions/${thread.thread_id}/history`);
    assert.equal(hist.status, 200);
    assert.deepEqual(
      (hist.body.messages as Array<{ role: string }>).map((m) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant', 'user', 'block_assistant', 'tool_results', 'block_assistant'],
    );
  });

  it('background run: get, join, cancel maps onto interrupt; a resumed join stream repeats nothing', async (t) => {
    const hold = deferred();
    const open = deferred();
    const app = await startApp(t, [
      { chunks: ['a', 'b', 'c'], waitFor: open.promise },
      { text: 'never', waitFor: hold.promise },
    ]);
    const client = new Client({ apiUrl: app.url });
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'x' }] },
      streamMode: ['values', 'updates', 'messages-tuple'],
    });
    assert.equal(run.status, 'running');
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'running');
    open.resolve();
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as { messages: Msg[] };
    assert.equal(joined.messages.at(-1)?.content, 'abc');
    assert.equal((await client.runs.get(thread.thread_id, run.run_id)).status, 'success');

    // The join stream from the start, then resumed after its second frame: the tail exactly once.
    const res = await fetch(`${app.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`);
    const all = [...(await res.text()).matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
    assert.ok(all.length >= 4, `frames: ${all.join(',')}`);
    const resumed = await fetch(`${app.url}/threads/${thread.thread_id}/runs/${run.run_id}/stream`, {
      headers: { 'last-event-id': all[1] },
    });
    const tail = [...(await resumed.text()).matchAll(/^id: (.+)$/gm)].map((m) => m[1]);
    assert.deepEqual(tail, all.slice(2));

    const stuck = await client.runs.create(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'y' }] } });
    const cancelled = await client.runs.cancel(thread.thread_id, stuck.run_id, true);
    assert.equal((cancelled as unknown as { status: string }).status, 'interrupted');
    assert.equal((await client.runs.get(thread.thread_id, stuck.run_id)).status, 'interrupted');
  });
});
