// test/integration/spec-audit-comms-work.test.ts: clauses of SPEC.md (comms, ingress, skills, WorkGraph)
// that the feature test files did not pin, each found wrong once by an audit against the text:
// - "Peer terminal response": `peer_id` is the canonical routing id; display names are not accepted.
// - "Other interfaces": the `workgraph-workflow` companion skill is gated by the `work_graph` capability
//   and is not preloaded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';

const SESSION_PEER = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a11';

describe('peer terminal response: peer_id', () => {
  it('accepts canonical peer ids and refuses display names with 400, queuing nothing', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const post = (peer_id: string) =>
      call(app.url, 'POST', `/sessions/${id}/peer-response-terminal`, { peer_id, request_id: 'r', status: 'completed', result: {} });
    for (const peer of [SESSION_PEER, SESSION_PEER.toUpperCase(), `${SESSION_PEER}@127.0.0.1:7001`, `${SESSION_PEER}@[::1]:7001`]) {
      const res = await post(peer);
      assert.equal(res.status, 202, `${peer}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { queued: true });
    }
    for (const peer of [
      'beta',
      'Some Display Name',
      'remote-7',
      `${SESSION_PEER}@`,
      `${SESSION_PEER}@host`,
      `beta@127.0.0.1:7001`,
      `${SESSION_PEER} `,
    ]) {
      const res = await post(peer);
      assert.equal(res.status, 400, `${peer}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.code, 'BAD_REQUEST');
      assert.equal(typeof res.body.error, 'string');
    }
    // Only the four accepted responses reached the session: the next turn carries exactly those.
    const turn = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'next' });
    assert.equal(turn.status, 200);
    const sent = JSON.stringify(app.provider.requests[1].messages);
    assert.equal(sent.split('[response from ').length - 1, 4);
    assert.ok(!sent.includes('Some Display Name'));
  });
});

describe('the workgraph-workflow skill', () => {
  it('exists only while the work_graph capability is Available, and is never preloaded', async (t) => {
    const app = await startApp(t);
    const names = async () => ((await call(app.url, 'GET', '/skills')).body.skills as Array<{ name: string }>).map((s) => s.name);
    const status = async () =>
      (await call(app.url, 'GET', '/capabilities')).body.capabilities.find((c: { id: string }) => c.id === 'work_graph').status;

    // Default config: work_graph is DisabledByPolicy, so the skill is neither listed nor resolvable.
    assert.notEqual(await status(), 'Available');
    assert.ok(!(await names()).includes('workgraph-workflow'));
    assert.ok((await names()).includes('schedule-workflow'), 'ungated embedded skills stay listed');
    const refused = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['workgraph-workflow'] });
    assert.equal(refused.status, 404, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'SKILL_NOT_FOUND');

    // Turned on: listed as an active builtin skill, resolvable by name, still not injected unasked.
    assert.equal((await call(app.url, 'PATCH', '/config', { tools: { workgraph_enabled: true } })).status, 200);
    assert.equal(await status(), 'Available');
    const listed = ((await call(app.url, 'GET', '/skills')).body.skills as Array<{ name: string; scope: string; is_active: boolean }>).find(
      (s) => s.name === 'workgraph-workflow',
    );
    assert.deepEqual(listed && { scope: listed.scope, is_active: listed.is_active }, { scope: 'builtin', is_active: true });
    const plain = await call(app.url, 'POST', '/sessions', { prompt: 'hi', enable_workgraph: true });
    assert.equal(plain.status, 200, JSON.stringify(plain.body));
    assert.ok(!JSON.stringify(app.provider.requests.at(-1)!.messages).includes('# Skill: workgraph-workflow'), 'not preloaded');
    const named = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['workgraph-workflow'] });
    assert.equal(named.status, 200, JSON.stringify(named.body));
    assert.ok(JSON.stringify(app.provider.requests.at(-1)!.messages).includes('# Skill: workgraph-workflow'));

    // Off again: gone again.
    assert.equal((await call(app.url, 'PATCH', '/config', { tools: { workgraph_enabled: false } })).status, 200);
    assert.ok(!(await names()).includes('workgraph-workflow'));
  });
});
