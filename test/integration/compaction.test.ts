// Context compaction through the real server against the scripted model with a small context window:
// it fires at the right turn and not before, rewrites the transcript (system rows kept, summary row,
// recent turns) in one commit, reports its events, and keeps history on failure.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { estimateTokens } from '../../actors/compaction-policy.ts';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { compactionScript, isSummaryRequest } from '../helpers/compaction-script.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';

const WINDOW = 2500; // tokens: threshold = 4/5 = 2000
const THRESHOLD = 2000;
const MAX_TOKENS = 64;
const FILLER = 'lorem ipsum dolor sit amet '.repeat(40);

async function smallWindowApp(t: TestContext, summary?: () => ScriptedReply): Promise<TestApp> {
  const app = await startApp(t, compactionScript(summary));
  const r = await call(app.url, 'PATCH', '/config', { providers: { scripted: { context_window: WINDOW } } });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return app;
}

async function history(app: TestApp, id: string): Promise<Array<Record<string, unknown>>> {
  return (await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages;
}

async function events(app: TestApp, id: string): Promise<Array<{ payload: Record<string, unknown> & { type: string } }>> {
  return (await call(app.url, 'GET', `/sessions/${id}/ledger?limit=10000`)).body.events;
}

function turn(app: TestApp, id: string, prompt: string) {
  return call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
}

describe('context compaction', () => {
  it('fires at the first turn whose request budget reaches the threshold, never before, and rewrites the transcript', async (t) => {
    const app = await smallWindowApp(t);
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.equal(caps.body.capabilities.find((c: { id: string }) => c.id === 'session_compaction').status, 'Available');
    const create = await call(app.url, 'POST', '/sessions', {
      prompt: `turn 0 ${FILLER}`,
      model: 'loopback-small',
      provider: 'scripted',
      max_tokens: MAX_TOKENS,
      system_prompt: 'SYS-PROMPT',
      enable_schedule: false,
    });
    assert.equal(create.status, 200, JSON.stringify(create.body));
    const id = create.body.session_id;
    let compactedAt = -1;
    for (let i = 1; i < 20 && compactedAt < 0; i++) {
      const before = await history(app, id);
      const budget = estimateTokens(before) + MAX_TOKENS;
      const calls = app.provider.requests.length;
      const r = await turn(app, id, `turn ${i} ${FILLER}`);
      assert.equal(r.status, 200);
      const summarized = app.provider.requests.slice(calls).some(isSummaryRequest);
      assert.equal(summarized, budget >= THRESHOLD, `turn ${i}: budget ${budget}`);
      if (summarized) compactedAt = i;
    }
    assert.ok(compactedAt > 2, `compaction fired at turn ${compactedAt}`);
    const rows = await history(app, id);
    assert.deepEqual(
      rows.slice(0, 2).map((r) => r.transcript_role ?? r.role),
      ['system', 'compaction_summary'],
    );
    assert.equal(rows[0].content, 'SYS-PROMPT');
    assert.match(String(rows[1].content), /^\[Context compacted\][\s\S]*SUMMARY: the user is collecting facts\./);
    // The 4 recent turns before this one, then this turn's own rows.
    const users = rows
      .filter((r) => r.role === 'user' && (r.transcript_role ?? 'conversational') === 'conversational')
      .map((r) => String(r.content).split(' ').slice(0, 2).join(' '));
    assert.deepEqual(
      users,
      [compactedAt - 4, compactedAt - 3, compactedAt - 2, compactedAt - 1, compactedAt].map((n) => `turn ${n}`),
    );
    const detail = await call(app.url, 'GET', `/sessions/${id}`);
    assert.equal(detail.body.message_count, rows.length);
    // The model call after the summary saw the compacted transcript.
    const lastCall = app.provider.requests.at(-1)!;
    assert.ok(JSON.stringify(lastCall.messages).includes('[Context compacted]'));
    assert.ok(!JSON.stringify(lastCall.messages).includes('turn 0 '));
    const ev = await events(app, id);
    const kinds = ev.map((e) => e.payload.type).filter((k) => k.startsWith('compaction_'));
    assert.deepEqual(kinds, ['compaction_started', 'compaction_completed']);
    const done = ev.find((e) => e.payload.type === 'compaction_completed')!.payload;
    assert.ok((done.tokens_before as number) > (done.tokens_after as number));
    assert.equal(done.messages_after, rows.length - 2);
    // The next turns do not compact again at once (at least 3 turns between ordinary compactions).
    const calls = app.provider.requests.length;
    await turn(app, id, 'short one');
    await turn(app, id, 'short two');
    assert.equal(app.provider.requests.slice(calls).filter(isSummaryRequest).length, 0);
  });

  it('keeps history and completes the run when the summary call fails or is empty', async (t) => {
    for (const summary of [() => ({ error: { code: 'PROVIDER_ERROR' as const, message: 'down' } }), () => ({ text: '   ' })]) {
      const app = await startApp(t, compactionScript(summary));
      await call(app.url, 'PATCH', '/config', {
        compaction: { auto_compact_threshold: 100, min_turns_between_compactions: 0 },
        retry: { max_retries: 0 },
      });
      const id = (await call(app.url, 'POST', '/sessions', { prompt: `a ${FILLER}`, max_tokens: MAX_TOKENS })).body.session_id;
      for (let i = 0; i < 5; i++) assert.equal((await turn(app, id, `t${i} ${FILLER}`)).status, 200);
      const rows = await history(app, id);
      assert.equal(rows.length, 12, 'nothing was dropped');
      const failed = (await events(app, id)).filter((e) => e.payload.type === 'compaction_failed');
      assert.ok(failed.length >= 1);
      const kind = (failed[0].payload.reason as { kind: string }).kind;
      assert.ok(kind === 'llm_failed' || kind === 'empty_summary', kind);
    }
  });

  it('ends the run when the provider stops the summary for policy reasons', async (t) => {
    const app = await startApp(
      t,
      compactionScript(() => ({ text: 'no', stop_reason: 'content_filter' })),
    );
    await call(app.url, 'PATCH', '/config', { compaction: { auto_compact_threshold: 100, recent_turn_budget: 0 } });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: `a ${FILLER}`, max_tokens: MAX_TOKENS })).body.session_id;
    const r = await turn(app, id, 'b');
    assert.equal(r.status, 500);
    assert.equal(r.body.code, 'AGENT_ERROR');
    assert.equal((await history(app, id)).length, 2, 'history preserved');
  });

  it('does not compact while [compaction] enabled = false', async (t) => {
    const app = await startApp(t, compactionScript());
    await call(app.url, 'PATCH', '/config', { compaction: { enabled: false, auto_compact_threshold: 10 } });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: `a ${FILLER}` })).body.session_id;
    for (let i = 0; i < 3; i++) await turn(app, id, `t${i}`);
    assert.equal(app.provider.requests.filter(isSummaryRequest).length, 0);
  });
});
