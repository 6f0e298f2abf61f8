// A2A over Warren sessions, driven by @a2a-js/sdk's client (JSON-RPC transport, protocol 0.3 card): discover
// the agent card, message/send, message/stream, tasks/get, tasks/cancel, tasks/resubscribe after dropping the
// stream mid-task (no lost or duplicated part); then the same session through Warren's own history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, DefaultAgentCardResolver, JsonRpcTransportFactory, type Client } from '@a2a-js/sdk/client';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

type Part = { content?: { $case: string; value: unknown } };
type Artifact = { artifactId: string; parts: Part[] };
type Task = { id: string; contextId: string; status?: { state: number }; artifacts: Artifact[] };
type Ev = { payload?: { $case: string; value: Record<string, unknown> } };

const textOf = (parts: Part[]) => parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

async function connect(url: string): Promise<Client> {
  const legacyCompat = { enabled: true };
  const factory = new ClientFactory({
    transports: [new JsonRpcTransportFactory({ legacyCompat })],
    cardResolver: new DefaultAgentCardResolver({ legacyCompat }),
  });
  return factory.createFromUrl(url);
}

function userMessage(text: string, contextId?: string) {
  return {
    message: {
      messageId: randomUUID(),
      role: Role.ROLE_USER,
      parts: [{ content: { $case: 'text' as const, value: text }, metadata: undefined, filename: '', mediaType: '' }],
      contextId: contextId ?? '',
      taskId: '',
      extensions: [],
      referenceTaskIds: [],
      metadata: undefined,
    },
  } as unknown as Parameters<Client['sendMessage']>[0];
}

/** Folds stream events into per-artifact text (a Task event replaces the state, like a client's store). */
function fold(events: Ev[], start = new Map<string, string>()): Map<string, string> {
  const texts = new Map(start);
  for (const ev of events) {
    const p = ev.payload!;
    if (p.$case === 'task') {
      texts.clear();
      for (const a of (p.value as unknown as Task).artifacts) texts.set(a.artifactId, textOf(a.parts));
    } else if (p.$case === 'artifactUpdate') {
      const a = p.value.artifact as Artifact;
      const prev = p.value.append ? (texts.get(a.artifactId) ?? '') : '';
      texts.set(a.artifactId, prev + textOf(a.parts));
    }
  }
  return texts;
}

describe('A2A (@a2a-js/sdk)', () => {
  it('discovers the card, sends, streams, gets; one transcript in Warren history', async (t) => {
    const app = await startApp(t, [
      { text: 'hello' },
      { chunks: ['wor', 'ld'] },
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] },
      { text: 'done' },
    ]);
    const card = await call(app.url, 'GET', '/.well-known/agent-card.json');
    assert.equal(card.status, 200);
    assert.equal(card.body.url, `${app.url}/a2a`);
    assert.equal((card.body.capabilities as { streaming: boolean }).streaming, true);
    const client = await connect(app.url);

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
