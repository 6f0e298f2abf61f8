// Live MCP across a restart and from config: `persisted: true` changes live in the session's durable
// state and come back when Warren restarts on the same realm; `[tools] mcp_servers` reach every session;
// the route checks answer in wire-notes' order with the error envelope.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp, type App } from '../../app.ts';
import { openRealm } from '../../config/realm.ts';
import { openStore } from '../../storage/open-store.ts';
import { createScriptedProvider, type Script, type ScriptedProvider } from '../../providers/scripted.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { startHttpMcpServer, stdioServer } from '../helpers/mcp-servers.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

async function settledServers(base: string, id: string): Promise<Array<{ name: string; state: string; source: string }>> {
  const r = await call(base, 'GET', `/sessions/${id}/mcp?wait=settled`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.servers.map((s: { name: string; state: string; source: string }) => ({ name: s.name, state: s.state, source: s.source }));
}

async function bootOn(
  t: TestContext,
  root: string,
  script: Script,
  backend: 'lmdb' | 'sqlite' = 'lmdb',
): Promise<App & { provider: ScriptedProvider }> {
  const provider = createScriptedProvider(script);
  const app = await createApp({
    host: '127.0.0.1',
    port: 0,
    stateRoot: root,
    contextRoot: root,
    realm: 'mcp-realm',
    realmBackend: backend,
    logger: pino({ level: 'silent' }),
    providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
  });
  t.after(() => app.close());
  return { ...app, provider };
}

describe('live MCP persistence and config', () => {
  for (const backend of ['lmdb', 'sqlite'] as const)
    it(`keeps persisted changes across a Warren restart and drops the others (${backend})`, { timeout: SLOW_TEST_MS }, async (t) => {
      const dir = await tmpDir('warren-mcp-');
      t.after(() => dir.cleanup());
      const http = await startHttpMcpServer('H');
      t.after(() => http.close());
      const first = await bootOn(t, dir.path, [{ text: 'created' }], backend);
      const patched = await call(first.url, 'PATCH', '/config', { tools: { mcp_servers: [stdioServer('cfg'), stdioServer('cfgkept')] } });
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      const id = await createSession(first.url);
      const stage = async (op: string, body: Record<string, unknown>) => {
        const r = await call(first.url, 'POST', `/sessions/${id}/mcp/${op}`, { session_id: id, ...body });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        return r.body;
      };
      assert.equal((await stage('add', { server_config: { name: 'kept', url: http.url }, persisted: true })).persisted, true);
      await stage('add', { server_config: stdioServer('transient') });
      await stage('remove', { server_name: 'cfg', persisted: true });
      await first.close();

      const second = await bootOn(
        t,
        dir.path,
        [{ tool_calls: [{ name: 'mcp__kept__echo', args: { text: 'after restart' }, id: 'k' }] }, { text: 'ok' }],
        backend,
      );
      assert.deepEqual(await settledServers(second.url, id), [
        { name: 'cfgkept', state: 'ready', source: 'config' },
        { name: 'kept', state: 'ready', source: 'session' },
      ]);
      const c = await call(second.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'use kept' });
      assert.equal(c.status, 200, JSON.stringify(c.body));
      const names = (second.provider.requests[0].tools ?? []).map((x) => x.name);
      assert.ok(names.includes('mcp__kept__echo') && names.includes('mcp__cfgkept__echo'));
      assert.ok(!names.some((n) => n.startsWith('mcp__cfg__') || n.startsWith('mcp__transient__')));
      const h = await call(second.url, 'GET', `/sessions/${id}/history`);
      const results = h.body.messages.filter((m: { role: string }) => m.role === 'tool_results');
      assert.equal(results[0].results[0].content, 'H: after restart');
    });

  it('connects [tools] mcp_servers for every session in the background', async (t) => {
    const app = await startApp(t, [
      { text: 'created' },
      { tool_calls: [{ name: 'mcp__shared__echo', args: { text: 'cfg' }, id: 'x' }] },
      { text: 'done' },
    ]);
    assert.equal((await call(app.url, 'PATCH', '/config', { tools: { mcp_servers: [stdioServer('shared')] } })).status, 200);
    const id = await createSession(app.url);
    assert.deepEqual(await settledServers(app.url, id), [{ name: 'shared', state: 'ready', source: 'config' }]);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' })).status, 200);
    const h = await call(app.url, 'GET', `/sessions/${id}/history`);
    assert.equal(h.body.messages.filter((m: { role: string }) => m.role === 'tool_results')[0].results[0].content, 'shared: cfg');
  });

  it('rejects a bad mcp_servers config entry with 400', async (t) => {
    const app = await startApp(t);
    const r = await call(app.url, 'PATCH', '/config', { tools: { mcp_servers: [{ name: 'x', command: 7 }] } });
    assert.equal(r.status, 400);
  });

  it('checks in order: id mismatch 400, bad name 400, unknown or archived session 404, bad config 400', async (t) => {
    const app = await startApp(t, [{ text: 'a' }, { text: 'b' }]);
    const id = await createSession(app.url);
    const other = '00000000-0000-4000-8000-000000000000';
    const post = (sid: string, op: string, body: unknown) => call(app.url, 'POST', `/sessions/${sid}/mcp/${op}`, body);
    const expect = async (p: Promise<{ status: number; body: { code?: string; error?: string } }>, status: number, code: string) => {
      const r = await p;
      assert.equal(r.status, status, JSON.stringify(r.body));
      assert.equal(r.body.code, code);
      assert.equal(typeof r.body.error, 'string');
    };
    // Mismatch comes first, even for an unknown session with an empty name.
    await expect(post(other, 'add', { session_id: id, server_config: { name: '' } }), 400, 'BAD_REQUEST');
    await expect(post(id, 'remove', { session_id: other, server_name: 'x' }), 400, 'BAD_REQUEST');
    // Empty name before the session lookup.
    await expect(post(other, 'add', { session_id: other, server_config: { name: ' ', command: 'x' } }), 400, 'BAD_REQUEST');
    await expect(post(other, 'remove', { session_id: other, server_name: '' }), 400, 'BAD_REQUEST');
    await expect(post(other, 'reload', { session_id: other, server_name: '' }), 400, 'BAD_REQUEST');
    await expect(post(id, 'add', { session_id: id, server_config: { name: 'a__b', command: 'x' } }), 400, 'BAD_REQUEST');
    await expect(post(other, 'add', { session_id: other, server_config: { name: 'ok', command: 'x' } }), 404, 'SESSION_NOT_FOUND');
    await expect(post(other, 'reload', { session_id: other }), 404, 'SESSION_NOT_FOUND');
    await expect(post(id, 'add', { session_id: id, server_config: { name: 'ok' } }), 400, 'BAD_REQUEST');
    await expect(
      post(id, 'add', { session_id: id, server_config: { name: 'ok', command: 'x', url: 'http://127.0.0.1:1/' } }),
      400,
      'BAD_REQUEST',
    );
    await expect(post(id, 'add', { session_id: id, server_config: { name: 'ok', url: 'ftp://x' } }), 400, 'BAD_REQUEST');
    await expect(
      post(id, 'add', { session_id: id, server_config: { name: 'ok', url: 'http://x', transport: 'websocket' } }),
      400,
      'BAD_REQUEST',
    );
    await expect(post(id, 'add', { session_id: id }), 400, 'BAD_REQUEST');
    await expect(call(app.url, 'GET', `/sessions/${other}/mcp`), 404, 'SESSION_NOT_FOUND');
    await expect(post('not-a-uuid', 'reload', { session_id: 'not-a-uuid' }), 400, 'BAD_REQUEST');
    assert.equal((await call(app.url, 'DELETE', `/sessions/${id}`)).status, 200);
    await expect(post(id, 'add', { session_id: id, server_config: { name: 'ok', command: 'x' } }), 404, 'SESSION_NOT_FOUND');
  });

  it('accepts the same session locator in the body as in the path (realm-qualified, any case); refuses another id', async (t) => {
    const app = await startApp(t, [{ text: 'created' }, { text: 'applied' }]);
    const id = await createSession(app.url);
    const ref = `test-realm:${id}`;
    const upper = id.toUpperCase();
    const post = (sid: string, op: string, body: unknown) => call(app.url, 'POST', `/sessions/${sid}/mcp/${op}`, body);
    // session_ref (what create answered) as the locator in path and body.
    const add = await post(ref, 'add', { session_id: ref, server_config: stdioServer('local') });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    assert.deepEqual(add.body, { session_id: id, operation: 'add', server_name: 'local', status: 'staged', persisted: false });
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'apply' })).status, 200);
    assert.deepEqual(await settledServers(app.url, id), [{ name: 'local', state: 'ready', source: 'session' }]);
    // An upper-case uuid in both places, then the bare id in the path and the realm-qualified one in the body.
    const reload = await post(upper, 'reload', { session_id: upper, server_name: 'local' });
    assert.equal(reload.status, 200, JSON.stringify(reload.body));
    assert.equal(reload.body.session_id, id);
    const remove = await post(id, 'remove', { session_id: ref, server_name: 'local' });
    assert.equal(remove.status, 200, JSON.stringify(remove.body));
    assert.equal(remove.body.session_id, id);
    // Another realm's locator of the same uuid, another uuid or an empty id is still a mismatch.
    for (const other of [`other-realm:${id}`, '00000000-0000-4000-8000-000000000000', '']) {
      for (const [op, rest] of [
        ['add', { server_config: stdioServer('x') }],
        ['remove', { server_name: 'local' }],
        ['reload', {}],
      ] as const) {
        const r = await post(ref, op, { session_id: other, ...rest });
        assert.equal(r.status, 400, `${op} ${other}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'BAD_REQUEST');
        assert.match(r.body.error, /Session ID mismatch/);
      }
    }
  });

  it('reports mcp_live as available', async (t) => {
    const app = await startApp(t);
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.deepEqual(caps.body.capabilities.find((c: { id: string }) => c.id === 'mcp_live').status, 'Available');
    const runtime = await call(app.url, 'GET', '/runtime/capabilities');
    assert.equal(runtime.body.features.mcp_live, true);
  });

  it('answers 409 CONFLICT for a session with no live runtime here (held for durable recovery)', async (t) => {
    const dir = await tmpDir('warren-mcp-held-');
    t.after(() => dir.cleanup());
    const first = await bootOn(t, dir.path, [{ text: 'created' }]);
    const id = await createSession(first.url);
    await first.close();
    // A record that disagrees with its transcript: the session comes back held (evidence quarantined).
    const realm = await openRealm({ realm: 'mcp-realm', stateRoot: dir.path, isolated: false, logger: pino({ level: 'silent' }) });
    const store = await openStore(realm.backend, realm.storeDir);
    const record = (await store.getSession(id))!;
    await store.commit([{ op: 'putSession', session: { ...record, message_count: record.message_count + 1 } }]);
    await store.close();
    const second = await bootOn(t, dir.path, []);
    const r = await call(second.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: stdioServer('x') });
    assert.equal(r.status, 409, JSON.stringify(r.body));
    assert.equal(r.body.code, 'CONFLICT');
  });
});
