// The tool loop through the real server: builtin task_create then text, an unoffered tool answered
// with an is_error result, and an interrupt while a shell command runs (its process group is killed).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startApp } from '../helpers/app.ts';

type Row = {
  role: string;
  blocks?: Array<{ block_type: string; data: Record<string, unknown> }>;
  results?: Array<{ tool_use_id: string; content: string; is_error?: boolean }>;
};

/** Repeats `probe` until it yields a value (bounded); for states no gate can announce, like a running child. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 10_000): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (killed, not yet reaped by a non-reaping init) is dead too.
  return !/^\d+ \(.*\) Z/.test(readFileSyncSafe(`/proc/${pid}/stat`));
}

function readFileSyncSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

describe('tool loop', () => {
  it('runs task_create, feeds the result back and ends with the final text', async (t) => {
    const app = await startApp(t, [
      {
        tool_calls: [{ name: 'task_create', args: { subject: 'write tests', description: 'all routes' }, id: 'call_1' }],
        usage: { input_tokens: 10, output_tokens: 5 },
      },
      { text: 'task created', usage: { input_tokens: 20, output_tokens: 3 } },
    ]);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'make a task', enable_builtins: true });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.text, 'task created');
    assert.equal(res.body.turns, 2);
    assert.equal(res.body.tool_calls, 1);
    assert.deepEqual(res.body.usage, { input_tokens: 30, output_tokens: 8, total_tokens: 38 });
    assert.ok(app.provider.requests[0].tools.some((s) => s.name === 'task_create'));

    const hist = (await call(app.url, 'GET', `/sessions/${res.body.session_id}/history`)).body;
    const msgs: Row[] = hist.messages;
    assert.deepEqual(
      msgs.map((m) => m.role),
      ['user', 'block_assistant', 'tool_results', 'block_assistant'],
    );
    assert.deepEqual(msgs[1].blocks, [
      { block_type: 'tool_use', data: { id: 'call_1', name: 'task_create', args: { subject: 'write tests', description: 'all routes' } } },
    ]);
    assert.equal(msgs[2].results![0].tool_use_id, 'call_1');
    assert.equal(msgs[2].results![0].is_error, undefined);
    assert.equal(JSON.parse(msgs[2].results![0].content).subject, 'write tests');
    assert.deepEqual(msgs[3].blocks, [{ block_type: 'text', data: { text: 'task created' } }]);
    // The second model call saw the tool result.
    assert.ok(JSON.stringify(app.provider.requests[1].messages).includes('call_1'));
  });

  it('keeps transient context right before the user row on every call of the loop', async (t) => {
    const app = await startApp(t, [{ tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }] }, { text: 'done' }]);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'what time', enable_builtins: true, transient_turn_context: 'FACTS' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const second = app.provider.requests[1].messages.map((m) => (m.role === 'user' ? `user:${m.content}` : m.role));
    assert.deepEqual(second, ['user:FACTS', 'user:what time', 'block_assistant', 'tool_results']);
  });

  it('answers a tool the session was not offered with an is_error result and keeps looping', async (t) => {
    const app = await startApp(t, [
      { tool_calls: [{ name: 'task_create', args: { subject: 's', description: 'd' } }] },
      { text: 'could not' },
    ]);
    // No tool category at all (schedule tools are on by default with [tools] schedule_enabled).
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'try', enable_schedule: false });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.turns, 2);
    assert.equal(res.body.tool_calls, 1);
    assert.equal(res.body.text, 'could not');
    assert.deepEqual(app.provider.requests[0].tools, []);
    const msgs: Row[] = (await call(app.url, 'GET', `/sessions/${res.body.session_id}/history`)).body.messages;
    assert.equal(msgs[2].role, 'tool_results');
    assert.equal(msgs[2].results![0].is_error, true);
    assert.match(msgs[2].results![0].content, /unknown tool/);
  });

  it('rejects enable_shell without enable_builtins with 400', async (t) => {
    const app = await startApp(t);
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'x', enable_shell: true, enable_builtins: false });
    assert.equal(res.status, 400);
  });
});

describe('interrupt during a tool call', () => {
  it('kills the running shell command quickly and ends the turn cancelled', async (t) => {
    const app = await startApp(t, (req, i) =>
      i === 1
        ? { tool_calls: [{ name: 'shell', args: { command: 'sleep 30 & echo $! > sleep.pid; echo $$ > shell.pid; wait' }, id: 'sh_1' }] }
        : { text: `reply ${i}` },
    );
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi', enable_builtins: true, enable_shell: true });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id;
    const turn = call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'run it' });

    await until('phase executing_tools', async () => {
      const s = (await call(app.url, 'GET', `/sessions/${id}/status`)).body;
      return s.phase === 'executing_tools' ? true : undefined;
    });
    const pidOf = async (f: string) => Number((await readFile(join(app.stateRoot, f), 'utf8').catch(() => '')).trim()) || undefined;
    const sleepPid = await until('sleep.pid', () => pidOf('sleep.pid'));
    const shellPid = await until('shell.pid', () => pidOf('shell.pid'));
    assert.ok(alive(sleepPid) && alive(shellPid));

    const started = Date.now();
    const res = await call(app.url, 'POST', `/sessions/${id}/interrupt`);
    assert.equal(res.body.interrupted, true);
    const ended = await turn;
    assert.ok(Date.now() - started < 5_000, 'the turn ends long before the 30 s command would');
    assert.equal(ended.status, 499, JSON.stringify(ended.body));
    assert.equal(ended.body.code, 'REQUEST_CANCELLED');
    await until('the shell process group to die', async () => (!alive(sleepPid) && !alive(shellPid) ? true : undefined), 3_000);

    assert.equal((await call(app.url, 'GET', `/sessions/${id}/status`)).body.state, 'idle');
    assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 2, 'nothing of the interrupted turn is committed');
    const next = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
    assert.equal(next.status, 200);
  });
});
