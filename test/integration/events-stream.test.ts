// GET /sessions/{id}/events on both transports: errors before any stream opens, session_loaded first,
// the ordered events of a text turn and of a tool turn, framing and envelope, and token deltas arriving
// while the turn's HTTP request is still open.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, startApp } from '../helpers/app.ts';
import { kindsOf, openEvents, range, seqsOf, SseClient, type Envelope } from '../helpers/sse-client.ts';

const TRANSPORTS = ['uws', 'node'] as const;

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Checks every frame after session_loaded: `id` = seq (+1 each), `event` = payload.type, envelope shape. */
function assertFraming(c: SseClient, sessionId: string, firstSeq: number): Envelope[] {
  const frames = c.frames.slice(1);
  const envs = frames.map((f) => JSON.parse(f.data) as Envelope);
  assert.deepEqual(seqsOf(envs), range(firstSeq, firstSeq + envs.length - 1));
  const ids = new Set<string>();
  frames.forEach((f, i) => {
    const env = envs[i];
    assert.equal(f.id, String(env.seq), 'id: carries the seq');
    assert.equal(f.event, env.payload.type, 'event: matches payload.type');
    assert.deepEqual(Object.keys(env).sort(), ['event_id', 'payload', 'seq', 'source', 'timestamp_ms']);
    assert.deepEqual(env.source, { type: 'session', session_id: sessionId });
    assert.equal(typeof env.event_id, 'string');
    assert.ok(!ids.has(env.event_id), 'event_id is unique');
    ids.add(env.event_id);
    assert.ok(Number.isInteger(env.timestamp_ms) && env.timestamp_ms > 1_600_000_000_000);
  });
  return envs;
}

for (const transport of TRANSPORTS) {
  describe(`session event stream (${transport})`, () => {
    it('answers 404 (unknown session) and 400 (bad locator, bad Last-Event-ID) as JSON before any stream', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      assert.equal(app.transport, transport);
      const unknown = await SseClient.open(app.url, `/sessions/${randomUUID()}/events`);
      await unknown.until((c) => c.ended, 'end of the error body');
      unknown.close();
      assert.equal(unknown.status, 404);
      assert.match(unknown.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(JSON.parse(unknown.body).code, 'SESSION_NOT_FOUND');
      assert.equal(unknown.frames.length, 0);

      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
      const id = created.body.session_id as string;
      for (const [path, headers] of [
        ['/sessions/not-a-uuid/events', {}],
        [`/sessions/other-realm:${id}/events`, {}],
        [`/sessions/${id}/events`, { 'Last-Event-ID': 'abc' }],
        [`/sessions/${id}/events?after_seq=-1`, {}],
      ] as Array<[string, Record<string, string>]>) {
        const bad = await SseClient.open(app.url, path, headers);
        await bad.until((c) => c.ended, 'end of the error body');
        bad.close();
        assert.equal(bad.status, 400, path);
        assert.match(bad.headers['content-type'] ?? '', /^application\/json/);
        const body = JSON.parse(bad.body);
        assert.equal(body.code, 'BAD_REQUEST', path);
        assert.equal(typeof body.error, 'string');
      }
    });

    it('sends session_loaded first, then a text turn in order with id = seq and event = payload.type', async (t) => {
      const app = await startApp(t, [{ text: 'first' }, { chunks: ['Hel', 'lo', ' world'] }], { httpTransport: transport });
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' });
      const id = created.body.session_id as string;
      const c = await openEvents(app.url, id);
      t.after(() => c.close());
      assert.equal(c.status, 200);
      assert.match(c.headers['content-type'] ?? '', /^text\/event-stream/);
      const [loaded] = c.frames;
      assert.equal(loaded.event, 'session_loaded');
      assert.equal(loaded.id, undefined, 'session_loaded is not a ledger event');
      const info = JSON.parse(loaded.data);
      assert.equal(info.session_id, id);
      assert.equal(info.message_count, 2);
      assert.ok(info.last_seq > 0, 'the first turn published events');

      const reply = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.equal(reply.body.text, 'Hello world');
      await c.untilEvent('run_completed');
      const envs = assertFraming(c, id, info.last_seq + 1);
      assert.deepEqual(kindsOf(envs), [
        'run_started',
        'turn_started',
        'text_delta',
        'text_delta',
        'text_delta',
        'text_complete',
        'turn_completed',
        'run_completed',
      ]);
      assert.deepEqual(
        envs.filter((e) => e.payload.type === 'text_delta').map((e) => e.payload.delta),
        ['Hel', 'lo', ' world'],
      );
      assert.equal(envs[5].payload.content, 'Hello world');
      assert.equal(envs[1].payload.turn_number, 1);
      assert.equal(envs[6].payload.stop_reason, 'end_turn');
      assert.equal(envs[7].payload.result, 'Hello world');
      assert.equal(envs[0].payload.session_id, id);
    });

    it('streams deltas and tool events while the turn request is still open', async (t) => {
      const gate = deferred();
      const app = await startApp(
        t,
        [
          { text: 'ready' },
          {
            chunks: ['Hel', 'lo', ' world'],
            tool_calls: [{ name: 'task_create', args: { subject: 'write tests', description: 'events' } }],
          },
          { text: 'done', waitFor: gate.promise },
        ],
        { httpTransport: transport },
      );
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi', enable_builtins: true });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      const c = await openEvents(app.url, id);
      t.after(() => c.close());
      const first = JSON.parse(c.frames[0].data).last_seq + 1;

      let settled = false;
      const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'plan' }).finally(() => (settled = true));
      // The second model call waits on the gate, so the request cannot have answered yet.
      await c.until(
        (x) => x.envelopes().some((e) => e.payload.type === 'turn_started' && e.payload.turn_number === 2),
        'second turn_started',
      );
      assert.equal(settled, false, 'the HTTP response is still pending');
      assert.deepEqual(kindsOf(c.envelopes()), [
        'run_started',
        'turn_started',
        'text_delta',
        'text_delta',
        'text_delta',
        'text_complete',
        'turn_completed',
        'tool_call_requested',
        'tool_execution_started',
        'tool_execution_completed',
        'tool_result_received',
        'turn_started',
      ]);
      gate.resolve();
      const reply = await turn;
      assert.equal(reply.status, 200, JSON.stringify(reply.body));
      assert.equal(reply.body.text, 'done');
      assert.equal(reply.body.tool_calls, 1);
      await c.untilEvent('run_completed');
      const envs = assertFraming(c, id, first);
      assert.deepEqual(kindsOf(envs).slice(12), ['text_delta', 'text_complete', 'turn_completed', 'run_completed']);

      const byKind = (k: string) => envs.find((e) => e.payload.type === k)!.payload;
      assert.deepEqual(byKind('tool_call_requested'), {
        type: 'tool_call_requested',
        id: 'scripted_call_1',
        name: 'task_create',
        args: { subject: 'write tests', description: 'events' },
      });
      assert.deepEqual(byKind('tool_execution_started'), { type: 'tool_execution_started', id: 'scripted_call_1', name: 'task_create' });
      const done = byKind('tool_execution_completed');
      assert.equal(done.is_error, false);
      assert.equal(done.id, 'scripted_call_1');
      assert.equal(typeof done.duration_ms, 'number');
      assert.equal(JSON.parse(done.content as string).subject, 'write tests');
      const result = byKind('tool_result_received');
      assert.equal(result.is_error, false);
      assert.deepEqual(result.content, [{ type: 'text', text: done.content }]);
      assert.equal(byKind('turn_completed').stop_reason, 'tool_use');
    });
  });
}
