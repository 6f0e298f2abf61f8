// Remote A2A agents as tools ([a2a.remotes]): a Warren session's scripted model calls `a2a__<name>`, the
// remote being a second Warren server (A2A 1.0 card: SendMessage) or a small loopback A2A 0.3 server
// (message/send, a bearer credential read from the variable auth_env names); real HTTP both ways. A remote
// on an address the realm's [network] rules refuse fails the tool call with the refusal as its error.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Script } from '../../providers/scripted.ts';
import { call, startApp } from '../helpers/app.ts';

type Msg = { role: string; content?: unknown; results?: Array<{ content: string; is_error?: boolean }> };

/** The model calls the remote tool with `args`, then answers with what the tool returned. */
function caller(tool: string, args: Record<string, unknown>): Script {
  return (req, i) => {
    if (i === 0) return { tool_calls: [{ name: tool, args, id: 'call_a2a' }] };
    const last = req.messages.at(-1) as Msg;
    return { text: `got ${last.results?.[0]?.content ?? '?'}` };
  };
}

async function toolResult(url: string, sessionId: string): Promise<{ content: string; is_error?: boolean }> {
  const hist = await call(url, 'GET', `/sessions/${sessionId}/history`);
  const rows = (hist.body.messages as Msg[]).filter((m) => m.role === 'tool_results');
  assert.equal(rows.length, 1, 'one tool result row');
  return rows[0].results![0];
}

function readBody(req: IncomingMessage, then: (raw: string) => void): void {
  let s = '';
  req.on('data', (c: Buffer) => (s += c.toString()));
  req.on('end', () => then(s));
}

describe('[a2a.remotes]: remote A2A agents as tools', () => {
  it('calls a second Warren over A2A 1.0; the reply, state and context come back as the tool result', async (t) => {
    const remote = await startApp(t, [{ text: 'remote says hi' }, { text: 'remote again' }]);
    const local = await startApp(t, caller('a2a__peer', { message: 'hello peer' }), {
      config: { a2a: { remotes: { peer: { url: remote.url, description: 'another Warren' } } } },
    });
    const created = await call(local.url, 'POST', '/sessions', { prompt: 'ask the peer' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const tools = (local.provider.requests[0].tools ?? []).map((x) => x.name);
    assert.ok(tools.includes('a2a__peer'), `the remote is a tool: ${tools.join(',')}`);
    const result = await toolResult(local.url, created.body.session_id as string);
    assert.ok(!result.is_error, result.content);
    const out = JSON.parse(result.content) as { state: string; reply: string; context_id: string; task_id: string };
    assert.equal(out.state, 'completed');
    assert.equal(out.reply, 'remote says hi');
    // The remote ran a turn in the session named by the context id: one transcript there too.
    const there = await call(remote.url, 'GET', `/sessions/${out.context_id}/history`);
    assert.equal(there.status, 200);
    assert.deepEqual(
      (there.body.messages as Msg[]).map((m) => [m.role, m.role === 'user' ? m.content : '']),
      [
        ['user', 'hello peer'],
        ['block_assistant', ''],
      ],
    );
    const task = await call(remote.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: out.task_id } });
    assert.equal((task.body.result as { status: { state: string } }).status.state, 'TASK_STATE_COMPLETED');
  });

  it('speaks 0.3 to a 0.3 card and sends the auth_env credential; a refused address is a clear tool error', async (t) => {
    const seen: Array<{ method: string; auth?: string; version?: string }> = [];
    const server = createServer((req, res) => {
      readBody(req, (raw) => {
        res.setHeader('content-type', 'application/json');
        if (req.method === 'GET') {
          seen.push({ method: 'card', auth: req.headers.authorization });
          const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
          res.end(JSON.stringify({ protocolVersion: '0.3.0', name: 'old', url: `${base}/rpc`, preferredTransport: 'JSONRPC' }));
          return;
        }
        const body = JSON.parse(raw) as {
          id: number;
          method: string;
          params: { message: { parts: Array<{ kind: string; text: string }> } };
        };
        seen.push({ method: body.method, auth: req.headers.authorization, version: req.headers['a2a-version'] as string });
        const text = body.params.message.parts.map((p) => `${p.kind}:${p.text}`).join('');
        const result = {
          kind: 'message',
          messageId: 'm',
          role: 'agent',
          parts: [{ kind: 'text', text: `echo ${text}` }],
          contextId: 'ctx-1',
        };
        res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const port = (server.address() as AddressInfo).port;
    const remotes = { old: { url: `http://127.0.0.1:${port}/`, auth_env: 'WARREN_OLD_AGENT_TOKEN' } };
    const local = await startApp(t, caller('a2a__old', { message: 'ping' }), {
      config: { a2a: { remotes } },
      env: { ...process.env, WARREN_OLD_AGENT_TOKEN: 'tok-123' },
    });
    const created = await call(local.url, 'POST', '/sessions', { prompt: 'go' });
    const result = await toolResult(local.url, created.body.session_id as string);
    assert.deepEqual(JSON.parse(result.content), { state: 'completed', reply: 'echo text:ping', context_id: 'ctx-1' });
    assert.deepEqual(seen, [
      { method: 'card', auth: 'Bearer tok-123' },
      { method: 'message/send', auth: 'Bearer tok-123', version: '0.3' },
    ]);

    // The same remote on a realm whose [network] rules deny loopback: refused at connect, nothing sent.
    const denied = await startApp(t, caller('a2a__old', { message: 'ping' }), {
      config: { a2a: { remotes }, network: { deny_cidrs: ['127.0.0.0/8'] } },
      env: { ...process.env, WARREN_OLD_AGENT_TOKEN: 'tok-123' },
    });
    const s2 = await call(denied.url, 'POST', '/sessions', { prompt: 'go' });
    const refused = await toolResult(denied.url, s2.body.session_id as string);
    assert.equal(refused.is_error, true);
    assert.match(refused.content, /^remote A2A agent 'old' failed: connection to 127\.0\.0\.1 refused: .*deny_cidrs/);
    assert.equal(seen.length, 2, 'the refused remote received nothing');
  });
});
