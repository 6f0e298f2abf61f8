// test/conformance/http-server.suite.ts: the transport conformance suite (http/transport.ts).
// test/http/server-uws.test.ts and server-node.test.ts run it; every case starts a real server on
// 127.0.0.1:0 and talks to it over real sockets (undici, or raw node:net where framing matters).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { request } from 'undici';
import type { HttpRequest, HttpResponder, TransportKind } from '../../http/transport.ts';
import { deferred } from '../helpers/gates.ts';
import {
  boot,
  echoHandler,
  get,
  JSON_CT,
  MAX_BODY,
  parseResponses,
  RawClient,
  type Echo,
  type RawResponse,
} from '../helpers/transport-harness.ts';

const GET_STREAM = 'GET /stream HTTP/1.1\r\nHost: test\r\n\r\n';

/** Why uWebSockets.js fails an edge case: it never hands such a request to JavaScript (docs/http-api.md "HTTP transports"). */
const UWS_DROPS = 'documented uWebSockets.js deviation: it drops this request without an answer (no 400), holding the socket ~10 s';

/** Requests at the edges of HTTP/1.x, sent raw; each states what a conforming transport answers. */
interface EdgeCase {
  name: string;
  raw: string;
  /** Checks the first response; `closed` tells whether the server closed the connection after it. */
  expect(r: RawResponse, echo: Echo | undefined): void;
  /** The connection must be closed after the answer. */
  closes: boolean;
  uws?: string;
}

const badRequest = (r: RawResponse): void => {
  assert.equal(r.status, 400);
  assert.equal((JSON.parse(r.body.toString()) as { code: string }).code, 'BAD_REQUEST');
};

const EDGE_CASES: EdgeCase[] = [
  {
    name: 'answers an HTTP/1.0 request, then closes',
    raw: 'GET /old?x=1 HTTP/1.0\r\n\r\n',
    expect: (r, echo) => {
      assert.equal(r.status, 200);
      assert.deepEqual([echo?.method, echo?.path, echo?.query], ['GET', '/old', 'x=1']);
    },
    closes: true,
    uws: 'documented uWebSockets.js deviation: HTTP/1.0 requests get no answer at all',
  },
  {
    name: 'answers 400 to a NUL byte in a header value',
    raw: 'GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\0b\r\n\r\n',
    expect: badRequest,
    closes: true,
    uws: UWS_DROPS,
  },
  {
    name: 'answers 400 to a header line without a colon',
    raw: 'GET /x HTTP/1.1\r\nHost: t\r\nNoColonHere\r\n\r\n',
    expect: badRequest,
    closes: true,
    uws: UWS_DROPS,
  },
  { name: 'answers 400 to bare LF line endings', raw: 'GET /x HTTP/1.1\nHost: t\n\n', expect: badRequest, closes: true, uws: UWS_DROPS },
  {
    name: 'answers 400 to a space in the request target',
    raw: 'GET /a b HTTP/1.1\r\nHost: t\r\n\r\n',
    expect: badRequest,
    closes: true,
    uws: UWS_DROPS,
  },
  {
    name: 'answers 400 to an obs-fold header continuation',
    raw: 'GET /x HTTP/1.1\r\nHost: t\r\nX-A: a\r\n b\r\n\r\n',
    expect: badRequest,
    closes: true,
    uws: UWS_DROPS,
  },
  {
    name: 'answers 400 to an HTTP/2 connection preface',
    raw: 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    expect: badRequest,
    closes: true,
    uws: UWS_DROPS,
  },
  {
    name: 'serves an absolute-form request target as its origin form',
    raw: 'GET http://t/abs/path?q=1 HTTP/1.1\r\nHost: t\r\n\r\n',
    expect: (r, echo) => {
      assert.equal(r.status, 200);
      assert.deepEqual([echo?.path, echo?.query], ['/abs/path', 'q=1']);
    },
    closes: false,
    uws: UWS_DROPS,
  },
  {
    name: 'hands `OPTIONS *` to the handler',
    raw: 'OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n',
    expect: (r, echo) => {
      assert.equal(r.status, 200);
      assert.deepEqual([echo?.method, echo?.path], ['OPTIONS', '*']);
    },
    closes: false,
    uws: UWS_DROPS,
  },
  {
    name: 'accepts a chunked body with a chunk extension',
    raw: 'POST /ext HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5;name=value\r\nhello\r\n0\r\n\r\n',
    expect: (r, echo) => {
      assert.equal(r.status, 200);
      assert.equal(Buffer.from(echo?.body ?? '', 'base64').toString(), 'hello');
    },
    closes: false,
    uws: 'documented uWebSockets.js deviation: chunk extensions are not supported; the connection is closed with no answer',
  },
];

/**
 * Runs the transport conformance suite against one transport kind.
 * @param kind the transport under test; createHttpServer must be able to build it.
 */
export function httpServerConformance(kind: TransportKind): void {
  describe(`http transport conformance (${kind})`, () => {
    it('delivers method, path, raw query and lower-cased headers intact', async (t) => {
      const b = await boot(t, kind, echoHandler);
      const r = await request(`${b.origin}/a/b%20c?x=1&y=%20z&x=2`, {
        method: 'DELETE',
        headers: { 'X-Custom-Thing': 'Value One' },
        dispatcher: b.agent,
      });
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['x-reply'], 'yes');
      assert.equal(r.headers['content-type'], 'application/json');
      const echo = (await r.body.json()) as Echo;
      assert.equal(echo.method, 'DELETE');
      assert.equal(echo.path, '/a/b%20c');
      assert.equal(echo.query, 'x=1&y=%20z&x=2');
      assert.equal(echo.headers['x-custom-thing'], 'Value One');
      assert.equal(echo.headers.host, `127.0.0.1:${b.port}`);
      assert.equal(echo.body, '');
      assert.equal(echo.bodyTooLarge, false);

      const plain = JSON.parse((await get(b, '/plain')).text) as Echo;
      assert.deepEqual([plain.method, plain.path, plain.query], ['GET', '/plain', '']);
    });

    it('delivers empty, small, ~1 MB and chunked POST bodies intact', async (t) => {
      const b = await boot(t, kind, echoHandler);
      const post = async (body: string | Buffer | Readable): Promise<Echo> => {
        const r = await request(`${b.origin}/echo`, { method: 'POST', body, dispatcher: b.agent });
        assert.equal(r.statusCode, 200);
        return (await r.body.json()) as Echo;
      };
      assert.equal((await post('')).body, '');
      assert.equal(Buffer.from((await post('{"a":1}')).body, 'base64').toString(), '{"a":1}');
      const big = randomBytes(1024 * 1024 + 17);
      const bigEcho = await post(big);
      assert.equal(bigEcho.headers['content-length'], String(big.length));
      assert.ok(Buffer.from(bigEcho.body, 'base64').equals(big));
      const parts = [randomBytes(10), randomBytes(70_000), randomBytes(3)];
      const chunked = await post(Readable.from(parts));
      assert.equal(chunked.headers['transfer-encoding'], 'chunked');
      assert.ok(Buffer.from(chunked.body, 'base64').equals(Buffer.concat(parts)));
    });

    it('flags a body over maxBodyBytes, returns the handler 413 and stays healthy', async (t) => {
      const seen: HttpRequest[] = [];
      const b = await boot(t, kind, (req, res) => {
        seen.push(req);
        if (req.bodyTooLarge) res.send(413, JSON_CT, '{"error":"too large","code":"PAYLOAD_TOO_LARGE"}');
        else res.send(200, {}, 'ok');
      });
      const r = await request(`${b.origin}/big`, { method: 'POST', body: randomBytes(MAX_BODY + 65_536), dispatcher: b.agent });
      assert.equal(r.statusCode, 413);
      assert.equal(((await r.body.json()) as { code: string }).code, 'PAYLOAD_TOO_LARGE');
      assert.equal(seen[0].bodyTooLarge, true);
      assert.equal(seen[0].body.length, 0);

      const chunked = await request(`${b.origin}/big`, {
        method: 'POST',
        body: Readable.from([randomBytes(MAX_BODY), randomBytes(1000)]),
        dispatcher: b.agent,
      });
      assert.equal(chunked.statusCode, 413);
      await chunked.body.dump();
      assert.equal(seen[1].bodyTooLarge, true);

      // A declared length far beyond the limit is answered without reading it all, then closed.
      const raw = await RawClient.open(b.port);
      raw.socket.write(`POST /huge HTTP/1.1\r\nHost: test\r\nContent-Length: ${64 * MAX_BODY}\r\n\r\n`);
      raw.socket.write(randomBytes(256 * 1024));
      await raw.waitFor((c) => parseResponses(c.buffer()).length === 1);
      assert.equal(parseResponses(raw.buffer())[0].status, 413);
      await raw.waitFor((c) => c.closed);

      assert.deepEqual(await get(b, '/after'), { status: 200, text: 'ok' });
    });

    it('closes lingering after a 413: a client still sending its body gets the 413 and no reset', async (t) => {
      const b = await boot(t, kind, (req, res) => {
        if (req.bodyTooLarge) res.send(413, JSON_CT, '{"error":"too large","code":"PAYLOAD_TOO_LARGE"}');
        else res.send(200, {}, 'ok');
      });
      for (const chunked of [false, true]) {
        const head = chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${64 * MAX_BODY}`;
        // Body bytes, framed as one chunk when the body is chunked.
        const body = (n: number): Buffer => {
          const bytes = randomBytes(n);
          return chunked ? Buffer.concat([Buffer.from(`${n.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]) : bytes;
        };
        const raw = await RawClient.open(b.port, { allowHalfOpen: true });
        let error: string | undefined;
        raw.socket.on('error', (err: NodeJS.ErrnoException) => {
          error = err.code;
        });
        raw.socket.write(`POST /huge HTTP/1.1\r\nHost: test\r\n${head}\r\n\r\n`);
        raw.socket.write(body(MAX_BODY + 1024));
        await raw.waitFor((c) => parseResponses(c.buffer()).length === 1);
        assert.equal(parseResponses(raw.buffer())[0].status, 413);
        // Like a client that notices the answer only after sending more: the server must drain it.
        const more = deferred<Error | null | undefined>();
        raw.socket.write(body(512 * 1024), (err) => more.resolve(err));
        assert.equal(await more.promise, null, 'the server accepted the bytes sent after its 413');
        raw.socket.end();
        await raw.waitFor((c) => c.closed);
        assert.equal(error, undefined, `${head}: the connection ended without a reset`);
      }
      assert.deepEqual(await get(b, '/after'), { status: 200, text: 'ok' });
    });

    it(
      'answers `Expect: 100-continue` with 413 before the body when the declared length is over the limit',
      {
        skip:
          kind === 'uws' ? 'documented uWebSockets.js deviation: it sends 100 Continue itself before JavaScript sees the request' : false,
      },
      async (t) => {
        const seen: HttpRequest[] = [];
        const b = await boot(t, kind, (req, res) => {
          seen.push(req);
          if (req.bodyTooLarge) res.send(413, JSON_CT, '{"error":"too large","code":"PAYLOAD_TOO_LARGE"}');
          else res.send(200, {}, req.body);
        });
        const raw = await RawClient.open(b.port);
        raw.socket.write(`POST /x HTTP/1.1\r\nHost: test\r\nContent-Length: ${MAX_BODY + 1}\r\nExpect: 100-continue\r\n\r\n`);
        await raw.waitFor((c) => parseResponses(c.buffer()).length === 1);
        assert.match(raw.buffer().toString('latin1'), /^HTTP\/1\.1 413 /, 'no 100 Continue before the 413');
        await raw.waitFor((c) => c.closed);
        assert.equal(seen[0].bodyTooLarge, true);
        // Within the limit the client gets its 100 Continue and the body is read.
        const ok = await RawClient.open(b.port);
        ok.socket.write('POST /x HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n');
        await ok.waitFor((c) => c.buffer().toString('latin1').startsWith('HTTP/1.1 100 Continue\r\n\r\n'));
        ok.socket.write('hello');
        await ok.waitFor((c) => c.buffer().includes('hello'));
        ok.socket.destroy();
      },
    );

    for (const edge of EDGE_CASES) {
      it(edge.name, { skip: kind === 'uws' ? (edge.uws ?? false) : false }, async (t) => {
        const b = await boot(t, kind, echoHandler);
        const raw = await RawClient.open(b.port);
        raw.socket.write(edge.raw);
        await raw.waitFor((c) => parseResponses(c.buffer()).length >= 1);
        const [r] = parseResponses(raw.buffer());
        edge.expect(r, r.status === 200 ? (JSON.parse(r.body.toString()) as Echo) : undefined);
        if (edge.closes) await raw.waitFor((c) => c.closed);
        else assert.equal(raw.closed, false);
        raw.socket.destroy();
        assert.equal((await get(b, '/after')).status, 200, 'the server stays up');
      });
    }

    it('answers 500 INTERNAL_ERROR when the handler throws, sync or async, and stays up', async (t) => {
      const b = await boot(t, kind, async (req, res) => {
        if (req.path === '/sync') throw new Error('sync boom');
        if (req.path === '/async') {
          await nextTurn();
          throw new Error('async boom');
        }
        res.send(200, {}, 'ok');
      });
      // The sync case must throw before the handler's first await: exercise it through a plain function too.
      for (const path of ['/sync', '/async']) {
        const r = await request(b.origin + path, { dispatcher: b.agent });
        assert.equal(r.statusCode, 500);
        assert.deepEqual(await r.body.json(), { error: 'internal error', code: 'INTERNAL_ERROR' });
      }
      assert.equal(b.logs.filter((l) => l.level === 50 && l.msg === 'request handler failed').length, 2);
      assert.deepEqual(await get(b, '/ok'), { status: 200, text: 'ok' });
    });

    it('answers 500 when a non-async handler throws synchronously', async (t) => {
      const b = await boot(t, kind, () => {
        throw new Error('plain boom');
      });
      const r = await get(b, '/x');
      assert.equal(r.status, 500);
      assert.equal((JSON.parse(r.text) as { code: string }).code, 'INTERNAL_ERROR');
    });

    it('supports a handler that responds later', async (t) => {
      const b = await boot(t, kind, async (req, res) => {
        await nextTurn();
        await Promise.resolve();
        res.send(201, { 'content-type': 'text/plain' }, `late ${req.path}`);
      });
      assert.deepEqual(await get(b, '/later'), { status: 201, text: 'late /later' });
    });

    it('fires onAbort when the client leaves before the response; a later send is a no-op', async (t) => {
      const entered = deferred<HttpResponder>();
      const aborted = deferred();
      const b = await boot(t, kind, (req, res) => {
        if (req.path === '/ok') return res.send(200, {}, 'ok');
        res.onAbort(() => aborted.resolve());
        entered.resolve(res);
      });
      const raw = await RawClient.open(b.port);
      raw.socket.write('GET /hang HTTP/1.1\r\nHost: test\r\n\r\n');
      const res = await entered.promise;
      raw.socket.destroy();
      await aborted.promise;
      assert.equal(res.aborted, true);
      res.send(200, {}, 'too late');
      res.startStream(200, {});
      assert.equal(res.write('x'), false);
      res.end();
      assert.deepEqual(await get(b, '/ok'), { status: 200, text: 'ok' });
    });

    it('streams chunks to the client in order as they are written', async (t) => {
      const stream = deferred<HttpResponder>();
      const b = await boot(t, kind, (req, res) => {
        if (req.path === '/plain') return res.end();
        res.startStream(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        stream.resolve(res);
      });
      const pending = request(`${b.origin}/stream`, { dispatcher: b.agent });
      const res = await stream.promise;
      assert.equal(res.write('one;'), true); // uWS sends the header block with the first chunk
      const r = await pending;
      assert.equal(r.statusCode, 200);
      assert.equal(r.headers['content-type'], 'text/event-stream');
      const reader = r.body[Symbol.asyncIterator]();
      let got = '';
      const readUntil = async (want: string): Promise<void> => {
        while (got !== want) {
          const next = (await reader.next()) as IteratorResult<Buffer>;
          assert.equal(next.done, false, `stream ended early with ${got}`);
          got += next.value.toString();
        }
      };
      await readUntil('one;');
      res.write('two;');
      await readUntil('one;two;');
      res.write('three;');
      await readUntil('one;two;three;');
      res.end();
      assert.equal(((await reader.next()) as IteratorResult<Buffer>).done, true);
      assert.deepEqual(await get(b, '/plain'), { status: 200, text: '' }); // end() without a stream: empty 200
    });

    it('reports backpressure and drains to a slow reader with every byte once, in order', async (t) => {
      const stream = deferred<HttpResponder>();
      const b = await boot(t, kind, (req, res) => {
        res.startStream(200, { 'content-type': 'text/plain' });
        stream.resolve(res);
      });
      const raw = await RawClient.open(b.port);
      raw.socket.pause();
      raw.socket.write(GET_STREAM);
      const res = await stream.promise;
      const written: string[] = [];
      // Chunks below node's 16 KiB highWaterMark, so false means the socket really is full.
      const size = 8 * 1024;
      const chunk = (i: number): string => `<${i}>`.padEnd(size, String.fromCharCode(97 + (i % 26)));
      for (;;) {
        const c = chunk(written.length);
        written.push(c);
        if (!res.write(c)) break;
        assert.ok(written.length < 100_000, 'write() never reported backpressure');
        await nextTurn(); // node:http corks writes within one tick; let each chunk reach the socket
      }
      assert.ok(written.length > 8, `backpressure after only ${written.length} writes`);
      assert.equal(raw.length, 0);
      let drains = 0;
      let more = 200;
      const finished = deferred();
      // On each drain write more; stop at false and wait for the next drain, as a real writer would.
      res.onDrain(() => {
        drains++;
        while (more > 0) {
          more--;
          const c = chunk(written.length);
          written.push(c);
          if (!res.write(c)) return;
        }
        res.end();
        finished.resolve();
      });
      raw.socket.resume();
      await finished.promise;
      await raw.waitFor((c) => c.endsWith('\r\n0\r\n\r\n'));
      assert.ok(drains >= 1);
      const [response] = parseResponses(raw.buffer());
      assert.equal(response.status, 200);
      assert.equal(response.body.length, written.length * size);
      assert.ok(response.body.equals(Buffer.from(written.join(''), 'latin1')), 'bytes out of order or duplicated');
      raw.socket.destroy();
    });

    it('fires onAbort promptly when a stream client disconnects', async (t) => {
      const stream = deferred<HttpResponder>();
      const aborted = deferred();
      const b = await boot(t, kind, (req, res) => {
        res.onAbort(() => aborted.resolve());
        res.startStream(200, { 'content-type': 'text/plain' });
        res.write('hello');
        stream.resolve(res);
      });
      const raw = await RawClient.open(b.port);
      raw.socket.write(GET_STREAM);
      const res = await stream.promise;
      await raw.waitFor((c) => c.buffer().includes('hello'));
      raw.socket.destroy();
      await aborted.promise;
      assert.equal(res.aborted, true);
      assert.equal(res.write('more'), false);
      res.end();
    });

    it('close() ends open streams and idle connections and resolves', async (t) => {
      const aborted = deferred();
      const b = await boot(t, kind, (req, res) => {
        if (req.path === '/idle') return res.send(200, {}, 'idle');
        res.onAbort(() => aborted.resolve());
        res.startStream(200, { 'content-type': 'text/plain' });
        res.write('hello');
      });
      const idle = await RawClient.open(b.port);
      idle.socket.write('GET /idle HTTP/1.1\r\nHost: test\r\n\r\n');
      await idle.waitFor((c) => parseResponses(c.buffer()).length === 1);
      const raw = await RawClient.open(b.port);
      raw.socket.write(GET_STREAM);
      await raw.waitFor((c) => c.buffer().includes('hello'));
      await b.server.close();
      await aborted.promise;
      await raw.waitFor((c) => c.closed);
      await idle.waitFor((c) => c.closed);
      await assert.rejects(RawClient.open(b.port));
    });

    it('serves two sequential requests on one keep-alive connection', async (t) => {
      const b = await boot(t, kind, echoHandler);
      const raw = await RawClient.open(b.port);
      raw.socket.write('GET /first HTTP/1.1\r\nHost: test\r\n\r\n');
      await raw.waitFor((c) => parseResponses(c.buffer()).length === 1);
      raw.socket.write('POST /second HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello');
      await raw.waitFor((c) => parseResponses(c.buffer()).length === 2);
      const [first, second] = parseResponses(raw.buffer()).map((r) => JSON.parse(r.body.toString()) as Echo);
      assert.equal(first.path, '/first');
      assert.equal(second.path, '/second');
      assert.equal(Buffer.from(second.body, 'base64').toString(), 'hello');
      assert.equal(raw.closed, false);
      raw.socket.destroy();
    });

    it('answers 100 concurrent requests', async (t) => {
      const b = await boot(t, kind, async (req, res) => {
        await nextTurn();
        res.send(200, {}, req.body);
      });
      const replies = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const r = await request(`${b.origin}/c${i}`, { method: 'POST', body: `body-${i}`, dispatcher: b.agent });
          return `${r.statusCode} ${await r.body.text()}`;
        }),
      );
      assert.deepEqual(
        replies,
        Array.from({ length: 100 }, (_, i) => `200 body-${i}`),
      );
    });
  });
}
