// test/tools/registry.test.ts: tool-set assembly, flag resolution and dispatch error handling.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildToolset, resolveToolFlags, ToolConfigError, type ToolFlagsRequest } from '../../tools/registry.ts';
import { createMemoryRecordStore } from '../../tools/task-store.ts';
import type { Tool, ToolContext } from '../../tools/tool.ts';

const ctx: ToolContext = { sessionId: 's1', contextRoot: process.cwd(), signal: new AbortController().signal };
const BUILTINS = ['task_create', 'task_get', 'task_list', 'task_update', 'datetime'];

const throwing: Tool = {
  name: 'explode',
  description: 'always throws',
  input_schema: { type: 'object' },
  async execute() {
    throw new Error('kaboom');
  },
};

describe('resolveToolFlags', () => {
  const defaults = (builtins: boolean, shell: boolean) => ({ builtins_enabled: builtins, shell_enabled: shell });
  const rows: Array<[ToolFlagsRequest, ReturnType<typeof defaults>, { builtins: boolean; shell: boolean } | 'error']> = [
    [{}, defaults(false, false), { builtins: false, shell: false }],
    [{ enable_builtins: null, enable_shell: null }, defaults(true, true), { builtins: true, shell: true }],
    [{ enable_builtins: true }, defaults(false, false), { builtins: true, shell: false }],
    [{ enable_builtins: true, enable_shell: true }, defaults(false, false), { builtins: true, shell: true }],
    [{ enable_shell: false }, defaults(true, true), { builtins: true, shell: false }],
    [{ enable_builtins: false, enable_shell: false }, defaults(true, true), { builtins: false, shell: false }],
    [{ enable_shell: true }, defaults(false, false), 'error'],
    [{ enable_builtins: false }, defaults(true, true), 'error'],
    [{ enable_builtins: false, enable_shell: true }, defaults(true, false), 'error'],
  ];
  for (const [request, defs, expected] of rows) {
    it(`${JSON.stringify(request)} over ${JSON.stringify(defs)} → ${JSON.stringify(expected)}`, () => {
      if (expected === 'error') assert.throws(() => resolveToolFlags(request, defs), ToolConfigError);
      else assert.deepEqual(resolveToolFlags(request, defs), expected);
    });
  }
});

describe('buildToolset', () => {
  it('lists specs per enabled category, in a stable order', () => {
    const records = createMemoryRecordStore();
    assert.deepEqual(buildToolset({ builtins: false, shell: false, records }).specs, []);
    assert.deepEqual(
      buildToolset({ builtins: true, shell: false, records }).specs.map((s) => s.name),
      BUILTINS,
    );
    const all = buildToolset({ builtins: true, shell: true, records, extra: [throwing] });
    assert.deepEqual(
      all.specs.map((s) => s.name),
      [...BUILTINS, 'shell', 'explode'],
    );
    for (const spec of all.specs) {
      assert.deepEqual(Object.keys(spec), ['name', 'description', 'input_schema']);
      assert.equal(spec.input_schema.type, 'object');
      assert.ok(spec.description.length > 0);
      assert.equal(all.get(spec.name)?.name, spec.name);
    }
  });

  it('refuses shell without builtins and duplicate tool names with ToolConfigError', () => {
    const records = createMemoryRecordStore();
    assert.throws(() => buildToolset({ builtins: false, shell: true, records }), ToolConfigError);
    const dup = { ...throwing, name: 'datetime' };
    assert.throws(() => buildToolset({ builtins: true, shell: false, records, extra: [dup] }), /duplicate tool name: datetime/);
  });

  it('dispatches to the named tool with the injected clock and session records', async () => {
    const records = createMemoryRecordStore();
    const clock = () => new Date('2024-01-01T00:00:00Z');
    const tools = buildToolset({ builtins: true, shell: true, records, clock, shellOptions: { program: 'sh' } });
    const dt = await tools.dispatch('datetime', {}, ctx);
    assert.equal(JSON.parse(dt.content).unix_timestamp, 1704067200);
    const created = await tools.dispatch('task_create', { subject: 'a', description: 'b' }, ctx);
    assert.equal(JSON.parse(created.content).created_at, '2024-01-01T00:00:00.000Z');
    assert.equal((await records.list()).length, 1);
    const sh = await tools.dispatch('shell', { command: 'echo $0' }, ctx);
    assert.equal(JSON.parse(sh.content).stdout, 'sh\n');
  });

  it('answers an unknown tool with an is_error outcome', async () => {
    const tools = buildToolset({ builtins: false, shell: false, records: createMemoryRecordStore() });
    assert.deepEqual(await tools.dispatch('shell', {}, ctx), { content: 'unknown tool: shell', is_error: true });
    assert.equal(tools.get('shell'), undefined);
  });

  it('turns a throwing tool into an is_error outcome instead of rejecting', async () => {
    const tools = buildToolset({ builtins: false, shell: false, records: createMemoryRecordStore(), extra: [throwing] });
    const out = await tools.dispatch('explode', {}, ctx);
    assert.equal(out.is_error, true);
    assert.match(out.content, /kaboom/);
  });

  it('passes bad arguments through to the tool, which reports them', async () => {
    const tools = buildToolset({ builtins: true, shell: false, records: createMemoryRecordStore() });
    const out = await tools.dispatch('task_get', { id: 7 }, ctx);
    assert.equal(out.is_error, true);
    assert.match(out.content, /^invalid arguments for task_get: id: must be string/);
  });
});
