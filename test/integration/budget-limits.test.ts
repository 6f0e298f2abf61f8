// test/integration/budget-limits.test.ts: the create/continue field `budget_limits` (the reference's
// BudgetLimits: max_tokens, max_tool_calls, max_duration/max_turn_duration as {secs, nanos}) is enforced
// for its run like `[budget]`: a 10-token limit stops the run before its next model call with 429
// BUDGET_EXHAUSTED, run_failed (budget_exhausted) and nothing committed; max_tool_calls refuses a batch
// before any tool runs; a request only tightens the operator's budget; malformed limits answer 400.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Value } from 'typebox/value';
import { BudgetLimitsRequest } from '../../contracts/turn-features.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';
import { call, startApp } from '../helpers/app.ts';

type Payload = { type: string; [k: string]: unknown };

const toolCall = (n = 1): ScriptedReply => ({
  tool_calls: Array.from({ length: n }, (_, i) => ({ name: 'no_such_tool', args: { i } })),
  usage: { input_tokens: 20, output_tokens: 17 },
});

async function ledger(base: string, id: string): Promise<Payload[]> {
  const res = await call(base, 'GET', `/sessions/${id}/ledger?limit=1000`);
  return res.body.events.map((e: { payload: Payload }) => e.payload);
}

async function messageCount(base: string, id: string): Promise<number> {
  return (await call(base, 'GET', `/sessions/${id}`)).body.message_count;
}

describe('budget_limits on create and continue', () => {
  it('a 10-token limit stops the run before its next model call: 429 BUDGET_EXHAUSTED, nothing kept', async (t) => {
    const app = await startApp(t, [{ text: 'hi' }, toolCall(), { text: 'never' }]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
    assert.equal(created.status, 200);
    const id = created.body.session_id;
    const count = await messageCount(app.url, id);
    const limits = { max_tokens: 10 };
    assert.ok(Value.Check(BudgetLimitsRequest, limits));
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go', budget_limits: limits });
    assert.equal(res.status, 429, JSON.stringify(res.body));
    assert.equal(res.body.code, 'BUDGET_EXHAUSTED');
    assert.deepEqual(
      { type: res.body.details.budget_type, limit: res.body.details.limit, used: res.body.details.used, kind: res.body.details.error.kind },
      { type: 'tokens', limit: 10, used: 37, kind: 'budget_exhausted' },
    );
    assert.equal(app.provider.requests.length, 2, 'no model call after the budget ran out');
    assert.equal(await messageCount(app.url, id), count, 'the failed run committed nothing');
    const ev = await ledger(app.url, id);
    assert.equal(ev.filter((e) => e.type === 'run_failed').at(-1)?.terminal_cause_kind, 'budget_exhausted');
    assert.deepEqual(
      ev.filter((e) => e.type === 'budget_warning').map((w) => [w.budget_type, w.used, w.limit]),
      [['tokens', 37, 10]],
    );
    // The limit was this run's only: the next turn without budget_limits runs freely.
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(next.status, 200, JSON.stringify(next.body));
  });

  it('on create: max_tool_calls 0 refuses the first tool batch before any tool runs', async (t) => {
    const app = await startApp(t, [toolCall(), { text: 'never' }]);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'use a tool', budget_limits: { max_tool_calls: 0 } });
    assert.equal(res.status, 429, JSON.stringify(res.body));
    assert.equal(res.body.details.budget_type, 'tool_calls');
    assert.equal(res.body.details.limit, 0);
  });

  it('a request only tightens the config budget; durations are {secs, nanos}; malformed limits answer 400', async (t) => {
    const app = await startApp(t, [{ text: 'hi' }, toolCall(), { text: 'never' }]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
    const id = created.body.session_id;
    assert.equal((await call(app.url, 'PATCH', '/config', { budget: { max_tokens: 5 } })).status, 200);
    const res = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'go',
      budget_limits: { max_tokens: 1_000_000, max_duration: { secs: 3600, nanos: 0 } },
    });
    assert.equal(res.status, 429, JSON.stringify(res.body));
    assert.equal(res.body.details.limit, 5, 'the operator limit stays in force');
    for (const bad of [{ max_tokens: -1 }, { max_tokens: 'ten' }, { max_duration: 5 }, { max_tokenz: 10 }]) {
      const r = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x', budget_limits: bad });
      assert.equal(r.status, 400, `${JSON.stringify(bad)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'BAD_REQUEST');
    }
  });
});
