// Live MCP through the real server: tool servers added, removed and reloaded on running sessions, with
// real MCP servers (a stdio child process and a loopback Streamable HTTP / SSE server) built with the SDK.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { startHttpMcpServer, stdioServer } from '../helpers/mcp-servers.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';

type Row = { role: string; results?: Array<{ tool_use_id: string; content: string; is_error?: boolean }> };

/** The MCP tools offered (other categories, such as the schedule tools, are on by default). */
function toolNames(req: { tools?: Array<{ name: string }> }): string[] {
  return (req.tools ?? [])
    .map((t) => t.name)
    .filter((n) => n.startsWith('mcp__'))
    .sort();
}

async function toolResults(base: string, id: string): Promise<Array<{ content: string; is_error?: boolean }>> {
  const h = await call(base, 'GET', `/sessions/${id}/history`);
  assert.equal(h.status, 200);
  return (h.body.messages as Row[]).filter((r) => r.role === 'tool_results').flatMap((r) => r.results ?? []);
}

async function settled(base: string, id: string) {
  const r = await call(base, 'GET', `/sessions/${id}/mcp?wait=settled`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body as {
    servers: Array<{
      name: string;
      state: string;
      tools: string[];
      source: string;
      transport: string;
      applied_at_turn?: number;
      error?: { kind: string; message: string };
    }>;
    staged: unknown[];
  };
}

/** One tool call, then a final text. */
function callTool(name: string, args: unknown = {}, id = 'c1'): ScriptedReply[] {
  return [{ tool_calls: [{ name, args, id }] }, { text: 'done' }];
}

describe('live MCP', () => {
  it('adds a stdio server on an idle session; its tools join the next turn', async (t) => {
    const app = await startApp(t, [{ text: 'created' }, ...callTool('mcp__local__echo', { text: 'hi' })]);
    const id = await createSession(app.url);
    const r = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: stdioServer('local') });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body, { session_id: id, operation: 'add', server_name: 'local', status: 'staged', persisted: false });
    // wait=settled waits for the staged (unpersisted) add and shows its connection, ready with its tools.
    const before = await settled(app.url, id);
    assert.deepEqual(before.servers, []);
    assert.equal(before.staged.length, 1);
    const staged = before.staged[0] as { operation: string; server_name: string; persisted: boolean; state: string; tools: string[] };
    assert.deepEqual([staged.operation, staged.server_name, staged.persisted, staged.state], ['add', 'local', false, 'ready']);
    assert.ok(staged.tools.includes('mcp__local__echo'), staged.tools.join());

    const c = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'use it' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.text, 'done');
    assert.deepEqual(toolNames(app.provider.requests[1]), [
      'mcp__local__crash',
      'mcp__local__echo',
      'mcp__local__fail',
      'mcp__local__pid',
      'mcp__local__stall',
    ]);
    assert.deepEqual(await toolResults(app.url, id), [{ tool_use_id: 'c1', content: 'local: hi' }]);
    const after = await settled(app.url, id);
    assert.equal(after.servers.length, 1);
    assert.deepEqual(
      { ...after.servers[0], tools: after.servers[0].tools.length },
      {
        name: 'local',
        source: 'session',
        transport: 'stdio',
        state: 'ready',
        tools: 5,
        applied_at_turn: 2,
      },
    );
    assert.deepEqual(after.staged, []);
  });

  it('stages an add while a turn runs and applies it only at the next turn boundary', async (t) => {
    const entered = deferred();
    const open = deferred();
    const script = (req: ProviderRequest, i: number): ScriptedReply | Promise<ScriptedReply> => {
      if (i === 1) {
        entered.resolve();
        // Held open until the add is staged and its server connected; then asks for the new tool anyway.
        return { tool_calls: [{ name: 'mcp__late__echo', args: { text: 'too early' }, id: 'early' }], waitFor: open.promise };
      }
      if (i === 2) return { text: 'first done' };
      if (i === 3) return { tool_calls: [{ name: 'mcp__late__echo', args: { text: 'now' }, id: 'late' }] };
      return echoReply(req);
    };
    const app = await startApp(t, script);
    const id = await createSession(app.url);
    const running = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'long turn' });
    await entered.promise;
    const r = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: stdioServer('late') });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'staged');
    const during = await settled(app.url, id);
    assert.deepEqual(during.servers, [], 'not applied mid-turn');
    open.resolve();
    const first = await running;
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(toolNames(app.provider.requests[1]), []);
    assert.deepEqual(toolNames(app.provider.requests[2]), [], 'the running turn never sees the staged server');
    assert.deepEqual(await toolResults(app.url, id), [{ tool_use_id: 'early', content: 'unknown tool: mcp__late__echo', is_error: true }]);

    const second = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(second.status, 200, JSON.stringify(second.body));
    assert.ok(toolNames(app.provider.requests[3]).includes('mcp__late__echo'));
    assert.equal((await toolResults(app.url, id))[1].content, 'late: now');
    const status = await settled(app.url, id);
    assert.equal(status.servers[0].applied_at_turn, 3);
    const ledger = await call(app.url, 'GET', `/sessions/${id}/ledger`);
    const applied = (ledger.body.events as Array<{ payload: { type: string; applied_at_turn?: number; changes?: unknown } }>)
      .filter((e) => e.payload.type === 'mcp_changes_applied')
      .map((e) => e.payload);
    assert.deepEqual(
      applied.map((p) => [p.applied_at_turn, p.changes]),
      [[3, [{ operation: 'add', server_name: 'late' }]]],
    );
  });

  it('removes a server at the next boundary; unknown names are 404', async (t) => {
    const app = await startApp(t, [{ text: 'created' }, { text: 'with' }, ...callTool('mcp__gone__echo', { text: 'x' })]);
    const id = await createSession(app.url);
    assert.equal(
      (await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: stdioServer('gone') })).status,
      200,
    );
    await settled(app.url, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'one' })).status, 200);
    assert.ok(toolNames(app.provider.requests[1]).includes('mcp__gone__echo'));
    const r = await call(app.url, 'POST', `/sessions/${id}/mcp/remove`, { session_id: id, server_name: 'gone' });
    assert.deepEqual(r.body, { session_id: id, operation: 'remove', server_name: 'gone', status: 'staged', persisted: false });
    const c = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.deepEqual(toolNames(app.provider.requests[2]), []);
    assert.deepEqual(
      (await toolResults(app.url, id)).map((x) => x.is_error),
      [true],
    );
    assert.deepEqual((await settled(app.url, id)).servers, []);
    const again = await call(app.url, 'POST', `/sessions/${id}/mcp/remove`, { session_id: id, server_name: 'gone' });
    assert.equal(again.status, 404);
    assert.equal(again.body.code, 'NOT_FOUND');
    const reload = await call(app.url, 'POST', `/sessions/${id}/mcp/reload`, { session_id: id, server_name: 'nope' });
    assert.equal(reload.status, 404);
  });

  it('reloads a Streamable HTTP server after it restarts (headers sent on every request)', async (t) => {
    let server = await startHttpMcpServer('A');
    t.after(() => server.close());
    const app = await startApp(t, [
      { text: 'created' },
      ...callTool('mcp__remote__echo', { text: 'one' }, 'c1'),
      ...callTool('mcp__remote__echo', { text: 'two' }, 'c2'),
      ...callTool('mcp__remote__echo', { text: 'three' }, 'c3'),
    ]);
    const id = await createSession(app.url);
    const add = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      server_config: { name: 'remote', url: server.url, headers: { 'x-test-token': 'secret' } },
    });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    await settled(app.url, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'a' })).status, 200);
    assert.equal((await toolResults(app.url, id))[0].content, 'A: one');
    assert.ok(server.seenHeaders.length > 0 && server.seenHeaders.every((h) => h['x-test-token'] === 'secret'));

    const port = server.port;
    await server.close();
    server = await startHttpMcpServer('B', port);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'b' })).status, 200);
    assert.equal((await toolResults(app.url, id))[1].is_error, true, 'the old connection is gone with the old server');

    const reload = await call(app.url, 'POST', `/sessions/${id}/mcp/reload`, { session_id: id, server_name: null });
    assert.deepEqual(reload.body, { session_id: id, operation: 'reload', status: 'staged', persisted: false });
    await settled(app.url, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'c' })).status, 200);
    assert.equal((await toolResults(app.url, id))[2].content, 'B: three');
    const status = await settled(app.url, id);
    assert.deepEqual(
      [status.servers[0].state, status.servers[0].transport, status.servers[0].applied_at_turn],
      ['ready', 'streamable-http', 4],
    );
  });

  it('speaks the legacy SSE transport', async (t) => {
    const server = await startHttpMcpServer('S');
    t.after(() => server.close());
    const app = await startApp(t, [{ text: 'created' }, ...callTool('mcp__legacy__echo', { text: 'over sse' })]);
    const id = await createSession(app.url);
    const add = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      server_config: { name: 'legacy', url: server.sseUrl, transport: 'sse' },
    });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    await settled(app.url, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' })).status, 200);
    assert.equal((await toolResults(app.url, id))[0].content, 'S: over sse');
  });

  it('bounds a hung server by connect_timeout_secs and keeps the session working', async (t) => {
    const app = await startApp(t, [{ text: 'created' }, { text: 'still fine' }]);
    const id = await createSession(app.url);
    const add = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      server_config: stdioServer('stuck', 'hang', { connect_timeout_secs: 0.3 }),
    });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    await settled(app.url, id);
    const c = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.text, 'still fine');
    assert.deepEqual(toolNames(app.provider.requests[1]), []);
    const status = await settled(app.url, id);
    assert.equal(status.servers[0].state, 'failed');
    assert.equal(status.servers[0].error?.kind, 'timeout');
  });

  it('isolates a crashing server: the call is an error result, other servers and the session carry on, reload retries', async (t) => {
    const app = await startApp(t, [
      { text: 'created' },
      { tool_calls: [{ name: 'mcp__bad__crash', args: {}, id: 'boom' }] },
      { tool_calls: [{ name: 'mcp__good__echo', args: { text: 'alive' }, id: 'ok' }] },
      { text: 'survived' },
      ...callTool('mcp__bad__echo', { text: 'back' }, 'again'),
    ]);
    const id = await createSession(app.url);
    for (const cfg of [stdioServer('good'), stdioServer('bad'), stdioServer('dead', 'exit')]) {
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: cfg })).status, 200);
    }
    await settled(app.url, id);
    const c = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'crash it' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    assert.equal(c.body.text, 'survived');
    const results = await toolResults(app.url, id);
    assert.equal(results[0].is_error, true);
    assert.equal(results[1].content, 'good: alive');
    const status = await settled(app.url, id);
    const byName = Object.fromEntries(status.servers.map((s) => [s.name, s]));
    assert.equal(byName.good.state, 'ready');
    assert.equal(byName.bad.state, 'failed');
    assert.equal(byName.bad.error?.kind, 'exited');
    assert.equal(byName.dead.state, 'failed');
    assert.match(byName.dead.error?.message ?? '', /refusing to start/);

    assert.equal((await call(app.url, 'POST', `/sessions/${id}/mcp/reload`, { session_id: id, server_name: 'bad' })).status, 200);
    await settled(app.url, id);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'retry' })).status, 200);
    assert.equal((await toolResults(app.url, id))[2].content, 'bad: back');
  });

  it('runs MCP calls through the tool loop: execution events, error results and the tool time limit', async (t) => {
    const app = await startApp(t, [
      { text: 'created' },
      {
        tool_calls: [
          { name: 'mcp__loop__fail', args: {}, id: 'f' },
          { name: 'mcp__loop__stall', args: {}, id: 's' },
        ],
      },
      { text: 'done' },
    ]);
    assert.equal((await call(app.url, 'PATCH', '/config', { tools: { default_timeout_secs: 0.3 } })).status, 200);
    const id = await createSession(app.url);
    assert.equal(
      (await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: stdioServer('loop') })).status,
      200,
    );
    await settled(app.url, id);
    const c = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
    assert.equal(c.status, 200, JSON.stringify(c.body));
    const results = await toolResults(app.url, id);
    assert.deepEqual(results[0], { tool_use_id: 'f', content: 'it failed', is_error: true });
    assert.equal(results[1].is_error, true);
    assert.match(results[1].content, /timed out after 300 ms/);
    const ledger = await call(app.url, 'GET', `/sessions/${id}/ledger`);
    const kinds = (ledger.body.events as Array<{ payload: { type: string; name?: string; id?: string } }>)
      .filter((e) => e.payload.type.startsWith('tool_execution_'))
      .map((e) => `${e.payload.type}:${e.payload.id}`);
    for (const k of [
      'tool_execution_started:f',
      'tool_execution_completed:f',
      'tool_execution_started:s',
      'tool_execution_timed_out:s',
      'tool_execution_completed:s',
    ]) {
      assert.ok(kinds.includes(k), `${k} in ${kinds.join(', ')}`);
    }
  });
});
