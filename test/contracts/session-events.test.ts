// test/contracts/session-events.test.ts: every event a real server emits matches the schema of its kind
// (contracts/session-events.ts): a turn with reasoning, streamed text, a tool call and a budget warning,
// then a failing turn, read back from the ledger. An extra, missing or mistyped field fails here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { SESSION_EVENTS, type SessionEventKind } from '../../contracts/session-events.ts';
import { call, startApp } from '../helpers/app.ts';

const checks = new Map(Object.entries(SESSION_EVENTS).map(([kind, schema]) => [kind, Compile(schema)]));

describe('session event schemas', () => {
  it('every emitted event matches the schema of its kind', async (t) => {
    const app = await startApp(t, [
      { reasoning: 'thinking', chunks: ['what ', 'time'], tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }], usage: { input_tokens: 3, output_tokens: 200 } },
      { text: 'done', usage: { input_tokens: 5, output_tokens: 2, cache_read_tokens: 1 } },
      { error: { code: 'AGENT_ERROR', message: 'model exploded', details: { error: { kind: 'llm_failure' } } } },
    ]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: [{ type: 'text', text: 'hi' }], enable_builtins: true, max_tokens: 50 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    const failed = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(failed.status >= 400, true);

    const ledger = await call(app.url, 'GET', `/sessions/${id}/ledger?limit=1000`);
    assert.equal(ledger.status, 200);
    const seen = new Set<string>();
    for (const event of ledger.body.events as Array<{ seq: number; payload: { type: string } }>) {
      const { type, ...payload } = event.payload;
      const check = checks.get(type);
      assert.ok(check, `event kind without a schema: ${type}`);
      assert.ok(check.Check(payload), `${type} (seq ${event.seq}) drifted from its schema: ${JSON.stringify([...check.Errors(payload)].slice(0, 3))} in ${JSON.stringify(payload)}`);
      seen.add(type);
    }
    const expected: SessionEventKind[] = [
      'run_started', 'turn_started', 'reasoning_delta', 'text_delta', 'text_complete', 'turn_completed', 'tool_call_requested',
      'tool_execution_started', 'tool_execution_completed', 'tool_result_received', 'budget_warning', 'run_completed', 'run_failed',
    ];
    for (const kind of expected) assert.ok(seen.has(kind), `no ${kind} event was emitted`);
  });

  it('a drifted payload fails its schema', () => {
    const check = checks.get('tool_execution_started')!;
    assert.equal(check.Check({ id: 'a', name: 'b' }), true);
    assert.equal(check.Check({ id: 'a', name: 'b', extra: 1 }), false);
    assert.equal(check.Check({ id: 'a' }), false);
  });
});
