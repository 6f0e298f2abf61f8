// The typed client (client/, @warren/client) against the real server: typed calls for the session
// routes, WarrenError with code/status/details for failures, and the session event iterator resuming
// with Last-Event-ID after its connection is cut mid-turn (no event lost, none repeated).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { WarrenClient, WarrenError, isWarrenError, SseParser } from '../../client/src/client.ts';
import { startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

describe('@warren/client', () => {
  it('runs turns and reads a session through typed calls', async (t) => {
    const app = await startApp(t, [{ text: 'first answer' }, { text: 'second answer' }]);
    const client = new WarrenClient(app.url);
    assert.equal(await client.health(), 'ok');
    const turn = await client.createSession({ prompt: 'hello', provider: 'scripted', labels: { team: 'a' } });
    assert.equal(turn.text, 'first answer');
    const next = await client.continueSession(turn.session_id, { prompt: 'again' });
    assert.equal(next.text, 'second answer');
    const history = await client.history(turn.session_id, { offset: 0, limit: 10 });
    assert.equal(history.message_count, 4);
    assert.deepEqual(
      history.messages.map((m) => m.role),
      ['user', 'block_assistant', 'user', 'block_assistant'],
    );
    assert.equal((await client.sessionStatus(turn.session_id)).state, 'idle');
    const listed = await client.listSessions({ label: 'team=a' });
    assert.deepEqual(
      listed.sessions.map((s) => s.session_id),
      [turn.session_id],
    );
    const page = await client.ledger(turn.session_id, { after_seq: 0, limit: 500 });
    assert.ok(page.events.some((e) => e.payload.type === 'run_completed'));
    assert.equal((await client.capabilities()).capabilities[0].id, 'sessions');
  });

  it('throws WarrenError carrying the envelope code, status and details', async (t) => {
    const app = await startApp(t);
    const client = new WarrenClient(app.url);
    const missing = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
    await assert.rejects(client.getSession(missing), (err: unknown) => {
      assert.ok(isWarrenError(err, 'SESSION_NOT_FOUND'));
      assert.equal(err.status, 404);
      assert.ok(err.requestId);
      return true;
    });
    await assert.rejects(client.request('POST', '/sessions', { body: { prompt: 42 } }), (err: unknown) => {
      assert.ok(err instanceof WarrenError);
      assert.equal(err.code, 'BAD_REQUEST');
      assert.equal(err.status, 400);
      return true;
    });
    // The stream helper throws the same typed error for an HTTP error answer (never retried).
    await assert.rejects(
      async () => {
        for await (const item of client.sessionEvents(missing)) assert.fail(`unexpected ${item.type}`);
      },
      (err: unknown) => isWarrenError(err, 'SESSION_NOT_FOUND'),
    );
  });

  it('resumes a cut event stream with Last-Event-ID: every event once, in order', async (t) => {
    // The reply waits until the stream has reconnected, so the turn's events span both connections.
    const reconnected = deferred();
    const app = await startApp(t, [{ text: 'seed' }, { chunks: ['a', 'b', 'c', 'd'], waitFor: reconnected.promise }]);
    let cut: (() => void) | null = null;
    const lastEventIds: Array<string | null> = [];
    const cuttingFetch: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (!String(input).includes('/events')) return res;
      lastEventIds.push(new Headers(init?.headers).get('last-event-id'));
      if (lastEventIds.length > 1) return res;
      const reader = res.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          cut = () => {
            controller.error(new Error('connection cut by the test'));
            void reader.cancel().catch(() => undefined);
          };
        },
        async pull(controller) {
          const r = await reader.read();
          if (r.done) controller.close();
          else controller.enqueue(r.value);
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = new WarrenClient(app.url, { fetch: cuttingFetch });
    const { session_id: id } = await client.createSession({ prompt: 'seed', provider: 'scripted' });
    const abort = new AbortController();
    t.after(() => abort.abort());
    const seqs: number[] = [];
    let loaded = 0;
    let turn: Promise<unknown> | null = null;
    let lastBeforeReconnect = -1;
    for await (const item of client.sessionEvents(id, { signal: abort.signal, reconnectDelayMs: 1 })) {
      if (item.type === 'session_loaded') {
        loaded++;
        if (loaded === 2) lastBeforeReconnect = seqs.at(-1)!;
        turn ??= client.continueSession(id, { prompt: 'stream please' });
        if (loaded === 2) reconnected.resolve();
        continue;
      }
      if (item.type === 'stream_truncated') assert.fail('no truncation expected');
      seqs.push(item.id);
      if (seqs.length === 1) cut!();
      if (item.data.payload.type === 'run_completed') break;
    }
    await turn;
    assert.equal(loaded, 2, 'a second connection was opened');
    assert.equal(lastEventIds[0], null);
    // Frames parsed before the cut are still delivered; the reconnect names the last one delivered.
    assert.equal(lastEventIds[1], String(lastBeforeReconnect), 'the reconnect carried the last seen id');
    assert.ok(seqs.at(-1)! > lastBeforeReconnect, 'events arrived after the reconnect');
    assert.deepEqual(
      seqs,
      Array.from({ length: seqs.length }, (_, i) => seqs[0] + i),
      'contiguous, no duplicates',
    );
  });

  it('reaches the auth routes typed, and their {error}-only failures as WarrenError code UNKNOWN', async (t) => {
    const app = await startApp(t);
    const client = new WarrenClient(app.url);
    const list = await client.authProfiles({ realm_id: app.realmId });
    assert.equal(typeof list, 'object');
    await assert.rejects(client.bindingStatus('no-such-binding', { realm_id: 'no-such-realm' }), (err: unknown) => {
      assert.ok(err instanceof WarrenError);
      assert.equal(err.code, 'UNKNOWN');
      assert.ok(err.status >= 400 && err.status < 500);
      return true;
    });
  });

  it('parses frames split anywhere, with CRLF, comments and multi-line data', () => {
    const parser = new SseParser();
    const text = ': hi\r\nid: 7\r\nevent: x\r\ndata: one\r\ndata: two\r\n\r\nevent: done\ndata: {}\n\n';
    const frames = [...text].flatMap((ch) => parser.push(ch));
    assert.deepEqual(frames, [
      { id: '7', event: 'x', data: 'one\ntwo' },
      { event: 'done', data: '{}' },
    ]);
  });
});
