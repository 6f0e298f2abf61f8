// test/http/keep-alive.test.ts: the node:http transport keeps an idle connection open well past the
// `Keep-Alive: timeout=5` it advertises. The server's idle clock starts when its last byte left; a client's
// starts once it has read and handled the answer, seconds later for a large body on a loaded machine (a
// test process starved of CPU, a slow link). A connection closed right after the hint cut such a client's
// next request off ("other side closed"; test/integration/fork-kill.test.ts flaked on it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { within } from '../helpers/wait.ts';
import { boot, echoHandler, parseResponses, RawClient, type Echo } from '../helpers/transport-harness.ts';

/** Longer than node's own idle close after its 5 s hint (6 s): the client handled the answer 2 s late. */
const LATE_CLIENT_IDLE_MS = 7_000;

describe('node:http keep-alive', () => {
  it('advertises timeout=5 and still answers on the connection after a client idles 7 s', { timeout: 30_000 }, async (t) => {
    const b = await boot(t, 'node', echoHandler);
    const raw = await RawClient.open(b.port);
    t.after(() => raw.socket.destroy());
    raw.socket.write('GET /first HTTP/1.1\r\nHost: test\r\n\r\n');
    await within(
      'the first answer',
      raw.waitFor((c) => parseResponses(c.buffer()).length === 1),
    );
    const [first] = parseResponses(raw.buffer());
    assert.equal(first.headers['connection'], 'keep-alive');
    assert.equal(first.headers['keep-alive'], 'timeout=5');

    await sleep(LATE_CLIENT_IDLE_MS);
    assert.equal(raw.closed, false, `the server closed the connection within ${LATE_CLIENT_IDLE_MS} ms of idling`);
    raw.socket.write('POST /second HTTP/1.1\r\nHost: test\r\nContent-Length: 5\r\n\r\nhello');
    await within(
      'the second answer on the same connection',
      raw.waitFor((c) => parseResponses(c.buffer()).length === 2),
    );
    const second = JSON.parse(parseResponses(raw.buffer())[1].body.toString()) as Echo;
    assert.equal(second.path, '/second');
    assert.equal(Buffer.from(second.body, 'base64').toString(), 'hello');
  });

  it('sends no keep-alive hint on an answer that closes the connection', async (t) => {
    const b = await boot(t, 'node', echoHandler);
    const raw = await RawClient.open(b.port);
    t.after(() => raw.socket.destroy());
    raw.socket.write('GET /last HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n');
    await within(
      'the answer and the close',
      raw.waitFor((c) => c.closed && parseResponses(c.buffer()).length === 1),
    );
    const [only] = parseResponses(raw.buffer());
    assert.equal(only.headers['connection'], 'close');
    assert.equal(only.headers['keep-alive'], undefined);
  });
});
