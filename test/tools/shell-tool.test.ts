// test/tools/shell-tool.test.ts: the shell tool against real bash processes in a temp context root.
import assert from 'node:assert/strict';
import { watch } from 'node:fs';
import { mkdir, mkdtemp, readFile, realpath, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createShellTool, type ShellOptions } from '../../tools/shell-tool.ts';
import type { ToolContext, ToolOutcome } from '../../tools/tool.ts';

interface ShellResult {
  exit_code: number | null;
  stdout: string;
  stderr: string;
  timed_out: boolean;
  cancelled?: boolean;
  duration_secs: number;
}

let root: string;
const strays: number[] = [];

before(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'warren-shell-')));
  await mkdir(path.join(root, 'sub'));
});
after(async () => {
  for (const pid of strays) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  await rm(root, { recursive: true, force: true });
});

function ctx(signal = new AbortController().signal): ToolContext {
  return { sessionId: 's1', contextRoot: root, signal };
}

async function shell(
  args: unknown,
  options: ShellOptions = {},
  signal?: AbortSignal,
): Promise<{ out: ToolOutcome; res: ShellResult; ms: number }> {
  const started = performance.now();
  const out = await createShellTool(options).execute(args, ctx(signal));
  const ms = performance.now() - started;
  let res = {} as ShellResult;
  try {
    res = JSON.parse(out.content) as ShellResult;
  } catch {
    // plain-text error outcome
  }
  return { out, res, ms };
}

/** True once the process no longer runs (missing, or a zombie waiting for its reaper). */
async function gone(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat === '' || / Z /.test(stat.slice(stat.lastIndexOf(')')));
}

describe('shell tool', () => {
  it('runs a command in the context root and returns its output', async () => {
    const { out, res } = await shell({ command: 'echo hello; pwd' });
    assert.equal(out.is_error, undefined);
    assert.equal(res.exit_code, 0);
    assert.equal(res.stdout, `hello\n${root}\n`);
    assert.equal(res.stderr, '');
    assert.equal(res.timed_out, false);
    assert.equal(typeof res.duration_secs, 'number');
    assert.deepEqual(Object.keys(res), ['exit_code', 'stdout', 'stderr', 'timed_out', 'duration_secs']);
  });

  it('reports a non-zero exit and stderr as a normal result', async () => {
    const { out, res } = await shell({ command: 'echo oops >&2; exit 3' });
    assert.equal(out.is_error, undefined);
    assert.equal(res.exit_code, 3);
    assert.equal(res.stderr, 'oops\n');
  });

  it('honours working_dir inside the root and the configured program', async () => {
    const { res } = await shell({ command: 'pwd', working_dir: 'sub' }, { program: 'sh' });
    assert.equal(res.stdout, `${path.join(root, 'sub')}\n`);
    assert.equal((await shell({ command: 'pwd', working_dir: path.join(root, 'sub') })).res.exit_code, 0);
  });

  it('refuses a working_dir that escapes the root or does not exist', async () => {
    await symlink(tmpdir(), path.join(root, 'out-link'));
    for (const wd of ['..', '../x', 'sub/../../x', '/etc', 'out-link']) {
      const { out } = await shell({ command: 'pwd', working_dir: wd });
      assert.equal(out.is_error, true, wd);
      assert.match(out.content, /working_dir escapes the project root/, wd);
    }
    const { out } = await shell({ command: 'pwd', working_dir: 'missing' });
    assert.equal(out.is_error, true);
    assert.match(out.content, /working_dir does not exist: missing/);
  });

  it('kills the process group on timeout and reports timed_out', async () => {
    const { out, res, ms } = await shell({ command: 'sleep 30 & echo $!; wait', timeout_secs: 0.3 });
    assert.ok(ms < 5000, `took ${ms} ms`);
    assert.equal(out.is_error, true);
    assert.deepEqual(out.timed_out, { timeout_ms: 300 });
    assert.equal(res.timed_out, true);
    assert.equal(res.exit_code, null);
    const grandchild = Number(res.stdout.trim());
    assert.ok(grandchild > 0, res.stdout);
    assert.equal(await gone(grandchild), true);
  });

  it('does not hang on a grandchild that escaped the group and holds the pipe', async () => {
    const timedOut = await shell({ command: 'setsid sleep 30 & echo $!; sleep 30', timeout_secs: 0.3 }, { closeGraceMs: 50 });
    strays.push(Number(timedOut.res.stdout.trim()));
    assert.ok(timedOut.ms < 5000, `took ${timedOut.ms} ms`);
    assert.equal(timedOut.res.timed_out, true);

    const exited = await shell({ command: 'setsid sleep 30 & echo $!' }, { closeGraceMs: 50 });
    strays.push(Number(exited.res.stdout.trim()));
    assert.ok(exited.ms < 5000, `took ${exited.ms} ms`);
    assert.equal(exited.res.exit_code, 0);
    assert.equal(exited.out.is_error, undefined);
  });

  it('keeps the last max_output_chars of each stream behind a truncation marker', async () => {
    const { res } = await shell({ command: 'seq 1 2000; seq 1 2000 >&2' }, { maxOutputChars: 100 });
    for (const text of [res.stdout, res.stderr]) {
      const [marker, ...rest] = text.split('\n');
      const tail = rest.join('\n');
      assert.match(marker, /^\[output truncated: \d+ earlier characters omitted\]$/);
      assert.equal(tail.length, 100);
      assert.ok(tail.endsWith('1999\n2000\n'));
      assert.equal(Number(/\d+/.exec(marker)?.[0]) + 100, 8893);
    }
  });

  it('kills the command when the turn is aborted and says cancelled', async () => {
    const controller = new AbortController();
    const watcher = watch(root, (_event, name) => {
      if (name === 'ready') controller.abort();
    });
    try {
      const { out, res, ms } = await shell({ command: 'touch ready; sleep 30' }, {}, controller.signal);
      assert.ok(ms < 5000, `took ${ms} ms`);
      assert.equal(out.is_error, true);
      assert.equal(out.timed_out, undefined);
      assert.equal(res.cancelled, true);
      assert.equal(res.timed_out, false);
    } finally {
      watcher.close();
    }
  });

  it('does not start a command when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const { out, res } = await shell({ command: 'touch never' }, {}, controller.signal);
    assert.equal(out.is_error, true);
    assert.equal(res.cancelled, true);
    await assert.rejects(readFile(path.join(root, 'never')));
  });

  it('rejects bad arguments and reports a missing shell program', async () => {
    for (const args of [{}, { command: '' }, { command: 'true', timeout_secs: 0 }, { command: 'true', cwd: '.' }]) {
      const { out } = await shell(args);
      assert.equal(out.is_error, true);
      assert.match(out.content, /^invalid arguments for shell: /);
    }
    const { out } = await shell({ command: 'true' }, { program: 'warren-no-such-shell' });
    assert.equal(out.is_error, true);
    assert.match(out.content, /failed to start shell "warren-no-such-shell"/);
  });
});
