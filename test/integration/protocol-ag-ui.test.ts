// AG-UI over Warren sessions, driven by @ag-ui/client's HttpAgent: a run streamed to the end, a server-side
// tool call round trip, a reconnect mid-run (same runId + Last-Event-ID) that loses and repeats nothing;
// then the thread read through Warren's own history.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { HttpAgent } from '@ag-ui/client';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { untilStatus } from '../helpers/follow-ups.ts';

type Ev = { type: string; delta?: string; toolCallName?: string; content?: string };

async function run(agent: HttpAgent, runId = randomUUID()): Promise<Ev[]> {
  const events: Ev[] = [];
  await agent.runAgent({ runId }, { onEvent: ({ event }) => void events.push(event as Ev) });
  return events;
}

describe('AG-UI (@ag-ui/client)', () => {
  it('runs to the end, round-trips a server-side tool call, one transcript in Warren history', async (t) => {
    const app = await startApp(t, [
      { chunks: ['he', 'llo'] },
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] },
      { text: 'done' },
    ]);
    const threadId = randomUUID();
    const agent = new HttpAgent({ url: `${app.url}/ag-ui/default`, threadId });
    agent.addMessage({ id: 'u1', role: 'user', content: 'hi' });
    const first = await run(agent);
    assert.deepEqual(
      first.map((e) => e.type),
      ['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED'],
    );
    assert.equal(agent.messages.at(-1)?.content, 'hello');

    // The thread is a Warren session with the same id.
    assert.equal((await call(app.url, 'GET', `/sessions/${threadId}`)).status, 200);
    agent.addMessage({ id: 'u2', role: 'user', content: 'tool please' });
    const second = await run(agent);
    const types = second.map((e) => e.type);
    assert.deepEqual(types.slice(0, 5), ['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']);
    assert.equal(second[1].toolCallName, 'task_create');
    assert.equal(types.at(-1), 'RUN_FINISHED');

    const hist = await call(app.url, 'GET', `/sessions/${threadId}/history`);
    assert.deepEqual(
      (hist.body.messages as Array<{ role: string }>).map((m) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant', 'tool_results', 'block_assistant'],
    );
  });

  it('a reconnect mid-run with Last-Event-ID resumes without loss or duplicates', async (t) => {
    const open = deferred();
    const app = await startApp(t, (_req, i) =>
      i === 0
        ? { chunks: ['a', 'b'], tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] }
        : i === 1
          ? { chunks: ['c', 'd'], waitFor: open.promise }
          : { text: 'x' },
    );
    const threadId = randomUUID();
    const runId = randomUUID();
    const body = {
      threadId,
      runId,
      messages: [{ id: 'u1', role: 'user', content: 'go' }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
    };
    // The first connection reads the first message to its end, then drops while the second model call waits.
    const ctl = new AbortController();
    const res = await fetch(`${app.url}/ag-ui/default`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify(body),
      signal: ctl.signal,
    });
    const reader = res.body!.getReader();
    let seen = '';
    const deadline = Date.now() + 10_000;
    while (!/TEXT_MESSAGE_END[^\n]*\n\n/.test(seen)) {
      assert.ok(Date.now() < deadline, 'waited for the first TEXT_MESSAGE_END on the first connection');
      const { value } = await reader.read();
      seen += new TextDecoder().decode(value);
    }
    const frames = seen.split('\n\n').filter((f) => f.startsWith('id: '));
    const endFrame = frames.find((f) => f.includes('TEXT_MESSAGE_END'))!;
    const lastId = /^id: (.+)$/m.exec(endFrame)![1];
    const firstText = frames
      .filter((f) => f.includes('TEXT_MESSAGE_CONTENT'))
      .map((f) => JSON.parse(f.split('data: ')[1]).delta)
      .join('');
    assert.equal(firstText, 'ab');
    ctl.abort();
    open.resolve();

    // The client reconnects: same runId, Last-Event-ID.
    const agent = new HttpAgent({ url: `${app.url}/ag-ui/default`, threadId, headers: { 'last-event-id': lastId } });
    agent.addMessage({ id: 'u1', role: 'user', content: 'go' });
    const rest: Ev[] = [];
    await agent
      .runAgent({ runId }, { onEvent: ({ event }) => void rest.push(event as Ev) })
      .catch((err: unknown) => assert.fail(`resume failed: ${String(err)}`));
    const types = rest.map((e) => e.type);
    assert.equal(types[0], 'RUN_STARTED');
    assert.equal(types[1], 'TOOL_CALL_START', 'the stream goes on right after the last event seen');
    const text = rest
      .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
      .map((e) => e.delta)
      .join('');
    assert.equal(text, 'cd', 'the rest of the reply, once');
    assert.equal(rest.filter((e) => e.type === 'RUN_FINISHED').length, 1);
  });

  // After the commit the ledger has no text deltas (one text_complete per message): a Last-Event-ID taken
  // live must still mean the same place, whether it fell after a message or inside one.
  for (const cut of ['after the first message', 'inside the first message'] as const) {
    it(`a resume after the commit, from ${cut}, loses and repeats nothing`, async (t) => {
      const app = await startApp(t, (_req, i) =>
        i === 0
          ? { chunks: ['a', 'b'], tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' }, id: 'call_1' }] }
          : { chunks: ['c', 'd'] },
      );
      const threadId = randomUUID();
      const runId = randomUUID();
      const body = { threadId, runId, messages: [{ id: 'u1', role: 'user', content: 'go' }], tools: [], context: [], state: {} };
      const res = await fetch(`${app.url}/ag-ui/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify(body),
      });
      const live = (await res.text()).split('\n\n').filter((f) => f.startsWith('id: '));
      const liveEvents = live.map((f) => ({ id: /^id: (.+)$/m.exec(f)![1], ev: JSON.parse(f.split('data: ')[1]) as Ev }));
      const at =
        cut === 'after the first message'
          ? liveEvents.findIndex((e) => e.ev.type === 'TEXT_MESSAGE_END')
          : liveEvents.findIndex((e) => e.ev.type === 'TEXT_MESSAGE_CONTENT');
      assert.ok(at > 0, `the live stream had the frame to cut at: ${live.join(' | ')}`);
      const seen = liveEvents.slice(0, at + 1).map((e) => e.ev);
      // The run is over and committed before the client comes back.
      await untilStatus(app.url, threadId, (b) => b.state === 'idle', 'idle after the commit');

      const agent = new HttpAgent({ url: `${app.url}/ag-ui/default`, threadId, headers: { 'last-event-id': liveEvents[at].id } });
      agent.addMessage({ id: 'u1', role: 'user', content: 'go' });
      const rest: Ev[] = [];
      await agent
        .runAgent({ runId }, { onEvent: ({ event }) => void rest.push(event as Ev) })
        .catch((err: unknown) => assert.fail(`resume failed: ${String(err)}`));
      const text = (evs: Ev[]) =>
        evs
          .filter((e) => e.type === 'TEXT_MESSAGE_CONTENT')
          .map((e) => e.delta)
          .join('');
      assert.equal(text(seen) + text(rest), 'abcd', 'every character once, in order');
      const kinds = (evs: Ev[]) => evs.filter((e) => e.type !== 'TEXT_MESSAGE_CONTENT' && e.type !== 'RUN_STARTED').map((e) => e.type);
      const liveKinds = kinds(liveEvents.map((e) => e.ev));
      const resumed = kinds(rest);
      if (cut === 'inside the first message') {
        // The open message is opened again (same id) so the resumed stream is whole on its own.
        assert.equal(rest[1].type, 'TEXT_MESSAGE_START');
        assert.equal((rest[1] as { messageId?: string }).messageId, (seen[1] as { messageId?: string }).messageId);
        assert.deepEqual([...kinds(seen), ...resumed.slice(1)], liveKinds);
      } else {
        assert.equal(rest[1].type, 'TOOL_CALL_START');
        assert.deepEqual([...kinds(seen), ...resumed], liveKinds);
      }
    });
  }
});
