// test/integration/bad-input-limits.test.ts: client mistakes that used to get a 500 or no answer (issue 32
// §3), on both HTTP transports: a 5,000-character id on every kind of id-taking route answers 400 with the
// error envelope (the router bounds path parameters before any store key is built); a JSON-RPC message
// nested 3,000 deep, over POST /rpc or a WebSocket frame, is refused by the same max_json_depth limit as
// an HTTP body (-32600 with the limit in data, no stack overflow); on the node transport a plain request
// carrying `Upgrade: h2c` (what `curl --http2` sends) is answered as the plain request it is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
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
  });
}
