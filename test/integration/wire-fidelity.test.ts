// Wire fidelity (wire-notes): POST /sessions/{id}/system_prompt sends no `commit` (Warren keeps no
// rewrite commits of the reference's shape) and /openapi.json declares exactly what is sent; reserved
// label keys are refused on create and continue (rule 13); history user rows carry transcript_role.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';

describe('wire fidelity', () => {
  it('answers system_prompt with the declared members only, and /openapi.json declares them', async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url);
    const first = await call(app.url, 'POST', `/sessions/${id}/system_prompt`, { key: 'persona', content: 'be brief' });
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const next = await call(app.url, 'POST', `/sessions/${id}/system_prompt`, {
      key: 'persona',
      content: 'be briefer',
      expected_version: 1,
    });
    assert.equal(next.status, 200, JSON.stringify(next.body));
    const declared = (await call(app.url, 'GET', '/openapi.json')).body.components.schemas.SystemPromptResponse;
    for (const reply of [first.body, next.body]) {
      assert.equal('commit' in reply, false);
      assert.deepEqual(Object.keys(reply).sort(), Object.keys(declared.properties).sort());
    }
  });

  it('refuses reserved label keys in labels and peer_meta.labels on create and continue', async (t) => {
    const app = await startApp(t);
    const reserved = ['mob_id', 'Role', 'AGENT_IDENTITY', 'warren', 'Warren.team', 'warren.'];
    for (const key of reserved) {
      for (const body of [
        { prompt: 'hi', labels: { [key]: 'x' } },
        { prompt: 'hi', peer_meta: { labels: { [key]: 'x' } } },
      ]) {
        const r = await call(app.url, 'POST', '/sessions', body);
        assert.equal(r.status, 400, `${key}: ${JSON.stringify(r.body)}`);
        assert.equal(r.body.code, 'BAD_REQUEST');
        assert.equal(r.body.details.key, key);
      }
    }
    assert.deepEqual((await call(app.url, 'GET', '/sessions')).body.sessions, [], 'nothing was created');
    const id = await createSession(app.url, { prompt: 'hi', labels: { warrenx: 'ok', team: 'a', 'mob.id': 'fine' } });
    for (const extra of [{ labels: { MOB_ID: 'm' } }, { peer_meta: { labels: { 'warren.role': 'r' } } }]) {
      const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again', ...extra });
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.equal(r.body.code, 'BAD_REQUEST');
    }
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 2, 'a refused continue ran no turn');
  });

  it("marks the caller's own prompt rows transcript_role conversational, injected rows injected_context", async (t) => {
    const app = await startApp(t);
    const id = await createSession(app.url, { prompt: 'first', injected_context: ['ctx'] });
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'second' });
    const rows = (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages as Array<{
      role: string;
      content: string;
      transcript_role?: string;
    }>;
    assert.deepEqual(
      rows.filter((m) => m.role === 'user').map((m) => [m.content, m.transcript_role]),
      [
        ['ctx', 'injected_context'],
        ['first', 'conversational'],
        ['second', 'conversational'],
      ],
    );
  });
});
