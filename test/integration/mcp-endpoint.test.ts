// Warren as an MCP server: an SDK Client over Streamable HTTP drives POST/GET/DELETE /mcp on the real
// server, lists Warren's tools and creates, continues and lists sessions through them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { uwsSkip } from '../helpers/absent.ts';
import { call, startApp } from '../helpers/app.ts';

const UWS_SKIP = uwsSkip();

type TextResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

for (const transport of ['uws', 'node'] as const) {
  describe(`Warren MCP endpoint (${transport})`, { skip: transport === 'uws' ? (UWS_SKIP ?? false) : false }, () => {
    it('lets an MCP client list the tools and create, continue and list sessions', async (t) => {
      const app = await startApp(t, [{ text: 'hello from warren' }, { text: 'second turn' }], { httpTransport: transport });
      const client = new Client({ name: 'test-client', version: '1.0.0' });
      const clientTransport = new StreamableHTTPClientTransport(new URL(`${app.url}/mcp`));
      await client.connect(clientTransport);
      t.after(() => client.close());
      assert.ok(clientTransport.sessionId, 'an MCP session id was assigned');

      const { tools } = await client.listTools();
      assert.deepEqual(
        tools
          .map((x) => x.name)
          .filter((n) => n.startsWith('warren_session'))
          .sort(),
        ['warren_session_continue', 'warren_session_create', 'warren_sessions_list'],
      );
      const create = tools.find((x) => x.name === 'warren_session_create')!;
      assert.equal(create.inputSchema.type, 'object');
      assert.deepEqual(create.inputSchema.required, ['prompt']);

      const created = (await client.callTool({
        name: 'warren_session_create',
        arguments: { prompt: 'hi', labels: { via: 'mcp' } },
      })) as TextResult;
      assert.notEqual(created.isError, true, JSON.stringify(created));
      const sessionId = String(created.structuredContent?.session_id);
      assert.equal(created.structuredContent?.text, 'hello from warren');

      const next = (await client.callTool({
        name: 'warren_session_continue',
        arguments: { session_id: sessionId, prompt: 'again' },
      })) as TextResult;
      assert.equal(next.structuredContent?.text, 'second turn');
      const listed = (await client.callTool({ name: 'warren_sessions_list', arguments: {} })) as TextResult;
      const sessions = listed.structuredContent?.sessions as Array<{
        session_id: string;
        message_count: number;
        labels: Record<string, string>;
      }>;
      assert.deepEqual(
        sessions.map((s) => [s.session_id, s.message_count, s.labels]),
        [[sessionId, 4, { via: 'mcp' }]],
      );
      // The REST view agrees.
      assert.equal((await call(app.url, 'GET', `/sessions/${sessionId}`)).body.message_count, 4);

      const bad = (await client.callTool({ name: 'warren_session_continue', arguments: { session_id: sessionId } })) as TextResult;
      assert.equal(bad.isError, true);
      assert.match(bad.content[0].text ?? '', /invalid arguments/);
      const missing = (await client.callTool({
        name: 'warren_session_continue',
        arguments: { session_id: '00000000-0000-4000-8000-000000000000', prompt: 'x' },
      })) as TextResult;
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent?.code, 'SESSION_NOT_FOUND');
      const unknown = (await client.callTool({ name: 'nope', arguments: {} })) as TextResult;
      assert.equal(unknown.isError, true);

      // Ending the MCP session: DELETE, after which the session id is unknown (404 in the error envelope).
      const sid = clientTransport.sessionId!;
      await clientTransport.terminateSession();
      const after = await call(
        app.url,
        'POST',
        '/mcp',
        { jsonrpc: '2.0', id: 9, method: 'tools/list' },
        {
          accept: 'application/json, text/event-stream',
          'mcp-session-id': sid,
          'mcp-protocol-version': '2025-06-18',
        },
      );
      assert.equal(after.status, 404);
      assert.equal(after.body.code, 'NOT_FOUND');
    });

    it('answers requests without an MCP session in the error envelope', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const noSession = await call(
        app.url,
        'POST',
        '/mcp',
        { jsonrpc: '2.0', id: 1, method: 'tools/list' },
        { accept: 'application/json, text/event-stream' },
      );
      assert.equal(noSession.status, 400);
      assert.equal(noSession.body.code, 'BAD_REQUEST');
      const stream = await call(app.url, 'GET', '/mcp');
      assert.equal(stream.status, 400);
      const unknown = await call(app.url, 'DELETE', '/mcp', undefined, { 'mcp-session-id': 'nope' });
      assert.equal(unknown.status, 404);
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
      };
      const notAcceptable = await call(app.url, 'POST', '/mcp', init, { accept: 'application/json' });
      assert.equal(notAcceptable.status, 400);
      assert.equal(typeof notAcceptable.body.error, 'string');
      const ok = await call(app.url, 'POST', '/mcp', init, { accept: 'application/json, text/event-stream' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.result.serverInfo.name, 'warren');
      const sid = ok.headers.get('mcp-session-id')!;
      assert.ok(sid);
      // The server-to-client event stream of that MCP session opens as SSE.
      const stream2 = await fetch(`${app.url}/mcp`, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
      });
      assert.equal(stream2.status, 200);
      assert.match(stream2.headers.get('content-type') ?? '', /^text\/event-stream/);
      await stream2.body?.cancel();
    });
  });
}
