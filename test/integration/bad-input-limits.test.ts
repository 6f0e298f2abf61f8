// test/integration/bad-input-limits.test.ts: client mistakes that used to get a 500 or no answer (issue 32
// §3), on both HTTP transports: a 5,000-character id on every kind of id-taking route answers 400 with the
// error envelope (the router bounds path parameters before any store key is built); a JSON-RPC message
// nested 3,000 deep, over POST /rpc or a WebSocket frame, is refused by the same max_json_depth limit as
// an HTTP body (-32600 with the limit in data, no stack overflow); on the node transport a plain request
// carrying `Upgrade: h2c` (what `curl --http2` sends) is answered as the plain request it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { connect } from 'node:net';
import { uwsUnavailableReason } from '../../http/create-server.ts';
import { MAX_PATH_PARAM_BYTES } from '../../http/router.ts';
import { call, startApp } from '../helpers/app.ts';
import { connectRpcSocket } from '../helpers/rpc-socket.ts';

const UWS_SKIP = uwsUnavailableReason();
const LONG = 'x'.repeat(5_000);

/** A JSON-RPC mob/start_flow whose activation input is nested `depth` arrays deep. */
function deepStartFlow(depth: number): string {
  return `{"jsonrpc":"2.0","id":7,"method":"mob/start_flow","params":{"mob_id":"m","flow_id":"f","activation":{"input":${'['.repeat(depth)}${']'.repeat(depth)}}}}`;
}

/** Sends raw bytes on a fresh connection; resolves with everything the server sent until it closed or `until` matched. */
function rawExchange(url: string, bytes: string, until: RegExp): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    let got = '';
    const socket = connect(Number(port), hostname, () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`timed out waiting for ${until} in the raw reply; got ${JSON.stringify(got)}`));
    }, 10_000);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(got);
    };
    socket.on('data', (b) => {
      got += b.toString('latin1');
      if (until.test(got)) done();
    });
    socket.on('end', done);
    socket.on('error', reject);
  });
}

/**
 * POSTs `total` bytes with node:http (Content-Length, or chunked when `chunked`), writing as fast as the
 * socket takes them; resolves with the status and body of the answer, rejects when none arrives.
 */
function postLarge(url: string, total: number, chunked: boolean): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/sessions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(chunked ? {} : { 'content-length': String(total) }) },
    });
    const timer = setTimeout(() => req.destroy(new Error('no answer to a large body within 20 s')), 20_000);
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`the answer to a ${total}-byte ${chunked ? 'chunked ' : ''}body was lost: ${err.message}`));
    });
    const piece = Buffer.alloc(1024 * 1024, 0x20);
    let sent = 0;
    const pump = (): void => {
      while (sent < total) {
        const n = Math.min(piece.length, total - sent);
        sent += n;
        if (!req.write(n === piece.length ? piece : piece.subarray(0, n))) return void req.once('drain', pump);
      }
      req.end();
    };
    req.on('error', () => {});
    pump();
  });
}

for (const transport of ['node', 'uws'] as const) {
  describe(`bad input limits (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    const opts = { httpTransport: transport };

    it('a 5,000-character id answers 400 with the envelope on every kind of id route, never a 500', async (t) => {
      const app = await startApp(t, [], opts);
      const paths: Array<[string, string]> = [
        ['GET', `/mob/${LONG}/hosts`],
        ['GET', `/mob/${LONG}/events`],
        ['GET', `/mob/m/members/${LONG}/status`],
        ['GET', `/mob/m/members/${LONG}/history`],
        ['GET', `/requests/${LONG}`],
        ['POST', `/requests/${LONG}/cancel`],
        ['GET', `/sessions/${LONG}`],
        ['GET', `/sessions/${LONG}/events`],
        ['GET', `/schedules/${LONG}/occurrences`],
        ['GET', `/auth/bindings/${LONG}/status?realm_id=test-realm`],
        ['GET', `/sessions/0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b/events?request_id=${LONG}`],
      ];
      for (const [method, path] of paths) {
        const res = await call(app.url, method, path);
        assert.equal(res.status, 400, `${method} ${path.slice(0, 40)}…: ${JSON.stringify(res.body)}`);
        assert.equal(typeof res.body.error, 'string', `${method} ${path.slice(0, 40)}… envelope error`);
        if (!path.startsWith('/auth/')) assert.equal(res.body.code, 'BAD_REQUEST');
      }
      // An id at the bound still reaches its handler (404: no such mob).
      const atBound = await call(app.url, 'GET', `/mob/${'y'.repeat(MAX_PATH_PARAM_BYTES)}/hosts`);
      assert.notEqual(atBound.status, 500, JSON.stringify(atBound.body));
      assert.equal((await call(app.url, 'GET', '/health')).status, 200);
    });

    it('a JSON-RPC message nested deeper than max_json_depth is refused over POST /rpc and over a WebSocket frame', async (t) => {
      const app = await startApp(t, [], opts);
      const res = await call(app.url, 'POST', '/rpc', deepStartFlow(3_000), { 'content-type': 'application/json' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.error.code, -32600, JSON.stringify(res.body));
      assert.equal(res.body.error.data.max_json_depth, 64);
      assert.match(res.body.error.message, /max_json_depth/);
      // Within the limit the same call reaches the method (an unknown mob, not a depth refusal).
      const shallow = await call(app.url, 'POST', '/rpc', deepStartFlow(3), { 'content-type': 'application/json' });
      assert.notEqual(shallow.body.error?.code, -32600, JSON.stringify(shallow.body));

      const ws = await connectRpcSocket(app.url);
      t.after(() => ws.ws.close());
      ws.send(deepStartFlow(3_000));
      const reply = await ws.next();
      assert.equal(reply.error.code, -32600, JSON.stringify(reply));
      assert.equal(reply.error.data.max_json_depth, 64);
      ws.send('{"jsonrpc":"2.0","id":1,');
      assert.equal((await ws.next()).error.code, -32700, 'malformed JSON is still a parse error');
      assert.equal((await call(app.url, 'GET', '/health')).status, 200);
    });

    it('a plain request carrying Upgrade: h2c (curl --http2) is answered as the plain request', async (t) => {
      const app = await startApp(t, [], opts);
      const upgrade = 'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n';
      const host = new URL(app.url).host;
      const health = await rawExchange(app.url, `GET /health HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\n`, /\r\n\r\nok$/);
      assert.match(health, /^HTTP\/1\.1 200 /, health);
      // With a body, on a route that has a WebSocket twin (/rpc): the body is read, the JSON-RPC answered.
      const body = '{"jsonrpc":"2.0","id":3,"method":"no/such"}';
      const rpc = await rawExchange(
        app.url,
        `POST /rpc HTTP/1.1\r\nHost: ${host}\r\n${upgrade}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
        /-32601[^}]*}}$/,
      );
      assert.match(rpc, /^HTTP\/1\.1 200 /, rpc);
      assert.match(rpc, /"id":3/);
      // A second request on the same connection after a replayed one is served too (keep-alive).
      const two = await rawExchange(
        app.url,
        `GET /health HTTP/1.1\r\nHost: ${host}\r\n${upgrade}\r\nGET /health HTTP/1.1\r\nHost: ${host}\r\n\r\n`,
        /\r\n\r\nok[\s\S]*\r\n\r\nok$/,
      );
      assert.equal(two.match(/HTTP\/1\.1 200 /g)?.length, 2, two);
    });

    it('an oversized body gets its 413 reliably on node:http clients, Content-Length or 50 MiB chunked', async (t) => {
      const app = await startApp(t, [], opts);
      for (let i = 0; i < 8; i++) {
        const r = await postLarge(app.url, 6 * 1024 * 1024, false);
        assert.equal(r.status, 413, `try ${i}: ${r.body}`);
        assert.equal(JSON.parse(r.body).code, 'PAYLOAD_TOO_LARGE');
      }
      const chunked = await postLarge(app.url, 50 * 1024 * 1024, true);
      assert.equal(chunked.status, 413, chunked.body);
      assert.equal(JSON.parse(chunked.body).code, 'PAYLOAD_TOO_LARGE');
      assert.equal((await call(app.url, 'GET', '/health')).status, 200);
    });

    it('GET /mcp sends its whole header block (the blank line included) before the first event', async (t) => {
      const app = await startApp(t, [], opts);
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      };
      const ok = await call(app.url, 'POST', '/mcp', init, { accept: 'application/json, text/event-stream' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const sid = ok.headers.get('mcp-session-id')!;
      const host = new URL(app.url).host;
      // No event is due on this stream: the head must arrive on its own (rawExchange fails after 10 s).
      const head = await rawExchange(
        app.url,
        `GET /mcp HTTP/1.1\r\nHost: ${host}\r\nAccept: text/event-stream\r\nMcp-Session-Id: ${sid}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n`,
        /\r\n\r\n/,
      );
      assert.match(head, /^HTTP\/1\.1 200 /, head);
      assert.match(head, /content-type: text\/event-stream/i);
    });
  });
}
