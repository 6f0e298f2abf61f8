// test/helpers/server-process.ts: runs the real `warren serve` CLI (main.ts) as a child process on a
// given state root and realm, for tests that must kill a real server (test/integration/durability-kill.test.ts).
// Every child is killed on cleanup: by the test's `t.after`, and by an exit hook as a last resort.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Config } from '../../contracts/config.ts';
import { CONFIG_FILE } from '../../config/realm.ts';
import { configToToml, validateConfig } from '../../config/toml.ts';
import { nodeEntry, REPO } from './child-entry.ts';

const MAIN = join(REPO, 'main.ts');
/** Log lines kept per process for diagnostics (the rest are dropped, oldest first). */
const KEPT_LINES = 2000;

/** How a child process ended. */
export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** One parsed pino line from the server's stdout (unparsable lines are kept as `{ raw }`). */
export type LogLine = Record<string, unknown> & { msg?: string; level?: number };

export interface ServerProcess {
  /** Base URL from the 'listening' log line, e.g. http://127.0.0.1:41234. */
  url: string;
  pid: number;
  /** Parsed stdout lines, newest last (bounded). */
  readonly logs: LogLine[];
  /** Everything the process wrote to stderr so far. */
  stderr(): string;
  /** Resolves when the process has exited (however it ended). */
  readonly exited: Promise<ProcessExit>;
  /** True once the process has exited. */
  hasExited(): boolean;
  /** Sends `signal` (default SIGKILL) unless already gone, and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<ProcessExit>;
  /** With `ipc`: sends a message and resolves with the child's next message. */
  request(message: unknown): Promise<unknown>;
}

export interface StartServerOptions {
  stateRoot: string;
  realm: string;
  /** `--realm-backend` (a creation hint: the realm manifest pins the backend after the first start). */
  backend?: 'lmdb' | 'sqlite' | 'postgres' | 'jsonl' | 'memory';
  /** Extra CLI arguments after the standard ones. */
  args?: string[];
  logLevel?: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  env?: NodeJS.ProcessEnv;
  /** Give up (and kill the child) when 'listening' has not appeared by then. Default 45 s (a loaded 2-core machine starts tsx + the server in 30 s). */
  startTimeoutMs?: number;
  /** Registers `kill('SIGKILL')` with `t.after`. */
  t?: Pick<TestContext, 'after'>;
  /** Script to run instead of main.ts (it gets the same arguments), e.g. test/helpers/clock-server.ts. */
  entry?: string;
  /** Node flags before the entry; `[]` runs a built .js entry on plain node. Default: the entry's compiled build under `npm test`, else tsx (child-entry.ts). */
  nodeArgs?: string[];
  /** Opens an IPC channel to the child (ServerProcess.request). */
  ipc?: boolean;
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when a test forgets (or never reaches) its cleanup: no orphaned server survives the runner.
  process.once('exit', () => {
    for (const child of live) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}

/**
 * Writes `<stateRoot>/<realm>/config.toml` from a partial config (defaults applied, validated). Call it
 * before the first start (the realm keeps an existing file) or between a kill and the next start.
 */
export async function writeRealmConfig(
  stateRoot: string,
  realm: string,
  config: Partial<Config> | Record<string, unknown>,
): Promise<string> {
  const dir = join(stateRoot, realm);
  await mkdir(dir, { recursive: true });
  const file = join(dir, CONFIG_FILE);
  await writeFile(file, configToToml(validateConfig(config)));
  return file;
}

/** Starts `node --import tsx main.ts serve --port 0 …` and resolves once it logs 'listening'. */
export async function startServerProcess(opts: StartServerOptions): Promise<ServerProcess> {
  installExitHook();
  const args = [
    ...(opts.nodeArgs ? [...opts.nodeArgs, opts.entry ?? MAIN] : nodeEntry(opts.entry ?? MAIN)),
    'serve',
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--state-root',
    opts.stateRoot,
    '--realm',
    opts.realm,
    '--log-level',
    opts.logLevel ?? 'info',
    ...(opts.backend ? ['--realm-backend', opts.backend] : []),
    ...(opts.args ?? []),
  ];
  // The node binary itself, no shell in between: `pid` is the server, so SIGKILL hits the server.
  const child = spawn(process.execPath, args, {
    cwd: REPO,
    env: opts.env ?? process.env,
    stdio: opts.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  live.add(child);
  const logs: LogLine[] = [];
  let stderr = '';
  let exitInfo: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = { code, signal };
      live.delete(child);
      resolve(exitInfo);
    });
  });
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<ProcessExit> => {
    if (exitInfo) return exitInfo;
    child.kill(signal);
    return exited;
  };
  opts.t?.after(async () => {
    await kill('SIGKILL');
  });

  let onListening: ((url: string) => void) | undefined;
  let pendingLine = '';
  // stdout is always drained: pino writes synchronously, so a full pipe would stall the server.
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => {
    pendingLine += chunk;
    let nl: number;
    while ((nl = pendingLine.indexOf('\n')) >= 0) {
      const text = pendingLine.slice(0, nl);
      pendingLine = pendingLine.slice(nl + 1);
      if (!text.trim()) continue;
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { raw: text };
      }
      logs.push(line);
      if (logs.length > KEPT_LINES) logs.splice(0, logs.length - KEPT_LINES);
      if (line.msg === 'listening' && typeof line.url === 'string') onListening?.(line.url);
    }
  });
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderr += chunk;
  });

  const timeoutMs = opts.startTimeoutMs ?? 45_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    const url = await new Promise<string>((resolve, reject) => {
      onListening = resolve;
      child.once('error', reject);
      exited
        .then((e) =>
          reject(
            new Error(
              `warren exited before listening (code ${e.code}, signal ${e.signal}): ${stderr.trim() || JSON.stringify(logs.slice(-5))}`,
            ),
          ),
        )
        .catch(reject);
      timer = setTimeout(() => reject(new Error(`warren did not log 'listening' within ${timeoutMs} ms: ${stderr.trim()}`)), timeoutMs);
    });
    return {
      url,
      pid: child.pid!,
      logs,
      stderr: () => stderr,
      exited,
      hasExited: () => exitInfo !== null,
      kill,
      request: (message) =>
        new Promise((resolve, reject) => {
          if (!child.send) return reject(new Error('no IPC channel (start with ipc: true)'));
          child.once('message', resolve);
          child.send(message as never);
        }),
    };
  } catch (err) {
    await kill('SIGKILL');
    throw err;
  } finally {
    clearTimeout(timer);
    onListening = undefined;
  }
}
