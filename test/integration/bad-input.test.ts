// test/integration/bad-input.test.ts: hostile and malformed requests against the real server on both
// HTTP transports. Every case answers a 4xx envelope {error, code} (never 500), and the server keeps
// answering /health afterwards (SPEC.md "Errors"; wire-notes §2, §11 items 6 and 17).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import pino from 'pino';
import { createApp, type App } from '../../app.ts';
import { uwsSkip } from '../helpers/absent.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { call, startApp, type JsonReply } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const UWS_SKIP = uwsSkip();
const UUID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';
const JSON_HEADERS = { 'content-type': 'application/json' };

function assertEnvelope(res: JsonReply, status: number, code: string): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body?.error, 'string', `envelope error: ${JSON.stringify(res.body)}`);
  assert.equal(res.body.code, code);
}

async function assertAlive(url: string): Promise<void> {
  const res = await fetch(`${url}/health`);
  assert.equal(res.status, 200);
  assert.equal(await res.text(), 'ok');
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Writes raw bytes on a fresh TCP connection; resolves with the socket once they are flushed. */
function rawSend(url: string, bytes: string): Promise<ReturnType<typeof connect>> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(bytes, () => resolve(socket)));
    socket.on('error', reject);
  });
}

/** Reads SSE frames from `res` until one named `event` arrives. */
async function untilEvent(reader: ReadableStreamDefaultReader<Uint8Array>, event: string): Promise<void> {
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    assert.equal(done, false, `stream ended before ${event}`);
    buffered += decoder.decode(value, { stream: true });
    if (buffered.split('\n').some((line) => line === `event: ${event}`)) return;
  }
}

/** Starts a server, sets limits.max_body_bytes through PATCH /config, and restarts it on the same realm. */
async function appWithBodyLimit(t: TestContext, transport: 'uws' | 'node', maxBodyBytes: number): Promise<App> {
  const dir = await tmpDir('warren-limit-');
  const apps: App[] = [];
  t.after(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await dir.cleanup();
  });
  const provider = createScriptedProvider([]);
  const boot = async () => {
    const app = await createApp({
      host: '127.0.0.1',
      port: 0,
      stateRoot: dir.path,
      contextRoot: dir.path,
      realm: 'limits',
      httpTransport: transport,
      logger: pino({ level: 'silent' }),
      providerOverrides: { openai: provider, anthropic: provider, gemini: provider },
    });
    apps.push(app);
    return app;
  };
  const first = await boot();
  assert.equal((await call(first.url, 'PATCH', '/config', { limits: { max_body_bytes: maxBodyBytes } })).status, 200);
  await first.close();
  return boot();
}

for (const transport of ['uws', 'node'] as const) {
  describe(`bad input (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('malformed JSON, invalid UTF-8 and empty bodies answer 400 BAD_REQUEST', async (t) => {
      const app = await startApp(t, [], opts);
      for (const [method, path] of [
        ['POST', '/sessions'],
        ['PATCH', '/config'],
        ['PUT', '/config'],
        ['POST', `/sessions/${UUID}/messages`],
      ]) {
        assertEnvelope(await call(app.url, method, path, '{"prompt": "x",', JSON_HEADERS), 400, 'BAD_REQUEST');
        assertEnvelope(await call(app.url, method, path, '', JSON_HEADERS), 400, 'BAD_REQUEST');
      }
      const res = await fetch(`${app.url}/sessions`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
      });
      assert.equal(res.status, 400);
      assert.equal(((await res.json()) as { code: string }).code, 'BAD_REQUEST');
      await assertAlive(app.url);
    });

    it('wrong types answer 400 with the failing paths in details', async (t) => {
      const app = await startApp(t, [], opts);
      const res = await call(app.url, 'POST', '/sessions', { prompt: 5 });
      assertEnvelope(res, 400, 'BAD_REQUEST');
      assert.ok(Array.isArray(res.body.details.errors) && res.body.details.errors.length > 0);
      assert.ok(
        res.body.details.errors.some((e: { path: string }) => e.path === '/prompt'),
        JSON.stringify(res.body.details),
      );
      const missing = await call(app.url, 'POST', '/sessions', { model: 'gpt-5.5' });
      assertEnvelope(missing, 400, 'BAD_REQUEST');
      const query = await call(app.url, 'GET', '/sessions?limit=abc');
      assertEnvelope(query, 400, 'BAD_REQUEST');
      assert.equal(query.body.details.errors[0].path, '/limit');
      await assertAlive(app.url);
    });

    it('a JSON array or scalar where an object is expected answers 400', async (t) => {
      const app = await startApp(t, [], opts);
      for (const body of ['[]', '[{"prompt":"x"}]', '"prompt"', '42', 'null']) {
        assertEnvelope(await call(app.url, 'POST', '/sessions', body, JSON_HEADERS), 400, 'BAD_REQUEST');
        assertEnvelope(await call(app.url, 'PATCH', '/config', body, JSON_HEADERS), 400, 'BAD_REQUEST');
        assertEnvelope(await call(app.url, 'PUT', '/config', body, JSON_HEADERS), 400, 'BAD_REQUEST');
      }
      await assertAlive(app.url);
    });

    it('a config nested absurdly deep answers 400, not a stack overflow', async (t) => {
      const app = await startApp(t, [], opts);
      const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
      assertEnvelope(await call(app.url, 'PATCH', '/config', `{"custom":${deep}}`, JSON_HEADERS), 400, 'BAD_REQUEST');
      assertEnvelope(await call(app.url, 'PUT', '/config', `{"custom":${deep}}`, JSON_HEADERS), 400, 'BAD_REQUEST');
      assertEnvelope(await call(app.url, 'PATCH', '/config', `{"patch":{"custom":${deep}}}`, JSON_HEADERS), 400, 'BAD_REQUEST');
      assert.equal((await call(app.url, 'GET', '/config')).body.generation, 0);
      await assertAlive(app.url);
    });

    it('a body over the default 4 MiB limit answers 413 and the server keeps serving', async (t) => {
      const app = await startApp(t, [], opts);
      const big = `{"prompt":"${'x'.repeat(4 * 1024 * 1024)}"}`;
      const res = await call(app.url, 'POST', '/sessions', big, JSON_HEADERS);
      assertEnvelope(res, 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(res.body.details.max_bytes, 4 * 1024 * 1024);
      await assertAlive(app.url);
      assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'still here' })).status, 200);
    });

    it('limits.max_body_bytes (read at startup) is enforced to the byte, with or without Content-Length', async (t) => {
      const app = await appWithBodyLimit(t, transport, 1024);
      const body = (n: number) => `{"prompt":"${'x'.repeat(n - 13)}"}`;
      assert.equal(body(1024).length, 1024);
      const atLimit = await call(app.url, 'POST', '/sessions', body(1024), JSON_HEADERS);
      assert.equal(atLimit.status, 200, JSON.stringify(atLimit.body));
      const over = await call(app.url, 'POST', '/sessions', body(1025), JSON_HEADERS);
      assertEnvelope(over, 413, 'PAYLOAD_TOO_LARGE');
      assert.equal(over.body.details.max_bytes, 1024);
      const chunks = [body(2048).slice(0, 1000), body(2048).slice(1000)];
      const stream = new ReadableStream<Uint8Array>({
        pull(controller) {
          const next = chunks.shift();
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      });
      const chunked = await fetch(`${app.url}/sessions`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: stream,
        duplex: 'half',
      } as RequestInit);
      assert.equal(chunked.status, 413);
      assert.equal(((await chunked.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
      await assertAlive(app.url);
    });

    it('an unknown route answers 404 {error, code: NOT_FOUND}', async (t) => {
      const app = await startApp(t, [], opts);
      for (const [method, path] of [
        ['GET', '/nope'],
        ['GET', '/'],
        ['GET', '/health/'],
        ['GET', '//health'],
        ['GET', '/HEALTH'],
        ['POST', `/sessions/${UUID}/nope`],
        ['GET', '/sessions/a/b/c/d/e'],
        ['DELETE', '/nope/x'],
      ]) {
        const res = await call(app.url, method, path);
        assertEnvelope(res, 404, 'NOT_FOUND');
        assert.deepEqual(Object.keys(res.body).sort(), ['code', 'error'], `${method} ${path}`);
      }
      await assertAlive(app.url);
    });

    it('a known path with the wrong method answers 405 with Allow', async (t) => {
      const app = await startApp(t, [], opts);
      const cases: Array<[string, string, string]> = [
        ['DELETE', '/health', 'GET'],
        ['PUT', '/sessions', 'GET, POST'],
        ['POST', '/config', 'GET, PATCH, PUT'],
        ['PATCH', `/sessions/${UUID}`, 'DELETE, GET'],
        ['GET', `/sessions/${UUID}/messages`, 'POST'],
      ];
      for (const [method, path, allow] of cases) {
        const res = await call(app.url, method, path, method === 'GET' ? undefined : {});
        assertEnvelope(res, 405, 'METHOD_NOT_ALLOWED');
        assert.equal(res.headers.get('allow'), allow, `${method} ${path}`);
      }
      await assertAlive(app.url);
    });

    it('a non-JSON content-type on a body route answers 415; +json media types are accepted', async (t) => {
      const app = await startApp(t, [], opts);
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonx']) {
        assertEnvelope(await call(app.url, 'POST', '/sessions', '{"prompt":"x"}', { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE');
        assertEnvelope(await call(app.url, 'PATCH', '/config', '{}', { 'content-type': type }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      }
      const merge = await call(app.url, 'PATCH', '/config', '{"custom":{"merge":true}}', {
        'content-type': 'application/merge-patch+json',
      });
      assert.equal(merge.status, 200, JSON.stringify(merge.body));
      const charset = await call(app.url, 'POST', '/sessions', '{"prompt":"x"}', { 'content-type': 'Application/JSON; charset=utf-8' });
      assert.equal(charset.status, 200, JSON.stringify(charset.body));
      await assertAlive(app.url);
    });

    it("an invalid session locator answers 400; another realm's locator 400; an unknown id 404", async (t) => {
      const app = await startApp(t, [], opts);
      for (const locator of ['not-a-uuid', `${UUID}x`, 'a'.repeat(2000), `other-realm:${UUID}`, `test-realm:nope`, '%E0%A4%A']) {
        assertEnvelope(await call(app.url, 'GET', `/sessions/${locator}`), 400, 'BAD_REQUEST');
        assertEnvelope(await call(app.url, 'GET', `/sessions/${locator}/history`), 400, 'BAD_REQUEST');
      }
      assertEnvelope(await call(app.url, 'POST', '/sessions/nope/messages', { session_id: 'nope', prompt: 'x' }), 400, 'BAD_REQUEST');
      assertEnvelope(await call(app.url, 'GET', `/sessions/test-realm:${UUID}`), 404, 'SESSION_NOT_FOUND');
      assertEnvelope(await call(app.url, 'GET', `/sessions/${UUID}`), 404, 'SESSION_NOT_FOUND');
      await assertAlive(app.url);
    });

    it('a client that aborts mid-body, or stalls mid-body, does not hurt the server', async (t) => {
      const app = await startApp(t, [], opts);
      const head = `POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`;
      const aborted = await rawSend(app.url, `${head}{"prompt":"par`);
      aborted.destroy();
      const stalled = await rawSend(app.url, `${head}{"prompt":"stalled`);
      t.after(() => stalled.destroy());
      await assertAlive(app.url);
      assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'whole' })).status, 200);
      stalled.destroy();
      await assertAlive(app.url);
    });

    it('a client that aborts while its turn runs does not hurt the server, and the turn still commits', async (t) => {
      const entered = deferred();
      const release = deferred();
      const app = await startApp(
        t,
        (_req, index) => {
          if (index > 0) return { text: 'next' };
          entered.resolve();
          return { text: 'late', waitFor: release.promise };
        },
        opts,
      );
      const ac = new AbortController();
      const pending = fetch(`${app.url}/sessions`, { method: 'POST', headers: JSON_HEADERS, body: '{"prompt":"slow"}', signal: ac.signal });
      await entered.promise;
      const [session] = (await call(app.url, 'GET', '/sessions')).body.sessions;
      const events = await fetch(`${app.url}/sessions/${session.session_id}/events`);
      const reader = events.body!.getReader();
      await untilEvent(reader, 'session_loaded');
      ac.abort();
      await assert.rejects(pending, { name: 'AbortError' });
      await assertAlive(app.url);
      release.resolve();
      await untilEvent(reader, 'run_completed');
      await reader.cancel();
      await assertAlive(app.url);
      const history = await call(app.url, 'GET', `/sessions/${session.session_id}/history`);
      assert.equal(history.body.message_count, 2);
      assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'after' })).status, 200);
    });

    it('a client that drops an event stream or a response mid-way does not hurt the server', async (t) => {
      const app = await startApp(t, [{ text: 'one' }, { text: 'two' }], opts);
      const id: string = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id;
      const ac = new AbortController();
      const stream = await fetch(`${app.url}/sessions/${id}/events`, { signal: ac.signal });
      await untilEvent(stream.body!.getReader(), 'session_loaded');
      ac.abort();
      const cont = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
      assert.equal(cont.status, 200, 'publishing to a departed subscriber is harmless');
      const socket = await rawSend(app.url, 'GET /openapi.json HTTP/1.1\r\nHost: x\r\n\r\n');
      await new Promise<void>((resolve) => socket.once('data', () => resolve()));
      socket.destroy();
      await assertAlive(app.url);
    });
  });
}
