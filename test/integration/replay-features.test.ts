// Replay of sessions that use Warren's turn features (docs/replay.md): compaction, hooks (config and
// hooks_override), budgets (config and budget_limits), skills and a mob member each replay identical
// without a model call; a changed hook reports the first divergence at the turn it first ran in, and a
// hook that now denies reports the turn it stopped. A session using MCP tools (a config server and a
// persisted session server) replays identical, and its fork keeps the session's server.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { compactionScript, isSummaryRequest } from '../helpers/compaction-script.ts';
import { DENY, startHookServer, writeHookScripts } from '../helpers/hook-fixtures.ts';
import { rpcOk, TEAM } from '../helpers/mob-driver.ts';
import { recordCompactionSession, RECORD_CONFIG } from '../helpers/replay-fixtures.ts';
import { writeSkill } from '../helpers/skill-fixtures.ts';
import { startHttpMcpServer } from '../helpers/mcp-servers.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll } from '../helpers/wait.ts';

async function turn(app: TestApp, id: string, body: Record<string, unknown>): Promise<void> {
  const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, ...body });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

async function create(app: TestApp, body: Record<string, unknown>): Promise<string> {
  const r = await call(app.url, 'POST', '/sessions', body);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.session_id;
}

async function history(app: TestApp, id: string): Promise<unknown[]> {
  const r = await call(app.url, 'GET', `/sessions/${id}/history?limit=1000`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.messages as object[]).map((m) => ({ ...m, created_at: undefined }));
}

/** Replays `id`, asserting an identical report of `turns` turns, no model call and the same transcript. */
async function replaysIdentical(app: TestApp, id: string, turns: number): Promise<Record<string, any>> {
  const calls = app.provider.requests.length;
  const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.status, 'identical', JSON.stringify(res.body));
  assert.equal(res.body.turns, turns);
  assert.equal(res.body.unrecorded_turns, undefined, JSON.stringify(res.body));
  assert.equal(app.provider.requests.length, calls, 'the replay made no model call');
  assert.deepEqual(await history(app, res.body.replay_session_id), await history(app, id), 'the same transcript');
  return res.body;
}

async function configure(app: TestApp, patch: Record<string, unknown>): Promise<void> {
  const r = await call(app.url, 'PATCH', '/config', patch);
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

describe('replay of turn features', () => {
  it('compaction: the summary call at the boundary is answered from the recording', async (t) => {
    const app = await startApp(t, compactionScript(), { config: RECORD_CONFIG });
    const id = await recordCompactionSession(app.url);
    assert.ok(app.provider.requests.some(isSummaryRequest), 'the session compacted');
    const rows = (await history(app, id)) as Array<{ transcript_role?: string }>;
    assert.ok(
      rows.some((r) => r.transcript_role === 'compaction_summary'),
      'its transcript holds the summary',
    );
    const report = await replaysIdentical(app, id, 6);
    assert.ok(report.calls_checked > 6, 'the summary calls were checked too');
  });

  it('hooks from [hooks] and hooks_override, budgets from [budget] and budget_limits', async (t) => {
    const script = [{ tool_calls: [{ name: 'datetime', args: {} }] }, { text: 'it is now' }, { text: 'two' }, { text: 'three' }];
    const app = await startApp(t, script);
    const command = await writeHookScripts(app.stateRoot);
    const server = await startHookServer();
    t.after(() => server.close());
    await configure(app, {
      budget: { max_tokens: 100_000, max_tool_calls: 10 },
      hooks: {
        default_timeout_ms: 60_000,
        entries: [{ id: 'audit', point: 'pre_tool_execution', capability: 'guardrail', runtime: command('answer.mjs') }],
      },
    });
    const id = await create(app, { prompt: 'time?', enable_builtins: true });
    await turn(app, id, {
      prompt: 'two',
      hooks_override: { entries: [{ id: 'watch', point: 'pre_llm_request', runtime: { type: 'http', url: server.url } }] },
      budget_limits: { max_tokens: 50_000 },
    });
    await turn(app, id, { prompt: 'three', budget_limits: { max_tool_calls: 3 } });
    assert.equal(server.payloads.length, 1, 'the override hook ran once while recording');
    await replaysIdentical(app, id, 3);
    assert.equal(server.payloads.length, 2, 'the replay ran the hooks again (they are what it checks)');
  });

  it('skills: the skill context injected at each turn replays identical', async (t) => {
    const dir = await tmpDir('warren-replay-skills-');
    t.after(() => dir.cleanup());
    await writeSkill(join(dir.path, '.warren', 'skills'), 'deploy', 'deploy-checklist', 'How this project deploys', 'Run DEPLOY-STEP.');
    const app = await startApp(t, [], { contextRoot: dir.path });
    const id = await create(app, { prompt: 'deploy', skill_refs: ['deploy-checklist'], enable_builtins: true });
    await turn(app, id, { prompt: 'again', skill_refs: [{ skill_name: 'deploy-checklist' }] });
    await turn(app, id, { prompt: 'plain' });
    assert.ok(JSON.stringify(app.provider.requests[0].messages).includes('DEPLOY-STEP'));
    await replaysIdentical(app, id, 3);
  });

  it('a mob member: its flow steps and comms notices replay identical', async (t) => {
    const app = await startApp(t, [], { config: { comms: {} } });
    await rpcOk(app.url, 'mob/create', { mob_id: 'team', definition: TEAM });
    const kicked = await call(app.url, 'POST', '/mob/team/wait-kickoff');
    assert.equal(kicked.status, 200, JSON.stringify(kicked.body));
    await rpcOk(app.url, 'mob/start_flow', { mob_id: 'team', flow_id: 'draft', run_id: 'r1', activation: { input: 'otters' } });
    await poll(
      'the flow to complete',
      async () => (await rpcOk(app.url, 'mob/flow_status', { mob_id: 'team', run_id: 'r1' })).status === 'completed',
    );
    const member = (kicked.body.members as Array<{ agent_identity: string; session_id: string }>).find(
      (m) => m.agent_identity === 'writer',
    )!;
    await replaysIdentical(app, member.session_id, 2);
  });
});

describe('replay of MCP tools', () => {
  it("waits for the session's MCP servers, config and persisted, and replays identical; a fork keeps the session's server", async (t) => {
    const cfg = await startHttpMcpServer('cfg');
    t.after(() => cfg.close());
    const own = await startHttpMcpServer('own');
    t.after(() => own.close());
    const app = await startApp(
      t,
      [
        { text: 'zero' },
        { tool_calls: [{ name: 'mcp__cfg__echo', args: { text: 'a' }, id: 'm1' }] },
        { text: 'one' },
        { tool_calls: [{ name: 'mcp__own__echo', args: { text: 'b' }, id: 'm2' }] },
        { text: 'two' },
        { tool_calls: [{ name: 'mcp__own__echo', args: { text: 'c' }, id: 'm3' }] },
        { text: 'three' },
      ],
      { config: { tools: { mcp_servers: [{ name: 'cfg', url: cfg.url }] } } },
    );
    const settled = async (id: string) => {
      const r = await call(app.url, 'GET', `/sessions/${id}/mcp?wait=settled`);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      return (r.body.servers as Array<{ name: string; state: string }>).map((x) => `${x.name}:${x.state}`);
    };
    // The create turn runs before the session's servers are loaded (they load in the background).
    const id = await create(app, { prompt: 'zero' });
    const add = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      persisted: true,
      server_config: { name: 'own', url: own.url },
    });
    assert.equal(add.status, 200, JSON.stringify(add.body));
    assert.deepEqual(await settled(id), ['cfg:ready'], 'own is staged: it applies at the next turn boundary');
    await turn(app, id, { prompt: 'one' });
    await turn(app, id, { prompt: 'two' });
    const text = JSON.stringify(await history(app, id));
    assert.ok(text.includes('cfg: a') && text.includes('own: b'), text);

    const report = await replaysIdentical(app, id, 3);
    assert.equal(report.tools_answered, 2);
    // A fork carries the session's persisted server (re-sealed for the fork) and uses it.
    const fork = await call(app.url, 'POST', `/sessions/${id}/fork`, {});
    assert.equal(fork.status, 200, JSON.stringify(fork.body));
    const forkId = fork.body.session_id as string;
    assert.deepEqual((await settled(forkId)).sort(), ['cfg:ready', 'own:ready']);
    await turn(app, forkId, { prompt: 'three' });
    assert.ok(JSON.stringify(await history(app, forkId)).includes('own: c'));
  });
});

describe('replay divergence on a hook change', () => {
  it('a changed [hooks] entry is reported at the first turn it ran in, naming the changed field', async (t) => {
    const app = await startApp(t, []);
    const command = await writeHookScripts(app.stateRoot);
    const audit = (answer: string) => ({
      default_timeout_ms: 60_000,
      entries: [{ id: 'audit', point: 'run_started', capability: 'guardrail', runtime: command('answer.mjs', { HOOK_ANSWER: answer }) }],
    });
    await configure(app, { hooks: audit('{}') });
    // Turns 1 and 2 switch the audit hook off for their run; turn 3 runs it.
    const off = { hooks_override: { disable: ['audit'] } };
    const id = await create(app, { prompt: 'one', ...off });
    await turn(app, id, { prompt: 'two', ...off });
    await turn(app, id, { prompt: 'three' });
    await replaysIdentical(app, id, 3);

    await configure(app, { hooks: audit('{"decision":{"decision":"allow"}}') });
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(res.body.status, 'diverged', JSON.stringify(res.body));
    const d = res.body.divergence;
    assert.deepEqual([d.turn, d.call, d.kind, d.path], [3, 0, 'request', 'hooks[0].runtime.env.HOOK_ANSWER'], JSON.stringify(d));
    assert.match(d.recorded, /^sha256:[0-9a-f]{16}$/);
    assert.notEqual(d.recorded, d.now);
    assert.ok(!JSON.stringify(res.body).includes('decision'), 'the hook env value is not in the report');
    assert.equal(res.body.turns_replayed, 2);
  });

  it('a hook that now denies a recorded tool call is reported at that turn', async (t) => {
    const script = [{ text: 'one' }, { tool_calls: [{ name: 'datetime', args: {} }] }, { text: 'two' }];
    const app = await startApp(t, script);
    const server = await startHookServer();
    t.after(() => server.close());
    await configure(app, {
      hooks: {
        entries: [{ id: 'gate', point: 'pre_tool_execution', capability: 'guardrail', runtime: { type: 'http', url: server.url } }],
      },
    });
    const id = await create(app, { prompt: 'one', enable_builtins: true });
    await turn(app, id, { prompt: 'time?' });
    server.answer = DENY;
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(res.body.status, 'diverged', JSON.stringify(res.body));
    const d = res.body.divergence;
    assert.deepEqual([d.turn, d.call, d.kind, d.path, d.recorded], [2, 1, 'turn', 'outcome', 'completed'], JSON.stringify(d));
    assert.match(d.now, /^HOOK_DENIED/);
  });
});
