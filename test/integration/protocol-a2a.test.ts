// A2A over Warren sessions, driven by @a2a-js/sdk's client: its default protocol 1.0 JSON-RPC transport
// (discover the card, SendMessage, SendStreamingMessage, GetTask, CancelTask, SubscribeToTask after dropping
// the stream mid-task: no lost or duplicated part), and its 0.3 transport (legacyCompat) against the 0.3
// card; then the same session through Warren's own history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import {
  a2aConnect as connect,
  a2aFold as fold,
  a2aText as textOf,
  a2aUserMessage as userMessage,
  type A2aArtifact as Artifact,
  type A2aEvent as Ev,
  type A2aPart as Part,
  type A2aTask as Task,
} from '../helpers/protocol-clients.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

/** A 0.3 client: the card as a client that sends no A2A-Version reads it, the SDK's 0.3 transport. */
async function connectLegacy(url: string): Promise<Client> {
  const card = (await (await fetch(`${url}/.well-known/agent-card.json`)).json()) as Record<string, unknown>;
  assert.equal(card.protocolVersion, '0.3.0');
  assert.equal(card.url, `${url}/a2a`);
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
  });
  const client = await factory.createFromAgentCard(card as never);
  assert.equal(client.protocolVersion, '0.3');
  return client;
}

describe('A2A (@a2a-js/sdk)', () => {
  it('discovers the card, sends, streams, gets; one transcript in Warren history', async (t) => {
    const app = await startApp(t, [
      { text: 'hello' },
      { chunks: ['wor', 'ld'] },
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] },
      { text: 'done' },
    ]);
    const card = await fetch(`${app.url}/.well-known/agent-card.json`, { headers: { 'a2a-version': '1.0' } });
    assert.equal(card.status, 200);
    const body = (await card.json()) as {
      supportedInterfaces: Array<{ url: string; protocolVersion: string }>;
      capabilities: { streaming: boolean };
    };
    assert.deepEqual(
      body.supportedInterfaces.map((i) => [i.url, i.protocolVersion]),
      [
        [`${app.url}/a2a`, '1.0'],
        [`${app.url}/a2a`, '0.3'],
      ],
    );
    assert.equal(body.capabilities.streaming, true);
    const client = await connect(app.url);
    // capabilities.extendedAgentCard: the SDK asks GetExtendedAgentCard (the same card, proto-JSON).
    const extended = await client.getAgentCard();
    assert.deepEqual(
      extended.supportedInterfaces.map((i) => i.protocolVersion),
      ['1.0', '0.3'],
    );

    // message/send: a new context creates a session with that id.
    const contextId = randomUUID();
    const sent = (await client.sendMessage(userMessage('hi', contextId))) as unknown as Task;
    assert.equal(sent.contextId, contextId);
    assert.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(sent.artifacts[0].parts), 'hello');
    assert.equal((await call(app.url, 'GET', `/sessions/${contextId}`)).status, 200);

    // message/stream in the same context: Task first, text chunks as artifact updates, final status.
    const events: Ev[] = [];
    for await (const ev of client.sendMessageStream(userMessage('more', contextId))) events.push(ev as unknown as Ev);
    const kinds = events.map((e) => e.payload!.$case);
    assert.deepEqual(kinds, ['task', 'artifactUpdate', 'artifactUpdate', 'artifactUpdate', 'statusUpdate']);
    assert.deepEqual([...fold(events).values()], ['world']);
    const last = events.at(-1)!.payload!.value as { status: { state: number }; final?: boolean };
    assert.equal(last.status.state, TaskState.TASK_STATE_COMPLETED);
    const streamedTask = events[0].payload!.value as unknown as Task;

    // tasks/get: the same task, rebuilt from its durable record and events.
    const got = (await client.getTask({ id: streamedTask.id, historyLength: undefined } as never)) as unknown as Task;
    assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(got.artifacts[0].parts), 'world');

    // A server-side tool call shows as working status updates with data parts.
    const toolEvents: Ev[] = [];
    for await (const ev of client.sendMessageStream(userMessage('tool please', contextId))) toolEvents.push(ev as unknown as Ev);
    const data = toolEvents
      .filter((e) => e.payload!.$case === 'statusUpdate')
      .flatMap((e) => ((e.payload!.value.status as { message?: { parts: Part[] } }).message?.parts ?? []) as Part[])
      .filter((p) => p.content?.$case === 'data')
      .map((p) => (p.content!.value as { type: string; name?: string }).type);
    assert.deepEqual(data, ['tool_call', 'tool_result']);
    assert.deepEqual([...fold(toolEvents).values()], ['done']);

    // ListTasks: the context's tasks, newest status first, paged; artifacts only when asked for.
    const toolTask = toolEvents[0].payload!.value as unknown as Task;
    const listed = (over: Record<string, unknown> = {}) =>
      client.listTasks({ tenant: '', contextId, status: 0, pageToken: '', ...over } as never) as unknown as Promise<{
        tasks: Task[];
        nextPageToken: string;
        pageSize: number;
        totalSize: number;
      }>;
    const all = await listed();
    assert.equal(all.totalSize, 3);
    assert.equal(all.pageSize, 50);
    assert.deepEqual(
      all.tasks.map((x) => x.id),
      [toolTask.id, streamedTask.id, sent.id],
    );
    assert.ok(
      all.tasks.every((x) => x.artifacts.length === 0 && x.status?.state === TaskState.TASK_STATE_COMPLETED),
      JSON.stringify(all.tasks),
    );
    const page1 = await listed({ pageSize: 2, includeArtifacts: true });
    assert.deepEqual(
      page1.tasks.map((x) => textOf(x.artifacts.at(-1)!.parts)),
      ['done', 'world'],
    );
    assert.ok(page1.nextPageToken, 'a second page');
    const page2 = await listed({ pageSize: 2, pageToken: page1.nextPageToken });
    assert.deepEqual(
      page2.tasks.map((x) => x.id),
      [sent.id],
    );
    assert.equal(page2.nextPageToken, '');
    assert.equal((await listed({ status: TaskState.TASK_STATE_CANCELED })).totalSize, 0);
    const later = await listed({ statusTimestampAfter: new Date(Date.now() + 60_000).toISOString() });
    assert.equal(later.totalSize, 0);
    assert.equal((await listed({ contextId: randomUUID() })).totalSize, 0, 'an unknown context has no tasks');
    await assert.rejects(listed({ contextId: '' }), /needs a contextId/);
    await assert.rejects(listed({ pageSize: 101 }), /pageSize/);
    await assert.rejects(listed({ pageToken: 'bm9wZQ' }), /pageToken/);

    // Unknown tasks and methods answer A2A's JSON-RPC errors.
    await assert.rejects(client.getTask({ id: randomUUID() } as never), /not found/i);
    const bad = await call(app.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 7, method: 'tasks/nope', params: {} });
    assert.equal((bad.body.error as { code: number }).code, -32601);

    const hist = await call(app.url, 'GET', `/sessions/${contextId}/history`);
    assert.deepEqual(
      (hist.body.messages as Array<{ role: string }>).map((m) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant', 'user', 'block_assistant', 'tool_results', 'block_assistant'],
    );
  });

  it('cancel maps onto Warren cancel; a resubscribe after a dropped stream loses and repeats nothing', async (t) => {
    const open = deferred();
    const app = await startApp(t, (_req, i) =>
      i === 0
        ? { chunks: ['a', 'b'], tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] }
        : i === 1
          ? { chunks: ['c', 'd'], waitFor: open.promise }
          : { text: 'never', waitFor: new Promise<void>(() => {}) },
    );
    const client = await connect(app.url);
    const contextId = randomUUID();

    // The first connection reads the first text block to its last chunk, then drops mid-task.
    const ctl = new AbortController();
    const first: Ev[] = [];
    for await (const ev of client.sendMessageStream(userMessage('go', contextId), { signal: ctl.signal })) {
      first.push(ev as unknown as Ev);
      const p = (ev as unknown as Ev).payload!;
      if (p.$case === 'artifactUpdate' && p.value.lastChunk) break;
    }
    ctl.abort();
    const taskId = (first[0].payload!.value as unknown as Task).id;
    assert.deepEqual([...fold(first).values()], ['ab']);
    open.resolve();

    const rest: Ev[] = [];
    for await (const ev of client.resubscribeTask({ id: taskId } as never)) rest.push(ev as unknown as Ev);
    assert.equal(rest[0].payload!.$case, 'task', 'a resubscribe opens with the task as it stands');
    const texts = fold(rest, fold(first));
    assert.deepEqual([...texts.values()], ['ab', 'cd'], 'every text block once, none repeated');
    const updates = rest
      .filter((e) => e.payload!.$case === 'artifactUpdate')
      .map((e) => textOf((e.payload!.value.artifact as Artifact).parts));
    assert.ok(!updates.includes('a') && !updates.includes('b'), `the first block is not re-sent as updates: ${JSON.stringify(updates)}`);
    assert.equal(rest.at(-1)!.payload!.$case, 'statusUpdate');
    assert.equal(((await client.getTask({ id: taskId } as never)) as unknown as Task).status?.state, TaskState.TASK_STATE_COMPLETED);

    // tasks/cancel on a running task (its model call never answers): Warren's cancel, state canceled.
    const stream = client.sendMessageStream(userMessage('stuck', contextId));
    const head = (await stream.next()).value as unknown as Ev;
    const stuck = head.payload!.value as unknown as Task;
    const cancelled = (await client.cancelTask({ id: stuck.id } as never)) as unknown as Task;
    assert.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
    const tail: Ev[] = [];
    for await (const ev of stream) tail.push(ev as unknown as Ev);
    assert.equal((tail.at(-1)!.payload!.value.status as { state: number }).state, TaskState.TASK_STATE_CANCELED);
    await assert.rejects(client.cancelTask({ id: stuck.id } as never), /already ended/);
  });
});

describe('A2A protocol 0.3 (@a2a-js/sdk legacyCompat)', () => {
  it('the 0.3 card and wire: send, stream, get, resubscribe to an ended task', async (t) => {
    const app = await startApp(t, [{ text: 'old' }, { chunks: ['wi', 're'] }]);
    const client = await connectLegacy(app.url);
    const contextId = randomUUID();
    const sent = (await client.sendMessage(userMessage('hi', contextId))) as unknown as Task;
    assert.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(sent.artifacts[0].parts), 'old');
    const events: Ev[] = [];
    for await (const ev of client.sendMessageStream(userMessage('more', contextId))) events.push(ev as unknown as Ev);
    assert.deepEqual([...fold(events).values()], ['wire']);
    const id = (events[0].payload!.value as unknown as Task).id;
    assert.equal(((await client.getTask({ id } as never)) as unknown as Task).status?.state, TaskState.TASK_STATE_COMPLETED);
    const again: Ev[] = [];
    for await (const ev of client.resubscribeTask({ id } as never)) again.push(ev as unknown as Ev);
    assert.deepEqual([...fold(again).values()], ['wire']);
    // The 0.3 wire on the wire: kind discriminators and lower-case states.
    const raw = await call(app.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 1, method: 'tasks/get', params: { id } });
    assert.equal((raw.body.result as { kind: string }).kind, 'task');
    assert.equal((raw.body.result as { status: { state: string } }).status.state, 'completed');
    const v1 = await call(app.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 2, method: 'GetTask', params: { id } });
    const task = v1.body.result as { kind?: string; status: { state: string }; artifacts: Array<{ parts: unknown[] }> };
    assert.equal(task.kind, undefined);
    assert.equal(task.status.state, 'TASK_STATE_COMPLETED');
    assert.deepEqual(task.artifacts[0].parts, [{ text: 'wire' }]);
    const hist = await call(app.url, 'GET', `/sessions/${contextId}/history`);
    assert.deepEqual(
      (hist.body.messages as Array<{ role: string }>).map((m) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant'],
    );
  });
});

describe('A2A wire (JSON-RPC over plain HTTP)', () => {
  it('tasks/resubscribe with Last-Event-ID sends exactly the events after that id; JSON-RPC errors', async (t) => {
    const open = deferred();
    const app = await startApp(t, (_req, i) =>
      i === 0
        ? { chunks: ['a', 'b'], tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] }
        : { chunks: ['c', 'd'], waitFor: open.promise },
    );
    const rpc = (body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) =>
      fetch(`${app.url}/a2a`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      });
    const frames = (text: string) =>
      text
        .split('\n\n')
        .filter((f) => f.startsWith('id: '))
        .map((f) => ({
          id: /^id: (.+)$/m.exec(f)![1],
          data: JSON.parse(f.split('data: ')[1]) as { id: number; result: Record<string, unknown> },
        }));
    const message = { kind: 'message', messageId: 'm1', role: 'user', parts: [{ kind: 'text', text: 'go' }] };

    const ctl = new AbortController();
    const res = await rpc({ jsonrpc: '2.0', id: 'first', method: 'message/stream', params: { message } }, {}, ctl.signal);
    assert.equal(res.headers.get('content-type'), 'text/event-stream');
    const reader = res.body!.getReader();
    let seen = '';
    const deadline = Date.now() + 10_000;
    while (!/"lastChunk":true[^\n]*\n\n/.test(seen)) {
      assert.ok(Date.now() < deadline, 'waited for the first artifact lastChunk on the first connection');
      const { value, done } = await reader.read();
      assert.ok(!done, 'the first stream ended before its first lastChunk');
      seen += new TextDecoder().decode(value);
    }
    ctl.abort();
    const got = frames(seen);
    const task = got[0].data.result as { id: string; kind: string };
    assert.equal(task.kind, 'task');
    const endIdx = got.findIndex((f) => f.data.result.lastChunk === true);
    const lastId = got[endIdx].id;
    const before = got.slice(0, endIdx + 1).filter((f) => f.data.result.kind === 'artifact-update');
    assert.equal(before.map((f) => (f.data.result.artifact as { parts: Array<{ text: string }> }).parts[0].text).join(''), 'ab');
    open.resolve();

    const again = await rpc({ jsonrpc: '2.0', id: 2, method: 'tasks/resubscribe', params: { id: task.id } }, { 'last-event-id': lastId });
    const after = frames(await again.text());
    assert.ok(
      after.every((f) => f.data.id === 2),
      'every frame answers the resubscribe request id',
    );
    const kinds = after.map((f) => f.data.result.kind);
    assert.equal(kinds[0], 'status-update', 'no snapshot: the first event after the last one seen');
    const text = after
      .filter((f) => f.data.result.kind === 'artifact-update')
      .map((f) => (f.data.result.artifact as { parts: Array<{ text: string }> }).parts[0].text)
      .join('');
    assert.equal(text, 'cd', 'the rest of the reply, once');
    assert.equal(after.filter((f) => f.data.result.final === true).length, 1);

    // The task has ended now (its final event was read): the same resume answers the same events from the ledger.
    const late = frames(
      await (
        await rpc({ jsonrpc: '2.0', id: 6, method: 'tasks/resubscribe', params: { id: task.id } }, { 'last-event-id': lastId })
      ).text(),
    );
    assert.equal(late[0].data.result.kind, 'status-update');
    assert.equal(
      late
        .filter((f) => f.data.result.kind === 'artifact-update')
        .map((f) => (f.data.result.artifact as { parts: Array<{ text: string }> }).parts[0].text)
        .join(''),
      'cd',
    );
    assert.equal(late.filter((f) => f.data.result.final === true).length, 1);

    // message/send in the curl shape of docs/protocols.md, and the JSON-RPC errors.
    const plain = await call(app.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 3, method: 'tasks/get', params: { id: task.id } });
    assert.equal((plain.body.result as { status: { state: string } }).status.state, 'completed');
    const parse = await fetch(`${app.url}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    assert.equal(((await parse.json()) as { error: { code: number } }).error.code, -32700);
    const file = await call(app.url, 'POST', '/a2a', {
      jsonrpc: '2.0',
      id: 4,
      method: 'message/send',
      params: { message: { ...message, parts: [{ kind: 'file', file: { uri: 'file:///etc/passwd' } }] } },
    });
    assert.equal((file.body.error as { code: number }).code, -32005);
    const cont = await call(app.url, 'POST', '/a2a', {
      jsonrpc: '2.0',
      id: 5,
      method: 'message/send',
      params: { message: { ...message, contextId: 'not-a-uuid' } },
    });
    assert.equal((cont.body.error as { code: number }).code, -32602);
    const future = await fetch(`${app.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'a2a-version': '2.0' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'GetTask', params: { id: task.id } }),
    });
    assert.equal(((await future.json()) as { error: { code: number } }).error.code, -32009);
    const ext = await call(app.url, 'GET', '/warren/extensions');
    assert.ok(JSON.stringify(ext.body).includes('"a2a"'), 'a2a is listed in /warren/extensions');
    const spec = await call(app.url, 'GET', '/openapi.json');
    const paths = (spec.body.paths ?? {}) as Record<string, unknown>;
    assert.ok(paths['/a2a'] && paths['/.well-known/agent-card.json'], '/openapi.json covers the A2A routes');
  });
});
