// Hostile request bodies on both transports and every backend: a JSON body nested deeper than
// `[limits] max_json_depth` (default 64) is refused at parse time with 400 BAD_REQUEST naming the limit,
// on every route, before any recursive walk (validation, copy, store encoder) sees it; no orphan session
// is left behind; a body over `[limits] max_body_bytes` gets its 413 and the server keeps serving.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { App } from '../../app.ts';
import { uwsSkip } from '../helpers/absent.ts';
import { bootApp, call } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const UWS_SKIP = uwsSkip();
const MAX_BODY = 64 * 1024;
const REALM = 'hostile';

async function boot(t: TestContext, transport: 'uws' | 'node', backend: 'lmdb' | 'jsonl' | 'sqlite' | 'memory'): Promise<App> {
  const dir = await tmpDir('warren-hostile-');
  const config = { limits: { max_body_bytes: MAX_BODY } };
  const app = await bootApp({ stateRoot: dir.path, realm: REALM, realmBackend: backend, httpTransport: transport, config });
  t.after(async () => {
    await app.close();
    await dir.cleanup();
  });
  return app;
}

/** A create body whose deepest point is `depth` levels (object, prompt array, block, then arrays). */
function createBody(depth: number): string {
  const inner = depth - 3;
  return `{"prompt":[{"type":"text","text":"hi","extra":${'['.repeat(inner)}${']'.repeat(inner)}}]}`;
}

function continueBody(id: string, depth: number): string {
  const inner = depth - 3;
  return `{"session_id":"${id}","prompt":[{"type":"text","text":"again","extra":${'['.repeat(inner)}${']'.repeat(inner)}}]}`;
}

for (const transport of ['node', 'uws'] as const) {
  for (const backend of ['lmdb', 'jsonl', 'sqlite', 'memory'] as const) {
    describe(`hostile bodies (${transport}, ${backend})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
      it('refuses JSON nested deeper than max_json_depth on every route, leaves no session, keeps serving', async (t) => {
        const app = await boot(t, transport, backend);
        for (const depth of [65, 5_000]) {
          const r = await call(app.url, 'POST', '/sessions', createBody(depth));
          assert.equal(r.status, 400, JSON.stringify(r.body));
          assert.equal(r.body.code, 'BAD_REQUEST');
          assert.match(r.body.error, /nested deeper than 64 levels \(limits\.max_json_depth\)/);
          assert.equal(r.body.details.max_json_depth, 64);
        }
        assert.deepEqual((await call(app.url, 'GET', '/sessions')).body.sessions, [], 'no orphan session');

        const ok = await call(app.url, 'POST', '/sessions', createBody(64));
        assert.equal(ok.status, 200, JSON.stringify(ok.body));
        const id = ok.body.session_id as string;
        const deep = await call(app.url, 'POST', `/sessions/${id}/messages`, continueBody(id, 5_000));
        assert.equal(deep.status, 400);
        assert.equal(deep.body.details.max_json_depth, 64);
        const config = await call(app.url, 'PATCH', '/config', `{"limits":${'{"x":'.repeat(100)}1${'}'.repeat(100)}}`);
        assert.equal(config.status, 400);
        assert.equal(config.body.details.max_json_depth, 64);

        const next = await call(app.url, 'POST', `/sessions/${id}/messages`, continueBody(id, 64));
        assert.equal(next.status, 200, JSON.stringify(next.body));
        const listed = (await call(app.url, 'GET', '/sessions')).body.sessions as Array<{ session_id: string; message_count: number }>;
        assert.deepEqual(
          listed.map((s) => [s.session_id, s.message_count]),
          [[id, 4]],
        );
      });

      it('answers an oversized body 413 and keeps serving', async (t) => {
        const app = await boot(t, transport, backend);
        const big = JSON.stringify({ prompt: 'x'.repeat(MAX_BODY) });
        const r = await call(app.url, 'POST', '/sessions', big);
        assert.equal(r.status, 413);
        assert.equal(r.body.code, 'PAYLOAD_TOO_LARGE');
        assert.deepEqual((await call(app.url, 'GET', '/sessions')).body.sessions, []);
        assert.equal((await call(app.url, 'POST', '/sessions', { prompt: 'small' })).status, 200);
      });
    });
  }
}
