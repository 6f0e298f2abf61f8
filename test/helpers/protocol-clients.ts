// test/helpers/protocol-clients.ts: one short round trip per foreign protocol, each driven by the protocol's
// official client package (openai, @langchain/langgraph-sdk, @ag-ui/client, @a2a-js/sdk), against any
// Warren URL: a single node of any backend, or a cluster node that does not own the session. Each continues
// one session (the first OpenAI response creates it), runs a plain and a streamed turn, reads the result
// back, and cancels a turn that never ends (the prompt `stuck` of echoScript). PROMPTS is the transcript
// they leave in Warren's own history, whatever node served them.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { randomUUID } from 'node:crypto';
import OpenAI from 'openai';
import { Client as LangGraphClient } from '@langchain/langgraph-sdk';
import { HttpAgent } from '@ag-ui/client';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, type Client as A2aClient } from '@a2a-js/sdk/client';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';
import { call } from './app.ts';

/** Streams `re: <prompt>` in two chunks; the prompt `stuck` waits until its turn is cancelled. */
export function echoScript(req: ProviderRequest): ScriptedReply {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : '?';
  return text === 'stuck' ? { text: 'never', waitFor: new Promise<void>(() => {}) } : { chunks: ['re: ', text] };
}

/** The user prompts the four round trips leave in the session, in order (cancelled `stuck` turns left out). */
export const PROMPTS = ['o-start', 'o-chain', 'o-stream', 'o-bg', 'lg-wait', 'lg-stream', 'ag', 'a2a-send', 'a2a-stream'];

export type A2aPart = { content?: { $case: string; value: unknown } };
export type A2aArtifact = { artifactId: string; parts: A2aPart[] };
export type A2aTask = { id: string; contextId: string; status?: { state: number }; artifacts: A2aArtifact[] };
export type A2aEvent = { payload?: { $case: string; value: Record<string, unknown> } };

export const a2aText = (parts: A2aPart[]) => parts.map((p) => (p.content?.$case === 'text' ? String(p.content.value) : '')).join('');

/** The SDK's default client: it resolves the card (sending A2A-Version: 1.0) and talks protocol 1.0. */
export async function a2aConnect(url: string): Promise<A2aClient> {
  const client = await new ClientFactory().createFromUrl(url);
  assert.equal(client.protocolVersion, '1.0');
  return client;
}

/** A SendMessage request of one text part (`contextId` '' leaves the context to the server). */
export function a2aUserMessage(text: string, contextId?: string) {
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
  } as unknown as Parameters<A2aClient['sendMessage']>[0];
}

/** Folds stream events into per-artifact text (a Task event replaces the state, like a client's store). */
export function a2aFold(events: A2aEvent[], start = new Map<string, string>()): Map<string, string> {
  const texts = new Map(start);
  for (const ev of events) {
    const p = ev.payload!;
    if (p.$case === 'task') {
      texts.clear();
      for (const a of (p.value as unknown as A2aTask).artifacts) texts.set(a.artifactId, a2aText(a.parts));
    } else if (p.$case === 'artifactUpdate') {
      const a = p.value.artifact as A2aArtifact;
      const prev = p.value.append ? (texts.get(a.artifactId) ?? '') : '';
      texts.set(a.artifactId, prev + a2aText(a.parts));
    }
  }
  return texts;
}

export function openaiClient(url: string): OpenAI {
  return new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
}

/** The first response of the chain (a new session): its id and session id. */
export async function openaiStart(url: string): Promise<{ id: string; sessionId: string }> {
  const r = await openaiClient(url).responses.create({ model: 'warren', input: 'o-start' });
  assert.equal(r.status, 'completed');
  assert.equal(r.output_text, 're: o-start');
  return { id: r.id, sessionId: (r as unknown as { session_id: string }).session_id };
}

/** openai: chained create, a streamed create, a background one retrieved, a running one cancelled. */
export async function openaiRoundTrip(url: string, previous: string, sessionId: string): Promise<void> {
  const openai = openaiClient(url);
  const r1 = await openai.responses.create({ model: 'warren', input: 'o-chain', previous_response_id: previous });
  assert.equal(r1.status, 'completed');
  assert.equal(r1.output_text, 're: o-chain');
  assert.equal((r1 as unknown as { session_id: string }).session_id, sessionId, 'previous_response_id continues the session');
  let text = '';
  let done: OpenAI.Responses.Response | undefined;
  for await (const ev of await openai.responses.create({ model: 'warren', input: 'o-stream', previous_response_id: r1.id, stream: true })) {
    if (ev.type === 'response.output_text.delta') text += ev.delta;
    if (ev.type === 'response.completed') done = ev.response;
  }
  assert.equal(text, 're: o-stream');
  assert.ok(done, 'the stream ends with response.completed');
  const bg = await openai.responses.create({ model: 'warren', input: 'o-bg', previous_response_id: done.id, background: true });
  let final: OpenAI.Responses.Response | undefined;
  for await (const ev of await openai.responses.retrieve(bg.id, { stream: true }))
    if (ev.type === 'response.completed') final = ev.response;
  assert.equal(final?.output_text ?? (await openai.responses.retrieve(bg.id)).output_text, 're: o-bg');
  assert.equal((await openai.responses.retrieve(bg.id)).status, 'completed');
  const stuck = await openai.responses.create({ model: 'warren', input: 'stuck', previous_response_id: bg.id, background: true });
  assert.equal((await openai.responses.retrieve(stuck.id)).status, 'in_progress', 'a running response reads in_progress');
  assert.equal((await openai.responses.cancel(stuck.id)).status, 'cancelled');
  assert.equal((await openai.responses.retrieve(stuck.id)).status, 'cancelled');
}

type LgMessage = { type: string; content: string };

/** @langchain/langgraph-sdk: the session is the thread; runs.wait, runs.stream, state, history, a cancel. */
export async function langgraphRoundTrip(url: string, threadId: string): Promise<void> {
  const client = new LangGraphClient({ apiUrl: url });
  assert.equal((await client.threads.get(threadId)).thread_id, threadId);
  const waited = (await client.runs.wait(threadId, 'agent', { input: { messages: [{ role: 'user', content: 'lg-wait' }] } })) as {
    messages: LgMessage[];
  };
  assert.equal(waited.messages.at(-1)?.content, 're: lg-wait');
  const deltas: string[] = [];
  let values: { messages: LgMessage[] } | undefined;
  for await (const part of client.runs.stream(threadId, 'agent', {
    input: { messages: [{ role: 'user', content: 'lg-stream' }] },
    streamMode: ['values', 'messages-tuple'],
  })) {
    if (part.event === 'messages') deltas.push((part.data as unknown as [{ content: string }])[0].content);
    if (part.event === 'values') values = part.data as { messages: LgMessage[] };
  }
  assert.equal(deltas.join(''), 're: lg-stream');
  assert.equal(values?.messages.at(-1)?.content, 're: lg-stream');
  const state = await client.threads.getState(threadId);
  assert.equal((state.values as { messages: LgMessage[] }).messages.at(-1)?.content, 're: lg-stream');
  const history = await client.threads.getHistory(threadId, { limit: 2 });
  assert.equal((history[0].values as { messages: LgMessage[] }).messages.at(-1)?.content, 're: lg-stream');
  const run = await client.runs.create(threadId, 'agent', { input: { messages: [{ role: 'user', content: 'stuck' }] } });
  assert.equal((await client.runs.get(threadId, run.run_id)).status, 'running', 'a running run reads running');
  await client.runs.cancel(threadId, run.run_id, true);
  assert.equal((await client.runs.get(threadId, run.run_id)).status, 'interrupted');
}

/** @ag-ui/client: the session is the thread; one run streamed to its end. */
export async function aguiRoundTrip(url: string, threadId: string): Promise<void> {
  const agent = new HttpAgent({ url: `${url}/ag-ui/default`, threadId });
  agent.addMessage({ id: randomUUID(), role: 'user', content: 'ag' });
  const types: string[] = [];
  let text = '';
  await agent.runAgent(
    { runId: randomUUID() },
    {
      onEvent: ({ event }) => void types.push(event.type),
      onTextMessageContentEvent: ({ event }) => void (text += event.delta),
    },
  );
  assert.equal(types[0], 'RUN_STARTED');
  assert.equal(types.at(-1), 'RUN_FINISHED');
  assert.equal(text, 're: ag');
  assert.equal(agent.messages.at(-1)?.content, 're: ag');
}

/** @a2a-js/sdk (protocol 1.0): the session is the context; send, stream, get, a cancel, list. */
export async function a2aRoundTrip(url: string, contextId: string): Promise<void> {
  const client = await a2aConnect(url);
  const sent = (await client.sendMessage(a2aUserMessage('a2a-send', contextId))) as unknown as A2aTask;
  assert.equal(sent.contextId, contextId);
  assert.equal(sent.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(a2aText(sent.artifacts[0].parts), 're: a2a-send');
  const events: A2aEvent[] = [];
  for await (const ev of client.sendMessageStream(a2aUserMessage('a2a-stream', contextId))) events.push(ev as unknown as A2aEvent);
  assert.deepEqual([...a2aFold(events).values()], ['re: a2a-stream']);
  const streamed = events[0].payload!.value as unknown as A2aTask;
  const got = (await client.getTask({ id: streamed.id } as never)) as unknown as A2aTask;
  assert.equal(got.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(a2aText(got.artifacts[0].parts), 're: a2a-stream');

  const stream = client.sendMessageStream(a2aUserMessage('stuck', contextId));
  const stuck = ((await stream.next()).value as unknown as A2aEvent).payload!.value as unknown as A2aTask;
  const running = (await client.getTask({ id: stuck.id } as never)) as unknown as A2aTask;
  assert.equal(running.status?.state, TaskState.TASK_STATE_WORKING, 'a running task reads working');
  const cancelled = (await client.cancelTask({ id: stuck.id } as never)) as unknown as A2aTask;
  assert.equal(cancelled.status?.state, TaskState.TASK_STATE_CANCELED);
  for await (const ev of stream) void ev;
  const listed = (await client.listTasks({ tenant: '', contextId, status: 0, pageToken: '' } as never)) as unknown as { tasks: A2aTask[] };
  assert.deepEqual(
    listed.tasks.map((x) => [x.id, x.status?.state]),
    [
      [stuck.id, TaskState.TASK_STATE_CANCELED],
      [streamed.id, TaskState.TASK_STATE_COMPLETED],
      [sent.id, TaskState.TASK_STATE_COMPLETED],
    ],
    'ListTasks: the tasks of the context, newest first',
  );
}

/**
 * Starts a session on `owner` (an OpenAI response), continues it through `via` (a cluster node that does not
 * own it; by default the owner itself) with each client in turn, one subtest each, then checks one transcript
 * in Warren's history on both.
 */
export async function allRoundTrips(t: TestContext, owner: string, via = owner): Promise<void> {
  const { id, sessionId } = await openaiStart(owner);
  await t.test('openai', () => openaiRoundTrip(via, id, sessionId));
  await t.test('@langchain/langgraph-sdk', () => langgraphRoundTrip(via, sessionId));
  await t.test('@ag-ui/client', () => aguiRoundTrip(via, sessionId));
  await t.test('@a2a-js/sdk', () => a2aRoundTrip(via, sessionId));
  for (const url of new Set([via, owner])) await assertTranscript(url, sessionId);
}

/** Warren's own history of the session: the prompts of PROMPTS, each answered `re: <prompt>`. */
export async function assertTranscript(url: string, sessionId: string): Promise<void> {
  const hist = await call(url, 'GET', `/sessions/${sessionId}/history`);
  assert.equal(hist.status, 200, JSON.stringify(hist.body));
  const users = (hist.body.messages as Array<{ role: string; content: unknown }>)
    .filter((m) => m.role === 'user' && m.content !== 'stuck')
    .map((m) => m.content);
  assert.deepEqual(users, PROMPTS);
}
