// Run budgets through the real server: [budget] max_tokens, max_tool_calls, max_duration and [limits]
// max_turn_duration end a run with 429 BUDGET_EXHAUSTED, keep nothing of it, emit run_failed with the
// terminal cause and one budget_warning per budget. Time is an injected clock moved while a gated
// provider call is held, so nothing sleeps.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ScriptedReply } from '../../providers/scripted.ts';
import { uwsSkip } from '../helpers/absent.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';

type Payload = { type: string; [k: string]: unknown };

async function events(base: string, id: string): Promise<Payload[]> {
  const res = await call(base, 'GET', `/sessions/${id}/ledger`);
  return res.body.events.map((e: { payload: Payload }) => e.payload);
}

const toolCall = (n = 1): ScriptedReply => ({
  tool_calls: Array.from({ length: n }, (_, i) => ({ name: 'no_such_tool', args: { i } })),
  usage: { input_tokens: 60, output_tokens: 50 },
});

/** A session created before the budget applies; returns its id and message count. */
async function freshSession(base: string): Promise<{ id: string; count: number }> {
  const res = await call(base, 'POST', '/sessions', { prompt: 'hello' });
  assert.equal(res.status, 200);
  const detail = await call(base, 'GET', `/sessions/${res.body.session_id}`);
  return { id: res.body.session_id, count: detail.body.message_count };
}

async function setConfig(base: string, patch: Record<string, unknown>): Promise<void> {
  const res = await call(base, 'PATCH', '/config', patch);
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function assertNothingKept(base: string, id: string, count: number): Promise<void> {
  const detail = await call(base, 'GET', `/sessions/${id}`);
  assert.equal(detail.body.message_count, count, 'the failed run committed nothing');
}

for (const transport of ['node', 'uws'] as const) {
  describe(`budgets (${transport})`, { skip: transport === 'uws' ? uwsSkip() : undefined }, () => {
    const opts = { httpTransport: transport };

    it('max_tokens: the run stops before the next model call once its tokens are spent', async (t) => {
      const app = await startApp(t, [{ text: 'hi' }, toolCall(), { text: 'never' }], opts);
      const { id, count } = await freshSession(app.url);
      await setConfig(app.url, { budget: { max_tokens: 100 } });
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'go' });
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.code, 'BUDGET_EXHAUSTED');
      assert.deepEqual(
        {
          type: res.body.details.budget_type,
          limit: res.body.details.limit,
          used: res.body.details.used,
          kind: res.body.details.error.kind,
        },
        { type: 'tokens', limit: 100, used: 110, kind: 'budget_exhausted' },
      );
      assert.equal(app.provider.requests.length, 2, 'no third model call');
      await assertNothingKept(app.url, id, count);
      const ev = await events(app.url, id);
      const warnings = ev.filter((e) => e.type === 'budget_warning');
      assert.equal(warnings.length, 1);
      assert.deepEqual([warnings[0].budget_type, warnings[0].used, warnings[0].limit], ['tokens', 110, 100]);
      const failed = ev.filter((e) => e.type === 'run_failed').at(-1);
      assert.equal(failed?.terminal_cause_kind, 'budget_exhausted');
    });

    it('max_tool_calls: a batch that would exceed the limit runs no tool; one below warns once', async (t) => {
      const app = await startApp(t, [{ text: 'hi' }, toolCall(), { text: 'fine' }, toolCall(2)], opts);
      const { id, count } = await freshSession(app.url);
      await setConfig(app.url, { budget: { max_tool_calls: 2 }, agent: { budget_warning_threshold: 0.5 } });
      const ok = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'one tool' });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      assert.equal(ok.body.tool_calls, 1);
      const warned = (await events(app.url, id)).filter((e) => e.type === 'budget_warning');
      assert.deepEqual(
        warned.map((w) => [w.budget_type, w.used, w.limit, w.percent]),
        [['tool_calls', 1, 2, 0.5]],
      );
      await setConfig(app.url, { budget: { max_tool_calls: 1 } });
      const before = (await call(app.url, 'GET', `/sessions/${id}`)).body.message_count;
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two tools' });
      assert.equal(res.status, 429);
      assert.equal(res.body.details.budget_type, 'tool_calls');
      assert.equal(res.body.details.limit, 1);
      const ev = await events(app.url, id);
      assert.ok(
        !ev.slice(ev.findLastIndex((e) => e.type === 'run_started')).some((e) => e.type === 'tool_execution_started'),
        'no tool ran',
      );
      assert.equal(ev.filter((e) => e.type === 'run_failed').at(-1)?.terminal_cause_kind, 'budget_exhausted');
      await assertNothingKept(app.url, id, before);
      assert.ok(before > count);
    });

    it('max_duration: time spent while a call was held ends the run before its tools (time_budget_exceeded)', async (t) => {
      let now = 1_000_000;
      const entered = deferred();
      const open = deferred();
      const script = (_req: unknown, i: number): ScriptedReply => {
        if (i !== 1) return { text: 'hi' };
        entered.resolve();
        return { ...toolCall(), waitFor: open.promise };
      };
      const app = await startApp(t, script, { ...opts, clocks: { budget: () => now } });
      const { id, count } = await freshSession(app.url);
      await setConfig(app.url, { budget: { max_duration: '60s' } });
      const pending = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'slow' });
      await entered.promise;
      now += 61_000;
      open.resolve();
      const res = await pending;
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.deepEqual(
        [res.body.details.budget_type, res.body.details.scope, res.body.details.limit, res.body.details.error.kind],
        ['time', 'run', 60_000, 'time_budget_exceeded'],
      );
      assert.equal(res.body.details.used, 61_000);
      const ev = await events(app.url, id);
      assert.equal(ev.filter((e) => e.type === 'run_failed').at(-1)?.terminal_cause_kind, 'time_budget_exceeded');
      assert.ok(ev.some((e) => e.type === 'budget_warning' && e.budget_type === 'time'));
      await assertNothingKept(app.url, id, count);
    });

    it('max_duration also stops a model call still in flight when the time runs out', async (t) => {
      const never = deferred();
      const app = await startApp(t, [{ text: 'hi' }, { text: 'never', waitFor: never.promise }], opts);
      const { id, count } = await freshSession(app.url);
      await setConfig(app.url, { budget: { max_duration: '150ms' } });
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'hang' });
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.details.error.kind, 'time_budget_exceeded');
      await assertNothingKept(app.url, id, count);
      assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    });

    it('[limits] max_turn_duration: a model call that outlasts it ends the run', async (t) => {
      let now = 5_000;
      const entered = deferred();
      const open = deferred();
      const script = (_req: unknown, i: number): ScriptedReply => {
        if (i !== 0) return { text: 'x' };
        entered.resolve();
        return { text: 'late answer', waitFor: open.promise };
      };
      const app = await startApp(t, script, { ...opts, clocks: { budget: () => now } });
      await setConfig(app.url, { limits: { max_turn_duration: 10 } });
      const pending = call(app.url, 'POST', '/sessions', { prompt: 'slow' });
      await entered.promise;
      now += 10_500;
      open.resolve();
      const res = await pending;
      assert.equal(res.status, 429, JSON.stringify(res.body));
      assert.equal(res.body.code, 'BUDGET_EXHAUSTED');
      assert.deepEqual([res.body.details.budget_type, res.body.details.scope, res.body.details.limit], ['time', 'turn', 10_000]);
      assert.equal(res.body.details.session_created, true, 'a create still names the session it made');
      const id = res.body.details.session_id;
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 0);
      const ev = await events(app.url, id);
      assert.equal(ev.filter((e) => e.type === 'run_failed').at(-1)?.terminal_cause_kind, 'time_budget_exceeded');
    });
  });
}
