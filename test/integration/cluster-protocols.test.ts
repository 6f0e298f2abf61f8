// The four foreign protocols through a cluster node that does not own the session (one embedded
// PostgreSQL realm, two in-process nodes): node A hosts the session; on node B an OpenAI response chained
// onto it, a background one cancelled, a LangGraph runs/wait and a cancelled run, an AG-UI run, an A2A
// SendMessage and a CancelTask all reach A (B's model is never called) and the cancels stop turns running
// there. Then B reads the session through REST history: one transcript. Skips, saying why, where
// PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call, startClusterNode } from '../helpers/app.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';

const pgServer = await testPostgres();

/** Answers `re: <prompt>`; a prompt `stuck` waits until its turn is cancelled. */
function script(req: ProviderRequest): ScriptedReply {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  const text = typeof last?.content === 'string' ? last.content : '?';
  return text === 'stuck' ? { text: 'never', waitFor: new Promise<void>(() => {}) } : { text: `re: ${text}` };
}

if (!pgServer.ok) {
  describe('cluster protocols', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('foreign protocols through a node that does not own the session', () => {
    it('OpenAI, LangGraph, AG-UI and A2A turns and cancels on node B run on owner A; one transcript', async (t) => {
      const url = await server.createDatabase();
      const a = await startClusterNode(t, url, { script });
      const b = await startClusterNode(t, url, { script: () => ({ text: 'B must not run turns' }) });

      // OpenAI: the chain starts on A (A hosts the session), goes on through B.
      const r1 = await call(a.url, 'POST', '/v1/responses', { input: 'o1' });
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      const sid = r1.body.session_id as string;
      const r2 = await call(b.url, 'POST', '/v1/responses', { input: 'o2', previous_response_id: r1.body.id });
      assert.equal(r2.status, 200, JSON.stringify(r2.body));
      assert.equal(r2.body.status, 'completed');
      assert.equal(r2.body.session_id, sid);
      const bg = await call(b.url, 'POST', '/v1/responses', { input: 'stuck', previous_response_id: r2.body.id, background: true });
      assert.equal(bg.body.status, 'in_progress', JSON.stringify(bg.body));
      const cancelled = await call(b.url, 'POST', `/v1/responses/${bg.body.id as string}/cancel`);
      assert.equal(cancelled.body.status, 'cancelled', JSON.stringify(cancelled.body));

      // LangGraph: the session is the thread.
      const lg = await call(b.url, 'POST', `/threads/${sid}/runs/wait`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'lg' }] },
      });
      assert.equal(lg.status, 200, JSON.stringify(lg.body));
      assert.equal((lg.body.messages as Array<{ content: string }>).at(-1)?.content, 're: lg');
      const run = await call(b.url, 'POST', `/threads/${sid}/runs`, {
        assistant_id: 'agent',
        input: { messages: [{ role: 'user', content: 'stuck' }] },
      });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      const interrupted = await call(b.url, 'POST', `/threads/${sid}/runs/${run.body.run_id as string}/cancel?wait=1&action=interrupt`);
      assert.equal(interrupted.body.status, 'interrupted', JSON.stringify(interrupted.body));

      // AG-UI: the session is the thread; the run streams from A through B.
      const ag = await fetch(`${b.url}/ag-ui/default`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({
          threadId: sid,
          runId: 'ag-1',
          messages: [{ id: '1', role: 'user', content: 'ag' }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
        }),
      });
      const agText = await ag.text();
      assert.equal(ag.status, 200, agText);
      assert.match(agText, /"delta":"re: ag"/);
      assert.match(agText, /RUN_FINISHED/);

      // A2A 1.0: the session is the context; a task running on A is cancelled through B.
      const rpc = (method: string, params: unknown) => call(b.url, 'POST', '/a2a', { jsonrpc: '2.0', id: 1, method, params });
      const message = (text: string) => ({ messageId: randomUUID(), role: 'ROLE_USER', parts: [{ text }], contextId: sid });
      const sent = await rpc('SendMessage', { message: message('a2a') });
      const task = (sent.body.result as { task: { status: { state: string }; artifacts: Array<{ parts: Array<{ text: string }> }> } }).task;
      assert.equal(task.status.state, 'TASK_STATE_COMPLETED', JSON.stringify(sent.body));
      assert.equal(task.artifacts[0].parts[0].text, 're: a2a');
      const stuck = await rpc('SendMessage', { message: message('stuck'), configuration: { returnImmediately: true } });
      const stuckTask = (stuck.body.result as { task: { id: string; status: { state: string } } }).task;
      assert.equal(stuckTask.status.state, 'TASK_STATE_WORKING', JSON.stringify(stuck.body));
      const cancel = await rpc('CancelTask', { id: stuckTask.id });
      assert.equal((cancel.body.result as { status: { state: string } }).status.state, 'TASK_STATE_CANCELED', JSON.stringify(cancel.body));

      // Every turn ran on A; B's model was never called. B reads one transcript.
      assert.equal(b.provider.requests.length, 0, 'no turn ran on B');
      const hist = await call(b.url, 'GET', `/sessions/${sid}/history`);
      assert.equal(hist.status, 200);
      const users = (hist.body.messages as Array<{ role: string; content: unknown }>)
        .filter((m) => m.role === 'user' && m.content !== 'stuck')
        .map((m) => m.content);
      assert.deepEqual(users, ['o1', 'o2', 'lg', 'ag', 'a2a']);
    });
  });
}
