// test/cli/settle-heap.test.ts: a `warren serve` process that idles after 'ready' makes its one full
// collection (cli/settle-heap.ts: V8 then gives back the young generation start-up grew) and keeps
// serving afterwards: a turn, the OpenAPI document and a protocol route answer as before.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/app.ts';
import { startServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll, SLOW_TEST_MS } from '../helpers/wait.ts';

describe('idle heap settling', () => {
  it('collects once after an idle window following ready, then serves as before', { timeout: SLOW_TEST_MS }, async (t) => {
    const dir = await tmpDir('warren-settle-');
    t.after(() => dir.cleanup());
    const server = await startServerProcess({ stateRoot: dir.path, realm: 'settle', logLevel: 'debug', t });

    // One priming collection 1 s after ready, then a 6 s idle window: the line comes about 7 s after ready.
    const settled = await poll('the start-up heap settled line', () => server.logs.find((l) => l.msg === 'start-up heap settled'), {
      timeoutMs: 45_000,
      intervalMs: 100,
      detail: () => server.stderr() || JSON.stringify(server.logs.slice(-5)),
    });
    assert.equal(settled.component, 'heap');
    for (const key of ['ms', 'heap_used_before', 'heap_used_after', 'heap_total_before', 'heap_total_after']) {
      assert.equal(typeof settled[key], 'number', `${key} in ${JSON.stringify(settled)}`);
    }
    assert.equal(server.logs.filter((l) => l.msg === 'start-up heap settled').length, 1, 'one collection only');

    const turn = await call(server.url, 'POST', '/sessions', { prompt: 'hello', provider: 'scripted' });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(turn.body.text, 'echo: hello');
    const doc = await call(server.url, 'GET', '/openapi.json');
    assert.equal(doc.status, 200);
    assert.equal(doc.body.openapi, '3.1.0');
    const threads = await call(server.url, 'POST', '/threads', {});
    assert.equal(threads.status, 200, JSON.stringify(threads.body));
    assert.equal(server.hasExited(), false);
  });
});
