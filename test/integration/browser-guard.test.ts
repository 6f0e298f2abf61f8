// The always-on browser guard (http/browser-guard.ts) on both transports: a request under a foreign Host
// (DNS rebinding), with a foreign Origin, or with a body that is not JSON never reaches a handler; the
// refusal is the error envelope (403 HOST_NOT_ALLOWED / ORIGIN_NOT_ALLOWED, 415 UNSUPPORTED_MEDIA_TYPE),
// logged at warn; state is unchanged afterwards. Loopback names, the server's own origin and the
// operator's `[rest] allowed_hosts` / `allowed_origins` keep working, for HTTP, WebSocket /rpc and /mcp.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import WebSocket from 'ws';
import { uwsUnavailableReason } from '../../http/create-server.ts';
import { call, startApp } from '../helpers/app.ts';
import { connectRpcSocket } from '../helpers/rpc-socket.ts';

const UWS_SKIP = uwsUnavailableReason();

interface RawReply {
  status: number;
  body: any;
}

/** One request with exactly these headers (node:http lets a test set Host); body sent as given. */
function raw(base: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<RawReply> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            // not JSON
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    req.setTimeout(10_000, () => req.destroy(new Error(`no answer to ${method} ${path} within 10s`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Collects the server's log lines (JSON) for assertions. */
function captureLog(): { logger: pino.Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString('utf8').split('\n')) if (l.trim()) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

/** The upgrade answer of a WebSocket handshake: 'open' or the refusal's HTTP status. */
function wsOutcome(url: string, headers: Record<string, string>): Promise<'open' | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws') + '/rpc', { headers, handshakeTimeout: 10_000 });
    ws.once('open', () => {
      ws.close();
      resolve('open');
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
    });
    ws.once('error', (err) => reject(new Error(`websocket handshake to /rpc failed: ${err.message}`)));
  });
}

const MCP_INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'page', version: '1' } },
});
const MCP_ACCEPT = { accept: 'application/json, text/event-stream' };

for (const transport of ['uws', 'node'] as const) {
  describe(`browser guard (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    it('refuses a foreign Host and Origin and non-JSON bodies before any handler; state unchanged', async (t) => {
      const { logger, lines } = captureLog();
      const app = await startApp(t, [{ text: 'hi' }], { httpTransport: transport, logger });
      const port = new URL(app.url).port;
      const before = await call(app.url, 'GET', '/sessions');
      assert.equal(before.status, 200);
      const json = { 'content-type': 'application/json' };
      const create = JSON.stringify({ prompt: 'hi', provider: 'scripted' });

      // DNS rebinding: the attacker's name resolves to 127.0.0.1, the browser sends Host: attacker.
      const rebound = await raw(app.url, 'POST', '/sessions', { ...json, host: `attacker.example:${port}` }, create);
      assert.equal(rebound.status, 403);
      assert.deepEqual(rebound.body, {
        error: `host not allowed: attacker.example:${port} (loopback names and [rest] allowed_hosts only)`,
        code: 'HOST_NOT_ALLOWED',
      });
      assert.equal((await raw(app.url, 'GET', '/sessions', { host: `attacker.example:${port}` })).status, 403);

      // Cross-site: a foreign Origin (fetch, form post) is refused even under a loopback Host.
      for (const origin of ['http://attacker.example', `http://localhost:${Number(port) + 1}`, 'null']) {
        const r = await raw(app.url, 'POST', '/sessions', { ...json, host: `127.0.0.1:${port}`, origin }, create);
        assert.equal(r.status, 403, origin);
        assert.equal(r.body.code, 'ORIGIN_NOT_ALLOWED');
      }
      // Bodies a browser sends without a preflight: none, text/plain, a form. Never parsed as JSON.
      for (const type of [undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
        const r = await raw(app.url, 'POST', '/sessions', type ? { 'content-type': type } : {}, create);
        assert.equal(r.status, 415, String(type));
        assert.equal(r.body.code, 'UNSUPPORTED_MEDIA_TYPE');
      }
      // MCP initialize from a foreign origin, and a WebSocket to /rpc from one.
      const mcp = await raw(app.url, 'POST', '/mcp', { ...json, ...MCP_ACCEPT, origin: 'http://attacker.example' }, MCP_INIT);
      assert.equal(mcp.status, 403);
      assert.equal(mcp.body.code, 'ORIGIN_NOT_ALLOWED');
      assert.equal(await wsOutcome(app.url, { origin: 'http://attacker.example' }), 403);
      assert.equal(await wsOutcome(app.url, { host: `attacker.example:${port}` }), 403);

      const after = await call(app.url, 'GET', '/sessions');
      assert.deepEqual(after.body, before.body, 'no session was created by a refused request');
      assert.equal(app.provider.requests.length, 0, 'no refused request reached the model');
      const refusals = lines.filter((l) => l.msg === 'request refused by the browser guard');
      assert.ok(refusals.length >= 10, `each refusal logged (got ${refusals.length})`);
      assert.ok(
        refusals.every((l) => l.level === 40),
        'refusals are logged at warn',
      );
    });

    it('lets loopback names, the own origin and the operator-listed hosts and origins through', async (t) => {
      const app = await startApp(t, [{ text: 'one' }, { text: 'two' }], {
        httpTransport: transport,
        config: { rest: { allowed_hosts: ['warren.lan'], allowed_origins: ['https://console.example.com'] } },
      });
      const port = new URL(app.url).port;
      const json = { 'content-type': 'application/json; charset=utf-8' };
      for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost', `warren.lan:${port}`, 'WARREN.LAN']) {
        assert.equal((await raw(app.url, 'GET', '/sessions', { host })).status, 200, host);
      }
      // The viewer's own fetches: Origin is the server's own origin.
      const own = await raw(
        app.url,
        'POST',
        '/sessions',
        { ...json, origin: `http://127.0.0.1:${port}` },
        JSON.stringify({ prompt: 'a', provider: 'scripted' }),
      );
      assert.equal(own.status, 200, JSON.stringify(own.body));
      const listed = await raw(
        app.url,
        'POST',
        '/sessions',
        { ...json, origin: 'https://console.example.com' },
        JSON.stringify({ prompt: 'b', provider: 'scripted' }),
      );
      assert.equal(listed.status, 200, JSON.stringify(listed.body));
      // A bodiless POST needs no content type; the viewer page and its script load.
      assert.equal((await raw(app.url, 'GET', '/ui', { host: `localhost:${port}` })).status, 200);
      assert.equal(await wsOutcome(app.url, { origin: `http://127.0.0.1:${port}` }), 'open');
      const rpc = await connectRpcSocket(app.url);
      rpc.ws.close();
      const mcp = await raw(
        app.url,
        'POST',
        '/mcp',
        { 'content-type': 'application/json', ...MCP_ACCEPT, origin: `http://localhost:${port}`, host: `localhost:${port}` },
        MCP_INIT,
      );
      assert.notEqual(mcp.status, 403);
      assert.equal((await call(app.url, 'GET', '/sessions')).body.sessions.length, 2);
    });
  });
}
