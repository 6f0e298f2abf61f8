// Skills through the real server: the four sources (embedded, project, user, git) in GET /skills with
// shadowing, turn skill refs injected into the provider request as skill_context, the skill tools,
// and every error row (unknown skill 404, failing resolution 422, skills disabled 404/501).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { gitSkillRepo, writeSkill } from '../helpers/skill-fixtures.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

interface Entry {
  key: { source_uuid: string; skill_name: string };
  name: string;
  scope: string;
  is_active: boolean;
  shadowed_by?: unknown;
  source: { transport_kind: string; fingerprint: string; status: string; display_name: string };
}

async function fourSources(t: TestContext, script: Parameters<typeof startApp>[1] = []): Promise<{ app: TestApp; repoUrl: string }> {
  const dir = await tmpDir('warren-skills-');
  t.after(() => dir.cleanup());
  const context = join(dir.path, 'ctx');
  const user = join(dir.path, 'user');
  await writeSkill(join(context, '.warren', 'skills'), 'shared', 'shared-skill', 'Project version', 'PROJECT-SHARED-BODY');
  await writeSkill(
    join(context, '.warren', 'skills'),
    'deploy',
    'deploy-checklist',
    'How this project deploys',
    'Run PROJECT-DEPLOY-STEP first.',
    { 'refs/notes.md': 'DEPLOY-NOTES-RESOURCE' },
  );
  await writeSkill(join(user, 'skills'), 'shared', 'shared-skill', 'User version', 'USER-SHARED-BODY');
  await writeSkill(join(user, 'skills'), 'mine', 'user-habits', 'The user habits', 'USER-HABITS-BODY');
  const repoUrl = await gitSkillRepo(join(dir.path, 'repo'), [
    { folder: 'git-only', name: 'git-recipe', description: 'From git', body: 'GIT-RECIPE-BODY' },
    { folder: 'override', name: 'builtin-tools', description: 'Git override of an embedded skill', body: 'GIT-BUILTIN-OVERRIDE' },
  ]);
  const app = await startApp(t, script, { contextRoot: context, userConfigRoot: user });
  const patched = await call(app.url, 'PATCH', '/config', { skills: { repositories: [{ url: repoUrl, name: 'team skills' }] } });
  assert.equal(patched.status, 200, JSON.stringify(patched.body));
  return { app, repoUrl };
}

function userText(req: { messages: Array<{ role: string; content?: unknown }> }): string {
  return JSON.stringify(req.messages.filter((m) => m.role === 'user'));
}

describe('GET /skills', () => {
  it('lists skills of all four source kinds with active and shadowed entries', async (t) => {
    const { app } = await fourSources(t);
    const r = await call(app.url, 'GET', '/skills');
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const skills = r.body.skills as Entry[];
    const kinds = new Set(skills.map((s) => `${s.scope}/${s.source.transport_kind}`));
    for (const k of ['project/filesystem', 'user/filesystem', 'project/git', 'builtin/embedded']) assert.ok(kinds.has(k), `missing ${k}`);
    for (const s of skills) {
      assert.deepEqual(Object.keys(s.key).sort(), ['skill_name', 'source_uuid']);
      assert.match(s.key.source_uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      assert.equal(s.source.status, 'active');
      assert.ok(s.source.fingerprint.length > 8);
    }
    const shared = skills.filter((s) => s.name === 'shared-skill');
    assert.deepEqual(
      shared.map((s) => [s.scope, s.is_active]),
      [
        ['project', true],
        ['user', false],
      ],
    );
    assert.deepEqual(shared[1].shadowed_by, shared[0].key);
    assert.equal(shared[0].shadowed_by, undefined);
    const builtin = skills.filter((s) => s.name === 'builtin-tools');
    assert.deepEqual(
      builtin.map((s) => [s.source.transport_kind, s.is_active]),
      [
        ['git', true],
        ['embedded', false],
      ],
    );
    assert.equal(skills.find((s) => s.name === 'git-recipe')?.source.display_name, 'team skills');
    assert.match(skills.find((s) => s.name === 'git-recipe')!.source.fingerprint, /^git:[0-9a-f]{40}$/);
    // Embedded skills ship with Warren (workgraph-workflow only while work_graph is on: spec-audit-comms-work.test.ts).
    for (const name of ['schedule-workflow', 'multi-agent-comms', 'skill-discovery']) {
      assert.ok(
        skills.some((s) => s.name === name && s.scope === 'builtin' && s.is_active),
        name,
      );
    }
  });

  it('answers 404 while [skills] enabled = false, and a turn naming skills answers 501', async (t) => {
    const app = await startApp(t);
    assert.equal((await call(app.url, 'GET', '/skills')).status, 200);
    await call(app.url, 'PATCH', '/config', { skills: { enabled: false } });
    const r = await call(app.url, 'GET', '/skills');
    assert.equal(r.status, 404);
    assert.deepEqual(r.body, { error: 'skills not enabled', code: 'NOT_FOUND' });
    const c = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['skill-discovery'] });
    assert.equal(c.status, 501);
    assert.equal(c.body.code, 'CAPABILITY_UNAVAILABLE');
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.deepEqual(caps.body.capabilities.find((x: { id: string }) => x.id === 'skills').status, {
      DisabledByPolicy: { description: 'config.skills.enabled is false' },
    });
  });
});

describe('turn skills', () => {
  it('injects skills from every source kind into the provider request as skill_context', async (t) => {
    const { app } = await fourSources(t);
    const list = (await call(app.url, 'GET', '/skills')).body.skills as Entry[];
    const embeddedTools = list.find((s) => s.name === 'builtin-tools' && s.source.transport_kind === 'embedded')!;
    const create = await call(app.url, 'POST', '/sessions', {
      prompt: 'go',
      skill_refs: ['shared-skill', 'git-recipe', 'user-habits'],
      preload_skills: [embeddedTools.key],
    });
    assert.equal(create.status, 200, JSON.stringify(create.body));
    const sent = userText(app.provider.requests[0]);
    for (const marker of ['PROJECT-SHARED-BODY', 'GIT-RECIPE-BODY', 'USER-HABITS-BODY', 'Built-in tools'])
      assert.ok(sent.includes(marker), marker);
    assert.ok(!sent.includes('USER-SHARED-BODY'), 'a shadowed skill is not injected by name');
    assert.ok(sent.includes('skill_context'));
    const d = create.body.skill_diagnostics;
    assert.equal(d.resolved.length, 4);
    assert.equal(d.max_injection_bytes, 32768);
    assert.ok(d.injection_bytes > 0);
    // The skill rows sit right before the prompt, as injected context.
    const id = create.body.session_id;
    const history = (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages as Array<{
      role: string;
      transcript_role?: string;
      content: unknown;
    }>;
    assert.deepEqual(
      history.map((m) => m.transcript_role ?? m.role),
      ['injected_context', 'injected_context', 'injected_context', 'injected_context', 'conversational', 'block_assistant'],
    );
    const plain = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(plain.body.skill_diagnostics, undefined, 'omitted when no skills were involved');
    const cont = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'deploy',
      skill_refs: [{ skill_name: 'deploy-checklist' }],
    });
    assert.equal(cont.status, 200);
    assert.ok(userText(app.provider.requests[2]).includes('PROJECT-DEPLOY-STEP'));
    const ledger = await call(app.url, 'GET', `/sessions/${id}/ledger`);
    const resolved = (ledger.body.events as Array<{ payload: { type: string; skills?: unknown[]; injection_bytes?: number } }>).filter(
      (e) => e.payload.type === 'skills_resolved',
    );
    assert.equal(resolved.length, 2);
    assert.equal(resolved[0].payload.skills?.length, 4);
  });

  it('answers 404 SKILL_NOT_FOUND for an unknown skill, on create and continue (with skill_resolution_failed)', async (t) => {
    const app = await startApp(t);
    const c = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['no-such-skill'] });
    assert.equal(c.status, 404);
    assert.equal(c.body.code, 'SKILL_NOT_FOUND');
    assert.equal((await call(app.url, 'GET', '/sessions')).body.sessions.length, 0, 'nothing was created');
    const k = await call(app.url, 'POST', '/sessions', {
      prompt: 'hi',
      preload_skills: [{ source_uuid: '00000000-0000-5000-8000-000000000000', skill_name: 'skill-discovery' }],
    });
    assert.equal(k.status, 404);
    assert.equal(k.body.code, 'SKILL_NOT_FOUND');
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'hi' })).body.session_id;
    const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x', skill_refs: ['nope'] });
    assert.equal(r.status, 404);
    assert.equal(r.body.code, 'SKILL_NOT_FOUND');
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flush' });
    const events = (await call(app.url, 'GET', `/sessions/${id}/ledger`)).body.events as Array<{
      payload: { type: string; reason?: { reason_type: string } };
    }>;
    const failed = events.find((e) => e.payload.type === 'skill_resolution_failed');
    assert.equal(failed?.payload.reason?.reason_type, 'not_found');
  });

  it('answers 422 SKILL_RESOLUTION_FAILED when a git source is unreachable or skills exceed max_injection_bytes', async (t) => {
    const dir = await tmpDir('warren-skills-off-');
    t.after(() => dir.cleanup());
    const app = await startApp(t);
    await call(app.url, 'PATCH', '/config', { skills: { repositories: [`file://${dir.path}/missing-repo`] } });
    const list = await call(app.url, 'GET', '/skills');
    assert.equal(list.status, 200, 'an offline source does not break the listing');
    const r = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['something-from-git'] });
    assert.equal(r.status, 422);
    assert.equal(r.body.code, 'SKILL_RESOLUTION_FAILED');
    assert.equal(r.body.details.reason.reason_type, 'source_unavailable');
    await call(app.url, 'PATCH', '/config', { skills: { repositories: [], max_injection_bytes: 16 } });
    const big = await call(app.url, 'POST', '/sessions', { prompt: 'hi', skill_refs: ['skill-discovery'] });
    assert.equal(big.status, 422);
    assert.equal(big.body.details.reason.reason_type, 'injection_budget_exceeded');
  });

  it('lets the model browse, load and read skill resources through the skill tools', async (t) => {
    const { app } = await fourSources(t, [
      { tool_calls: [{ name: 'browse_skills', args: { query: 'deploys' } }] },
      {
        tool_calls: [
          { name: 'load_skill', args: { name: 'deploy-checklist' } },
          { name: 'skill_read_resource', args: { name: 'deploy-checklist', path: 'refs/notes.md' } },
          { name: 'load_skill', args: { name: 'missing' } },
        ],
      },
      { text: 'done' },
    ]);
    const r = await call(app.url, 'POST', '/sessions', { prompt: 'deploy', enable_builtins: true });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(app.provider.requests[0].tools.some((s) => s.name === 'load_skill'));
    const history = (await call(app.url, 'GET', `/sessions/${r.body.session_id}/history`)).body.messages as Array<{
      role: string;
      results?: Array<{ content: string; is_error?: boolean }>;
    }>;
    const results = history.filter((m) => m.role === 'tool_results').flatMap((m) => m.results!);
    assert.ok(results[0].content.includes('deploy-checklist'));
    assert.ok(!results[0].content.includes('git-recipe'), 'filtered by the query');
    assert.ok(results[1].content.startsWith('<skill_context') && results[1].content.includes('PROJECT-DEPLOY-STEP'));
    assert.equal(results[2].content, 'DEPLOY-NOTES-RESOURCE');
    assert.equal(results[3].is_error, true);
    // Sessions without builtins are not offered the skill tools.
    const plain = await call(app.url, 'POST', '/sessions', { prompt: 'x', enable_schedule: false });
    assert.equal(plain.status, 200);
    assert.deepEqual(app.provider.requests.at(-1)!.tools, []);
  });
});
