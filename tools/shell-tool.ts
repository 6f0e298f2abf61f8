// tools/shell-tool.ts: the `shell` tool (foreground only). Runs one command through the configured shell
// inside the context root, with a timeout that kills the whole process group. Built by tools/registry.ts.
import { spawn } from 'node:child_process';
import { realpath, stat } from 'node:fs/promises';
import path from 'node:path';
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool, ToolOutcome } from './tool.ts';

export interface ShellOptions {
  /** Shell program, invoked as `<program> -c <command>`. Default `bash`. */
  program?: string;
  /** Timeout when the call gives no `timeout_secs`. Default 30. */
  timeoutSecs?: number;
  /** stdout and stderr are each cut to their last this-many characters. Default 100 000. */
  maxOutputChars?: number;
  /**
   * After the shell exits, how long to wait for its pipes to close before giving up on them (a
   * background grandchild may hold them open indefinitely). Default 250 ms.
   */
  closeGraceMs?: number;
}

const ShellInput = Type.Object(
  {
    command: Type.String({ minLength: 1, description: 'Command line to run with the shell (`-c`).' }),
    working_dir: Type.Optional(Type.String({ description: 'Directory relative to the project root; must stay inside it.' })),
    timeout_secs: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 86_400, description: 'Kill the command after this many seconds. Default 30.' }),
    ),
  },
  { additionalProperties: false },
);

interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  ended: 'exited' | 'timed_out' | 'cancelled';
  durationSecs: number;
  spawnError?: Error;
}

/**
 * The `shell` tool. Result JSON: `{exit_code, stdout, stderr, timed_out, duration_secs}`.
 * - A non-zero exit is a normal result, not `is_error`: the command ran, and its exit code and stderr
 *   are what the model needs to react to. `exit_code` is null when the process died from a signal.
 * - Timeout and cancellation (ctx.signal) SIGKILL the whole process group and return `is_error`, the
 *   former with `timed_out` set on the outcome, the latter with `cancelled: true` in the JSON.
 * - Background processes that outlive a normal exit are left running; their hold on the output pipes
 *   is dropped after `closeGraceMs`.
 */
export function createShellTool(options: ShellOptions = {}): Tool {
  const program = options.program ?? 'bash';
  const defaultTimeoutSecs = options.timeoutSecs ?? 30;
  const maxChars = options.maxOutputChars ?? 100_000;
  const closeGraceMs = options.closeGraceMs ?? 250;
  const args = compileArgs(ShellInput);
  return {
    name: 'shell',
    description: `Run a shell command (${program} -c) in the project directory and return its exit code, stdout and stderr.`,
    input_schema: args.jsonSchema,
    async execute(raw, ctx): Promise<ToolOutcome> {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs('shell', parsed.message);
      const { command, working_dir: workingDir, timeout_secs: timeoutSecs = defaultTimeoutSecs } = parsed.value;
      const cwd = await resolveWorkingDir(ctx.contextRoot, workingDir);
      if (!cwd.ok) return { content: cwd.message, is_error: true };
      const timeoutMs = Math.round(timeoutSecs * 1000);
      if (ctx.signal.aborted) {
        return jsonResult({ exit_code: null, stdout: '', stderr: '', timed_out: false, cancelled: true, duration_secs: 0 }, true);
      }
      const run = await runCommand({ program, command, cwd: cwd.dir, timeoutMs, maxChars, closeGraceMs, signal: ctx.signal });
      if (run.spawnError) return { content: `failed to start shell "${program}": ${run.spawnError.message}`, is_error: true };
      const body = {
        exit_code: run.exitCode,
        stdout: run.stdout,
        stderr: run.stderr,
        timed_out: run.ended === 'timed_out',
        ...(run.ended === 'cancelled' ? { cancelled: true } : {}),
        duration_secs: run.durationSecs,
      };
      if (run.ended === 'timed_out') return { content: JSON.stringify(body), is_error: true, timed_out: { timeout_ms: timeoutMs } };
      return jsonResult(body, run.ended === 'cancelled');
    },
  };
}

type DirResult = { ok: true; dir: string } | { ok: false; message: string };

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${path.sep}`) && !path.isAbsolute(rel));
}

/** `contextRoot` joined with `workingDir`, refused when it leaves the root, lexically or via symlinks. */
async function resolveWorkingDir(contextRoot: string, workingDir: string | undefined): Promise<DirResult> {
  const lexical = path.resolve(contextRoot, workingDir ?? '.');
  const escape: DirResult = { ok: false, message: `working_dir escapes the project root: ${workingDir}` };
  if (!isInside(path.resolve(contextRoot), lexical)) return escape;
  let root: string;
  let dir: string;
  try {
    root = await realpath(contextRoot);
    dir = await realpath(lexical);
  } catch {
    return { ok: false, message: `working_dir does not exist: ${workingDir ?? '.'}` };
  }
  if (!isInside(root, dir)) return escape;
  if (!(await stat(dir)).isDirectory()) return { ok: false, message: `working_dir is not a directory: ${workingDir}` };
  return { ok: true, dir };
}

/** Keeps the last `max` characters of a stream, compacting as it goes so memory stays near 2×max. */
class TailBuffer {
  readonly #max: number;
  #chunks: string[] = [];
  #held = 0;
  #total = 0;

  constructor(max: number) {
    this.#max = max;
  }

  push(chunk: string): void {
    this.#chunks.push(chunk);
    this.#held += chunk.length;
    this.#total += chunk.length;
    if (this.#held > 2 * this.#max) {
      this.#chunks = [this.#chunks.join('').slice(-this.#max)];
      this.#held = this.#max;
    }
  }

  text(): string {
    const all = this.#chunks.join('');
    if (this.#total <= this.#max) return all;
    let tail = all.slice(-this.#max);
    // Do not start on the second half of a surrogate pair.
    if (/^[\uDC00-\uDFFF]/.test(tail)) tail = tail.slice(1);
    return `[output truncated: ${this.#total - tail.length} earlier characters omitted]\n${tail}`;
  }
}

interface RunInput {
  program: string;
  command: string;
  cwd: string;
  timeoutMs: number;
  maxChars: number;
  closeGraceMs: number;
  signal: AbortSignal;
}

function runCommand(input: RunInput): Promise<RunResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    const posix = process.platform !== 'win32';
    // detached: the shell leads a new process group, so one kill(-pid) reaches everything it started.
    const child = spawn(input.program, ['-c', input.command], {
      cwd: input.cwd,
      detached: posix,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const stdout = new TailBuffer(input.maxChars);
    const stderr = new TailBuffer(input.maxChars);
    child.stdout.setEncoding('utf8').on('data', (s: string) => stdout.push(s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => stderr.push(s));
    let ended: RunResult['ended'] = 'exited';
    let exitCode: number | null = null;
    let running = true;
    let settled = false;
    let grace: NodeJS.Timeout | undefined;

    const kill = (why: 'timed_out' | 'cancelled'): void => {
      if (!running) return;
      ended = why;
      try {
        if (posix && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const timer = setTimeout(() => kill('timed_out'), input.timeoutMs);
    const onAbort = (): void => kill('cancelled');
    input.signal.addEventListener('abort', onAbort, { once: true });

    const finish = (spawnError?: Error): void => {
      if (settled) return;
      settled = true;
      running = false;
      clearTimeout(timer);
      clearTimeout(grace);
      input.signal.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      const durationSecs = Math.round(performance.now() - started) / 1000;
      resolve({ exitCode, stdout: stdout.text(), stderr: stderr.text(), ended, durationSecs, ...(spawnError ? { spawnError } : {}) });
    };
    child.once('error', (err) => finish(err));
    child.once('exit', (code) => {
      running = false;
      exitCode = code;
      clearTimeout(timer);
      // 'close' waits for the pipes; a grandchild that escaped the group could hold them forever.
      grace = setTimeout(() => finish(), input.closeGraceMs);
    });
    child.once('close', () => finish());
  });
}
