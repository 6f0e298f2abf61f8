// test/integration/spec-audit-comms-work.test.ts: clauses of SPEC.md (comms, ingress, skills, WorkGraph)
// that the feature test files did not pin, each found wrong once by an audit against the text:
// - "Other interfaces": the `workgraph-workflow` companion skill is gated by the `work_graph` capability
//   and is not preloaded.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';

describe('the workgraph-workflow skill', () => {
  it('exists only while the work_graph capability is Available, and is never preloaded', async (t) => {
    const app = await startApp(t);
    const names = async () => ((await call(app.url, 'GET', '/skills')).body.skills as Array<{ name: string }>).map((s) => s.name);
    const status = async () => (await call(app.url, 'GET', '/capabilities')).body.capabilities.find((c: { id: string }) => c.id === 'work_graph').status;

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
    const listed = ((await call(app.url, 'GET', '/skills')).body.skills as Array<{ name: string; scope: string; is_active: boolean }>).find((s) => s.name === 'workgraph-workflow');
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
