// test/http/create-server.test.ts: transport selection in http/create-server.ts ('auto', 'uws', 'node'),
// checked through the pino lines it writes and a real request against the chosen server.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { request } from 'undici';
import { createHttpServer, type TransportChoice } from '../../http/create-server.ts';
import { uwsSkip } from '../helpers/absent.ts';
import type { HttpServer } from '../../http/transport.ts';

interface LogLine {
  level: number;
  msg: string;
  transport?: string;
  reason?: string;
}

async function start(t: TestContext, choice: TransportChoice): Promise<{ server: HttpServer; logs: LogLine[] }> {
  const logs: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const server = await createHttpServer(choice, {
    logger,
    maxBodyBytes: 1024,
    handler: (req, res) => res.send(200, { 'content-type': 'text/plain' }, `${req.method} ${req.path}`),
  });
  t.after(() => server.close());
  const { port } = await server.listen('127.0.0.1', 0);
  const r = await request(`http://127.0.0.1:${port}/ping`);
  assert.equal(await r.body.text(), 'GET /ping');
  return { server, logs };
}

/** Runs `fn` with UWS_USE_FALLBACK set, restoring the environment afterwards. */
async function withFallbackEnv<T>(fn: () => Promise<T>): Promise<T> {
  const saved = process.env.UWS_USE_FALLBACK;
  process.env.UWS_USE_FALLBACK = '1';
  try {
    return await fn();
  } finally {
    if (saved === undefined) delete process.env.UWS_USE_FALLBACK;
    else process.env.UWS_USE_FALLBACK = saved;
  }
}

describe('createHttpServer', () => {
  const nativeReason = uwsSkip();

  it('auto picks node:http (the default), even where uWebSockets.js loads', async (t) => {
    const { server, logs } = await start(t, 'auto');
    assert.equal(server.kind, 'node');
    assert.deepEqual(
      logs.map((l) => [l.level, l.msg, l.transport]),
      [[30, 'http transport selected', 'node']],
    );
  });

  it('uws gives uWebSockets.js where its native binding loads and logs it', { skip: nativeReason }, async (t) => {
    const { server, logs } = await start(t, 'uws');
    assert.equal(server.kind, 'uws');
    assert.deepEqual(
      logs.map((l) => [l.level, l.msg, l.transport]),
      [[30, 'http transport selected', 'uws']],
    );
  });

  it('node gives the node:http transport', async (t) => {
    const { server, logs } = await start(t, 'node');
    assert.equal(server.kind, 'node');
    assert.equal(logs[0]?.transport, 'node');
  });

  it('uws throws a clear error when the native binding is unavailable', async () => {
    const logger = pino({ level: 'silent' });
    await withFallbackEnv(() =>
      assert.rejects(
        createHttpServer('uws', { logger, maxBodyBytes: 1024, handler: (req, res) => res.end() }),
        /uWebSockets\.js transport unavailable: UWS_USE_FALLBACK is set/,
      ),
    );
  });
});
