// test/contracts/session-events.test.ts: every event a real server emits matches the schema of its kind
// (contracts/session-events.ts): a turn with reasoning, streamed text, a tool call, a budget warning,
// hooks and structured output, then a failing turn, a hook denial and a failed extraction, read back
// from the ledger. An extra, missing or mistyped field fails here.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Compile } from 'typebox/compile';
import { SESSION_EVENTS, type SessionEventKind } from '../../contracts/session-events.ts';
import { call, startApp } from '../helpers/app.ts';

const checks = new Map(Object.entries(SESSION_EVENTS).map(([kind, schema]) => [kind, Compile(schema)]));

describe('session event schemas', () => {
  it('every emitted event matches the schema of its kind', async (t) => {
    const app = await startApp(
      t,
      [
        {
          reasoning: 'thinking',
          chunks: ['what ', 'time'],
          tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }],
          usage: { input_tokens: 3, output_tokens: 200 },
        },
        { text: 'done', usage: { input_tokens: 5, output_tokens: 2, cache_read_tokens: 1 } },
        { text: '{"a": 1}' },
        { error: { code: 'AGENT_ERROR', message: 'model exploded', details: { error: { kind: 'llm_failure' } } } },
        { tool_calls: [{ name: 'datetime', args: {}, id: 'dt_2' }] },
        { text: 'plain' },
        { text: 'not json' },
      ],
      { config: { ledger: { keep_text_deltas: true } } },
    ); // committed deltas stay in the ledger to be checked too
    assert.equal((await call(app.url, 'PATCH', '/config', { budget: { max_tokens: 250 } })).status, 200);
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a'] };
    const hook = (id: string, point: string, capability: string, tools: string[]) => ({
      id,
      point,
      capability,
      runtime: { type: 'in_process', name: 'deny_tools', config: { tools } },
    });
    const created = await call(app.url, 'POST', '/sessions', {
      prompt: [{ type: 'text', text: 'hi' }],
      enable_builtins: true,
      max_tokens: 50,
      output_schema: schema,
      hooks_override: {
        entries: [hook('watch', 'pre_tool_execution', 'observe', ['datetime']), hook('ok', 'run_started', 'guardrail', [])],
      },
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    const failed = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(failed.status >= 400, true);
    const denied = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'tool',
      hooks_override: { entries: [hook('no-dt', 'pre_tool_execution', 'guardrail', ['datetime'])] },
    });
    assert.equal(denied.status, 403);
    const unextracted = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: 'json',
      output_schema: schema,
      structured_output_retries: 0,
    });
    assert.ok(unextracted.body.extraction_error);

    const ledger = await call(app.url, 'GET', `/sessions/${id}/ledger?limit=1000`);
    assert.equal(ledger.status, 200);
    const seen = new Set<string>();
    for (const event of ledger.body.events as Array<{ seq: number; payload: { type: string } }>) {
      const { type, ...payload } = event.payload;
      const check = checks.get(type);
      assert.ok(check, `event kind without a schema: ${type}`);
      assert.ok(
        check.Check(payload),
        `${type} (seq ${event.seq}) drifted from its schema: ${JSON.stringify([...check.Errors(payload)].slice(0, 3))} in ${JSON.stringify(payload)}`,
      );
      seen.add(type);
    }
    const expected: SessionEventKind[] = [
      'run_started',
      'turn_started',
      'reasoning_delta',
      'text_delta',
      'text_complete',
      'turn_completed',
      'tool_call_requested',
      'tool_execution_started',
      'tool_execution_completed',
      'tool_result_received',
      'budget_warning',
      'run_completed',
      'run_failed',
      'hook_started',
      'hook_completed',
      'hook_failed',
      'hook_denied',
      'extraction_succeeded',
      'extraction_failed',
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
