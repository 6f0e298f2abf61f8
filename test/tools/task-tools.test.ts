// test/tools/task-tools.test.ts: task_* builtins over an in-memory RecordStore.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryRecordStore, TaskStore, type RecordStore, type Task } from '../../tools/task-store.ts';
import { createTaskTools } from '../../tools/task-tools.ts';
import type { Tool, ToolContext, ToolOutcome } from '../../tools/tool.ts';

const ctx: ToolContext = { sessionId: 's1', contextRoot: '.', signal: new AbortController().signal };

function setup(records: RecordStore = createMemoryRecordStore()) {
  let tick = 0;
  let n = 0;
  const store = new TaskStore(records, {
    clock: () => new Date(Date.UTC(2024, 0, 1, 0, 0, tick++)),
    newId: () => `t${++n}`,
  });
  const tools = new Map<string, Tool>(createTaskTools(store).map((t) => [t.name, t]));
  const call = (name: string, args: unknown): Promise<ToolOutcome> => tools.get(name)!.execute(args, ctx);
  const ok = async <T = Task>(name: string, args: unknown): Promise<T> => {
    const out = await call(name, args);
    assert.equal(out.is_error, undefined, out.content);
    return JSON.parse(out.content) as T;
  };
  return { call, ok, tools };
}

describe('task tools', () => {
  it('offers the four tools with object input schemas', () => {
    const { tools } = setup();
    assert.deepEqual([...tools.keys()], ['task_create', 'task_get', 'task_list', 'task_update']);
    for (const t of tools.values()) assert.equal(t.input_schema.type, 'object');
  });

  it('creates a task with defaults and reads it back', async () => {
    const { ok } = setup();
    const created = await ok('task_create', { subject: 'Write docs', description: 'README' });
    assert.deepEqual(created, {
      id: 't1',
      subject: 'Write docs',
      description: 'README',
      status: 'pending',
      priority: 'medium',
      labels: [],
      blocks: [],
      blocked_by: [],
      created_at: '2024-01-01T00:00:00.000Z',
      updated_at: '2024-01-01T00:00:00.000Z',
      metadata: {},
    });
    assert.deepEqual(await ok('task_get', { id: 't1' }), created);
  });

  it('keeps blocks and blocked_by symmetric on create and update', async () => {
    const { ok } = setup();
    await ok('task_create', { subject: 'a', description: '' });
    const b = await ok('task_create', { subject: 'b', description: '', blocked_by: ['t1'] });
    assert.deepEqual(b.blocked_by, ['t1']);
    assert.deepEqual((await ok('task_get', { id: 't1' })).blocks, ['t2']);

    await ok('task_create', { subject: 'c', description: '' });
    const a = await ok('task_update', { id: 't1', add_blocks: ['t3'], remove_blocks: ['t2'] });
    assert.deepEqual(a.blocks, ['t3']);
    assert.deepEqual((await ok('task_get', { id: 't2' })).blocked_by, []);
    assert.deepEqual((await ok('task_get', { id: 't3' })).blocked_by, ['t1']);
  });

  it('updates fields, merges metadata and clears the owner with null', async () => {
    const { ok } = setup();
    await ok('task_create', { subject: 'a', description: 'd', owner: 'me', metadata: { x: 1, y: 2 }, labels: ['l', 'l'] });
    const t = await ok('task_update', {
      id: 't1',
      status: 'in_progress',
      priority: 'high',
      labels: ['q'],
      owner: null,
      metadata: { x: null, z: 3 },
    });
    assert.equal(t.status, 'in_progress');
    assert.equal(t.priority, 'high');
    assert.deepEqual(t.labels, ['q']);
    assert.equal('owner' in t, false);
    assert.deepEqual(t.metadata, { y: 2, z: 3 });
    assert.notEqual(t.updated_at, t.created_at);
  });

  it('lists oldest first, filtered by status and by all given labels', async () => {
    const { ok } = setup();
    await ok('task_create', { subject: 'a', description: '', labels: ['x', 'y'] });
    await ok('task_create', { subject: 'b', description: '', labels: ['x'] });
    await ok('task_create', { subject: 'c', description: '' });
    await ok('task_update', { id: 't2', status: 'completed' });
    const ids = async (args: unknown) => (await ok<{ tasks: Task[] }>('task_list', args)).tasks.map((t) => t.id);
    assert.deepEqual(await ids({}), ['t1', 't2', 't3']);
    assert.deepEqual(await ids(undefined), ['t1', 't2', 't3']);
    assert.deepEqual(await ids({ status: 'completed' }), ['t2']);
    assert.deepEqual(await ids({ labels: ['x'] }), ['t1', 't2']);
    assert.deepEqual(await ids({ labels: ['x', 'y'] }), ['t1']);
  });

  it('serialises concurrent calls so no update is lost', async () => {
    const { ok } = setup();
    await ok('task_create', { subject: 'hub', description: '' });
    await Promise.all([1, 2, 3, 4].map(() => ok('task_create', { subject: 's', description: '', blocked_by: ['t1'] })));
    assert.deepEqual((await ok('task_get', { id: 't1' })).blocks.sort(), ['t2', 't3', 't4', 't5']);
  });

  it('reports unknown ids and bad relations as errors without writing', async () => {
    const { call, ok } = setup();
    await ok('task_create', { subject: 'a', description: '' });
    const cases: Array<[string, unknown, RegExp]> = [
      ['task_get', { id: 'nope' }, /task not found: nope/],
      ['task_update', { id: 'nope', status: 'completed' }, /task not found: nope/],
      ['task_create', { subject: 'b', description: '', blocks: ['missing'] }, /task not found: missing/],
      ['task_update', { id: 't1', add_blocks: ['t1'] }, /cannot block itself/],
      ['task_update', { id: 't1', add_blocked_by: ['x'], remove_blocked_by: ['x'] }, /both add_blocked_by and remove_blocked_by/],
    ];
    for (const [name, args, re] of cases) {
      const out = await call(name, args);
      assert.equal(out.is_error, true, name);
      assert.match(out.content, re);
    }
    assert.equal((await ok<{ tasks: Task[] }>('task_list', {})).tasks.length, 1);
  });

  it('rejects invalid arguments with a message naming the problem', async () => {
    const { call } = setup();
    const cases: Array<[string, unknown, RegExp]> = [
      ['task_create', { description: 'x' }, /missing required "subject"/],
      ['task_create', { subject: 'a', description: 'x', priority: 'urgent' }, /priority: must be one of "low", "medium", "high"/],
      ['task_create', { subject: 'a', description: 'x', colour: 'red' }, /unknown "colour"/],
      ['task_update', { id: 't1', status: 'done' }, /status: must be one of/],
      ['task_list', { labels: 'x' }, /labels: must be array/],
      ['task_get', 'oops', /arguments: must be object/],
    ];
    for (const [name, args, re] of cases) {
      const out = await call(name, args);
      assert.equal(out.is_error, true, name);
      assert.match(out.content, new RegExp(`^invalid arguments for ${name}: `));
      assert.match(out.content, re);
    }
  });

  it('persists versioned records through the RecordStore and refuses corrupt ones', async () => {
    const records = createMemoryRecordStore();
    await setup(records).ok('task_create', { subject: 'a', description: '' });
    const rows = await records.list<{ v: number; task: Task }>();
    assert.deepEqual(
      rows.map((r) => [r.key, r.value.v, r.value.task.subject]),
      [['task/t1', 1, 'a']],
    );
    // A fresh store over the same records sees the task.
    assert.equal((await setup(records).ok('task_get', { id: 't1' })).subject, 'a');
    await records.put('task/bad', { v: 99 });
    await assert.rejects(setup(records).call('task_list', {}), /corrupt task record at task\/bad/);
  });
});
