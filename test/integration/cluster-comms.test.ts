// test/integration/cluster-comms.test.ts: internal callers across the nodes of one embedded PostgreSQL
// realm. Comms: `POST /comms/send` reaching a node that hosts neither side runs on the sender's node, and
// the envelope is admitted on the recipient's node (an internal call routed like a client request), which
// wakes the keep-alive recipient there; a checksum_token request is answered back across nodes; the peer
// list answers from any node. MCP: `warren_session_continue` on a node that does not host the session runs
// the turn on its owner, and one on a session nobody hosts runs where the call arrived. Nothing answers 503.
// Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { call, createSession, startClusterNode, type TestApp } from '../helpers/app.ts';
import { createAgent, send, userTexts, waitRuns } from '../helpers/comms.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { echoReply } from '../../providers/scripted.ts';

const pgServer = await testPostgres();
const DURABLE = { durably_resolved: { outcome: 'accepted' } };

type TextResult = { content: Array<{ type: string; text?: string }>; structuredContent?: Record<string, unknown>; isError?: boolean };

async function node(t: TestContext, url: string): Promise<TestApp> {
  return startClusterNode(t, url, { script: echoReply, cluster: { lease_ms: 3000, tail_poll_ms: 50 } });
}

/** Prompts the node's provider was asked to answer (the last user text of each request). */
function prompts(app: TestApp): string[] {
  return app.provider.requests.map((r) => {
    const last = [...r.messages].reverse().find((m) => m.role === 'user');
    return last && typeof last.content === 'string' ? last.content : JSON.stringify(last?.content);
  });
}

if (!pgServer.ok) {
  describe('cluster internal callers', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('comms across cluster nodes', () => {
    it("sends from the sender's node and admits on the recipient's node, whichever node the request reached", async (t) => {
      const url = await server.createDatabase();
      const [a, b, c] = [await node(t, url), await node(t, url), await node(t, url)];
      const alpha = await createAgent(a.url, 'alpha');
      const beta = await createAgent(b.url, 'beta', { peer_meta: { description: 'second agent' } });

      // C hosts neither: the send runs on A (alpha's node), the envelope is admitted on B (beta's node).
      const sent = await send(c.url, { kind: 'peer_message', session_id: alpha, to: beta, body: 'hello beta' });
      assert.equal(sent.status, 200, JSON.stringify(sent.body));
      assert.equal(sent.body.kind, 'peer_message_sent');
      assert.deepEqual(sent.body.delivery, DURABLE);
      await waitRuns(c.url, beta, 2);
      assert.equal((await userTexts(c.url, beta)).at(-1), `[message from alpha (${alpha})] hello beta`);
      assert.equal(prompts(b).length, 2, "beta's woken turn ran on B");

      // A checksum_token request through B: sent on A, answered by beta's runtime on B, back to alpha on A.
      const req = await send(b.url, {
        kind: 'peer_request',
        session_id: alpha,
        to: beta,
        intent: 'checksum_token',
        params: { subject: 'warren' },
      });
      assert.equal(req.status, 200, JSON.stringify(req.body));
      assert.deepEqual(req.body.delivery, DURABLE);
      await waitRuns(c.url, alpha, 2);
      const token = createHash('sha256').update('warren').digest('hex');
      assert.equal(
        (await userTexts(b.url, alpha)).at(-1),
        `[response from beta (${beta}) to request ${req.body.request_id}: completed] {"request_intent":"checksum_token","request_subject":"warren","token":"${token}"}`,
      );
      assert.equal(prompts(a).length, 2, "alpha's woken turn ran on A");
      assert.equal(prompts(c).length, 0, 'nothing ran on C');

      // The peer list, asked on C for alpha.
      const peers = await call(c.url, 'GET', `/comms/peers?session_id=${alpha}`);
      assert.equal(peers.status, 200, JSON.stringify(peers.body));
      assert.deepEqual(
        peers.body.peers.map((p: { peer_id: string; name: string }) => [p.peer_id, p.name]),
        [[beta, 'beta']],
      );

      // A recipient without comms is refused with the comms code, not with a 503.
      const plain = await createSession(b.url, { prompt: 'no comms here' });
      const refused = await send(c.url, { kind: 'peer_message', session_id: alpha, to: plain, body: 'x' });
      assert.equal(refused.status, 500, JSON.stringify(refused.body));
      assert.equal(refused.body.code, 'peer_not_found_or_not_trusted');
      // The internal call is not a public route.
      assert.equal((await call(c.url, 'POST', '/_cluster/call/comms.accept', {})).status, 404);
    });
  });

  describe('MCP session tools across cluster nodes', () => {
    it('continue a session on the node hosting it, or where the call arrived when nobody hosts it', async (t) => {
      const url = await server.createDatabase();
      const [a, b] = [await node(t, url), await node(t, url)];
      const client = new Client({ name: 'cluster-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${b.url}/mcp`)));
      t.after(() => client.close());

      const id = await createSession(a.url, { prompt: 'first' });
      const next = (await client.callTool({
        name: 'warren_session_continue',
        arguments: { session_id: id, prompt: 'via mcp on b' },
      })) as TextResult;
      assert.notEqual(next.isError, true, JSON.stringify(next));
      assert.equal(next.structuredContent?.text, 'echo: via mcp on b');
      assert.equal(next.structuredContent?.session_id, id);
      assert.deepEqual(prompts(a), ['first', 'via mcp on b']);
      assert.deepEqual(prompts(b), []);
      assert.equal((await call(b.url, 'GET', `/sessions/${id}`)).body.message_count, 4);

      const missing = (await client.callTool({
        name: 'warren_session_continue',
        arguments: { session_id: '00000000-0000-4000-8000-000000000000', prompt: 'x' },
      })) as TextResult;
      assert.equal(missing.isError, true);
      assert.equal(missing.structuredContent?.code, 'SESSION_NOT_FOUND');

      // A leaves: nobody hosts the session, B takes it and runs the turn itself.
      await a.close();
      const taken = (await client.callTool({
        name: 'warren_session_continue',
        arguments: { session_id: id, prompt: 'after a left' },
      })) as TextResult;
      assert.notEqual(taken.isError, true, JSON.stringify(taken));
      assert.equal(taken.structuredContent?.text, 'echo: after a left');
      assert.deepEqual(prompts(b), ['after a left']);
    });
  });
}
