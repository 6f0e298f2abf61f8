import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { durationMs, RunBudget } from '../../../actors/turn-features/budget.ts';
import { stripFences } from '../../../actors/turn-features/extraction.ts';
import { interpretAnswer, runEntries } from '../../../actors/turn-features/hook-engine.ts';
import { OutputSchemaCompiler } from '../../../actors/turn-features/output-schema.ts';
import type { HookEntryConfig } from '../../../contracts/turn-features.ts';

describe('output schema compiler', () => {
  const c = new OutputSchemaCompiler();
  it('tells the wrapper from a raw schema and applies wrapper defaults', () => {
    const raw = c.resolve({ type: 'object', properties: { schema: { type: 'string' } } });
    assert.deepEqual([raw.name, raw.strict, raw.compat], ['output', false, 'lossy']);
    const wrapped = c.resolve({ schema: { type: 'object' }, name: 'x', strict: true, compat: 'strict', format: 'warren_v1' });
    assert.deepEqual([wrapped.name, wrapped.strict, wrapped.compat], ['x', true, 'strict']);
  });
  it('caches compiled validators per distinct schema', () => {
    const a = c.resolve({ type: 'object', properties: { n: { type: 'integer' } } });
    const b = c.resolve({ schema: { type: 'object', properties: { n: { type: 'integer' } } } });
    assert.equal(a.validate, b.validate);
  });
  it('checks formats (ajv-formats) and draft-07 schemas', () => {
    const v = c.resolve({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { e: { type: 'string', format: 'email' } },
    }).validate;
    assert.equal(v({ e: 'a@b.co' }), true);
    assert.equal(v({ e: 'nope' }), false);
  });
  it('refuses non-object roots and invalid schemas with 400', () => {
    for (const bad of [
      { type: 'string' },
      { schema: { type: 'array' } },
      { type: 'object', minProperties: -1 },
      { schema: { type: 'object' }, strict: 'yes' },
    ]) {
      assert.throws(
        () => c.resolve(bad),
        (e: { code?: string }) => e.code === 'BAD_REQUEST',
        JSON.stringify(bad),
      );
    }
  });
});

describe('extraction helpers', () => {
  it('strips one markdown fence', () => {
    assert.equal(stripFences('```json\n{"a":1}\n```'), '{"a":1}');
    assert.equal(stripFences('  ```\n[1]\n```  '), '[1]');
    assert.equal(stripFences('{"a":"```"}'), '{"a":"```"}');
  });
});

describe('hook answers and ordering', () => {
  it('allows {} and allow, denies with a known reason, and treats anything else as invalid', () => {
    assert.deepEqual(interpretAnswer({}), { kind: 'allow' });
    assert.deepEqual(interpretAnswer({ decision: { decision: 'allow' } }), { kind: 'allow' });
    assert.deepEqual(
      interpretAnswer({ decision: { decision: 'deny', hook_id: 'h', reason_code: 'safety_violation', message: 'm', payload: 1 } }),
      { kind: 'deny', reason_code: 'safety_violation', message: 'm', payload: 1 },
    );
    for (const bad of [
      null,
      [],
      'ok',
      { decision: 'allow' },
      { decision: { decision: 'deny' } },
      { decision: { decision: 'deny', reason_code: 'because' } },
      { allow: true },
    ]) {
      assert.equal(interpretAnswer(bad).kind, 'invalid', JSON.stringify(bad));
    }
  });
  it('orders by priority then position, drops disabled ids and enabled: false, appends overrides', () => {
    const e = (id: string, priority?: number, enabled?: boolean): HookEntryConfig => ({
      id,
      point: 'run_started',
      runtime: { type: 'in_process', name: 'allow' },
      ...(priority !== undefined ? { priority } : {}),
      ...(enabled !== undefined ? { enabled } : {}),
    });
    const order = runEntries([e('a'), e('b', 10), e('c'), e('off', 1, false)], { disable: ['c'], entries: [e('d', 5), e('e')] }).map(
      (x) => x.id,
    );
    assert.deepEqual(order, ['d', 'b', 'a', 'e']);
  });
});

describe('budgets', () => {
  it('reads durations', () => {
    assert.deepEqual(
      ['500ms', '90s', '1.5m', '2h'].map((d) => durationMs(d)),
      [500, 90_000, 90_000, 7_200_000],
    );
    assert.equal(durationMs(3), 3000);
  });
  it('warns once per budget at the threshold and exhausts at the limit', () => {
    let now = 0;
    const warnings: unknown[] = [];
    const b = new RunBudget(
      's',
      { maxTokens: 100, maxToolCalls: 4, maxDurationMs: 1000, warningThreshold: 0.5 },
      () => now,
      (w) => warnings.push(w),
    );
    b.beforeModelCall();
    b.afterModelCall(60);
    b.afterModelCall(10);
    b.beforeTools(2);
    now = 600;
    b.beforeTools(1);
    assert.deepEqual(warnings, [
      { budget_type: 'tokens', used: 60, limit: 100, percent: 0.6 },
      { budget_type: 'tool_calls', used: 2, limit: 4, percent: 0.5 },
      { budget_type: 'time', used: 600, limit: 1000, percent: 0.6 },
    ]);
    assert.throws(
      () => b.beforeTools(2),
      (e: { code: string; details: { budget_type: string } }) => e.code === 'BUDGET_EXHAUSTED' && e.details.budget_type === 'tool_calls',
    );
    b.afterModelCall(40);
    assert.throws(
      () => b.beforeModelCall(),
      (e: { details: { budget_type: string } }) => e.details.budget_type === 'tokens',
    );
    now = 1000;
    assert.throws(
      () => b.beforeTools(0),
      (e: { details: { error: { kind: string } } }) => e.details.error.kind === 'time_budget_exceeded',
    );
  });
});
