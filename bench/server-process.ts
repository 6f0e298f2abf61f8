// bench/server-process.ts: starts bench/server.ts as a child process (pinned to core 0 with taskset when
// available) on a fresh realm whose config.toml points Warren's providers at the fake LLM, and reads the
// child's CPU time and memory from /proc. Every scenario gets its own server through startServer. The
// server (and the floor) run compiled, as `npm start` does (bench/build-server.ts; WARREN_BENCH_FROM_SOURCE=1:
// through tsx).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { open, type RootDatabase } from 'lmdb';
import type { EldSummary } from './eld.ts';
import { builtEntry, fromSource } from './build-server.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
/** Server log lines echoed to stderr per server process; the rest are counted. */
const MAX_LOG_LINES = 10;

let clkTck = 0;
/** Kernel clock ticks per second (utime/stime units). */
function ticksPerSecond(): number {
  if (clkTck === 0) {
    const r = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
    clkTck = Number(r.stdout.trim()) || 100;
  }
  return clkTck;
}

let tasksetChecked: boolean | undefined;
/** True when `taskset` exists and this machine has at least 2 CPUs. */
export function canPin(): boolean {
  if (tasksetChecked === undefined) {
    const which = spawnSync('sh', ['-c', 'command -v taskset'], { encoding: 'utf8' });
    tasksetChecked = which.status === 0 && which.stdout.trim() !== '' && availableParallelism() >= 2;
  }
  return tasksetChecked;
}

/** Pins every thread of this process (the load generator) to `core`. Returns whether it worked. */
export function pinSelf(core: number): boolean {
  if (!canPin()) return false;
  const r = spawnSync('taskset', ['-a', '-p', '-c', String(core), String(process.pid)], { encoding: 'utf8' });
  return r.status === 0;
}

export interface CpuTimes {
  /** utime + stime (ms), all threads. */
  total: number;
  user: number;
  sys: number;
}

/** utime and stime of a process in ms (all its threads). */
export async function cpuMs(pid: number): Promise<CpuTimes> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields after "(comm)": state is [0], utime is overall field 14 → [11], stime 15 → [12].
  const user = (Number(fields[11]) * 1000) / ticksPerSecond();
  const sys = (Number(fields[12]) * 1000) / ticksPerSecond();
  return { total: user + sys, user, sys };
}

export interface ProcMemory {
  rssBytes: number;
  rssAnonBytes: number;
  rssFileBytes: number;
}

/** VmRSS / RssAnon / RssFile from /proc/<pid>/status. */
export async function procMemory(pid: number): Promise<ProcMemory> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : Number.NaN;
  };
  return { rssBytes: kb('VmRSS'), rssAnonBytes: kb('RssAnon'), rssFileBytes: kb('RssFile') };
}

export interface ServerOptions {
  /** Fresh temp directory that becomes the state root. */
  stateRoot: string;
  realm?: string;
  transport?: 'uws' | 'node';
  backend?: 'lmdb' | 'sqlite' | 'memory' | 'jsonl' | 'postgres';
  /** Extra environment of the server (e.g. WARREN_DATABASE_URL for postgres realms). */
  env?: NodeJS.ProcessEnv;
  /** Fake LLM base URL, written into config.toml for self_hosted and anthropic. */
  llmUrl: string;
  /** Extra node flags, e.g. ['--cpu-prof', '--cpu-prof-dir=…']. */
  nodeFlags?: string[];
  idleEvictMs?: number;
  maxResident?: number;
  pin: boolean;
  logLevel?: string;
}

export interface NodeMemoryUsage {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface ServerHandle {
  url: string;
  pid: number;
  transport: string;
  realm: string;
  realmDir: string;
  cpuMs(): Promise<CpuTimes>;
  memory(): Promise<ProcMemory>;
  /** Full GC in the server (4× gc()), then its process.memoryUsage(). */
  gc(): Promise<NodeMemoryUsage>;
  /**
   * LMDB's last committed transaction id of the realm store (read through a read-only handle in this
   * process), or null for non-lmdb backends. The difference over a window counts durable commits.
   */
  lmdbTxnId(): number | null;
  /** Starts the server's V8 sampling profiler (node:inspector), for the measured window only. */
  profileStart(intervalUs?: number): Promise<void>;
  /** Stops it and writes the .cpuprofile to `path`. */
  profileStop(path: string): Promise<void>;
  /** Writes a V8 heap snapshot of the server to `path` (v8.writeHeapSnapshot; blocks the server meanwhile). */
  heapSnapshot(path: string): Promise<void>;
  /** Starts measuring the server's event-loop delay (bench/eld.ts). */
  eldStart(): Promise<void>;
  /** Stops it: p50/p99/max in ms over the window. */
  eldStop(): Promise<EldSummary>;
  stop(): Promise<void>;
}

/** The realm config.toml: providers point at the fake, retries off (a failure must show, not hide). */
export function benchConfigToml(llmUrl: string): string {
  return [
    '[agent]',
    'model = "bench-model"',
    '',
    '[retry]',
    'max_retries = 0',
    '',
    '[providers.self_hosted]',
    `base_url = "${llmUrl}"`,
    'default_model = "bench-model"',
    '',
    '[providers.anthropic]',
    `base_url = "${llmUrl}"`,
    '',
  ].join('\n');
}

/** Writes the realm's config.toml before first open (openRealm only creates files that are absent). */
export async function prepareRealm(stateRoot: string, realm: string, llmUrl: string): Promise<string> {
  const dir = join(stateRoot, realm);
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'config.toml'), benchConfigToml(llmUrl), { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
  return dir;
}

/** Starts the server and resolves once it listens. */
export async function startServer(opts: ServerOptions): Promise<ServerHandle> {
  const realm = opts.realm ?? 'bench';
  const realmDir = await prepareRealm(opts.stateRoot, realm, opts.llmUrl);
  const nodeArgs = [
    '--expose-gc',
    ...(opts.nodeFlags ?? []),
    ...(fromSource() ? ['--import', 'tsx', join(REPO, 'bench', 'server.ts')] : ['--enable-source-maps', await builtEntry('server')]),
    '--port',
    '0',
    '--state-root',
    opts.stateRoot,
    '--realm',
    realm,
    '--http-transport',
    opts.transport ?? 'uws',
    '--realm-backend',
    opts.backend ?? 'lmdb',
    '--log-level',
    opts.logLevel ?? 'warn',
    '--idle-evict-ms',
    String(opts.idleEvictMs ?? 3_600_000),
    '--max-resident',
    String(opts.maxResident ?? 2_000_000),
  ];
  const [cmd, args] = opts.pin ? ['taskset', ['-c', '0', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child: ChildProcess = spawn(cmd, args as string[], {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    env: { ...process.env, ANTHROPIC_API_KEY: 'bench-key', ANTHROPIC_BASE_URL: opts.llmUrl, ...opts.env },
  });
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => {
    stderr += c.toString();
    if (stderr.length > 20_000) stderr = stderr.slice(-10_000);
  });
  // The server logs at warn: anything it prints is worth seeing next to the progress lines, up to a
  // point (a lagging-subscriber warning per SSE client would bury them).
  let shown = 0;
  let suppressed = 0;
  let partial = '';
  child.stdout?.on('data', (c: Buffer) => {
    const lines = (partial + c.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (shown < MAX_LOG_LINES) {
        shown++;
        process.stderr.write(`  [server] ${line.length > 400 ? `${line.slice(0, 400)}…` : line}\n`);
      } else suppressed++;
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const waiters: Array<{ type: string; resolve(m: Record<string, unknown>): void }> = [];
  child.on('message', (m: Record<string, unknown>) => {
    const i = waiters.findIndex((w) => w.type === m.type);
    if (i >= 0) waiters.splice(i, 1)[0].resolve(m);
  });
  const ask = (type: string, timeoutMs = 60_000): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`bench server did not answer '${type}' in ${timeoutMs} ms`)), timeoutMs);
      waiters.push({
        type,
        resolve: (m) => {
          clearTimeout(timer);
          resolve(m);
        },
      });
    });

  const listening = ask('listening');
  const started = await Promise.race([
    listening,
    exited.then((code) => {
      throw new Error(`bench server exited with ${code} before listening:\n${stderr}`);
    }),
  ]);
  const pid = child.pid!;
  const lmdbPath = join(realmDir, 'store', 'warren.lmdb');
  return {
    url: String(started.url),
    pid,
    transport: String(started.transport),
    realm,
    realmDir,
    cpuMs: () => cpuMs(pid),
    memory: () => procMemory(pid),
    async gc() {
      const reply = ask('gc');
      child.send({ type: 'gc' });
      return (await reply).memory as NodeMemoryUsage;
    },
    lmdbTxnId() {
      if ((opts.backend ?? 'lmdb') !== 'lmdb' || !existsSync(lmdbPath)) return null;
      // Opened and closed around each read, so this process never holds an LMDB reader slot (a stale
      // reader would keep the server from reusing free pages).
      const env: RootDatabase = open({ path: lmdbPath, maxDbs: 32, readOnly: true });
      try {
        return (env.getStats() as { lastTxnId: number }).lastTxnId;
      } finally {
        env.close().catch(() => undefined);
      }
    },
    async profileStart(intervalUs = 100) {
      const reply = ask('profile-start');
      child.send({ type: 'profile-start', intervalUs });
      const m = await reply;
      if (m.error) throw new Error(String(m.error));
    },
    async profileStop(path: string) {
      const reply = ask('profile-stop');
      child.send({ type: 'profile-stop', path });
      const m = await reply;
      if (m.error) throw new Error(String(m.error));
    },
    async heapSnapshot(path: string) {
      const reply = ask('heap-snapshot', 600_000);
      child.send({ type: 'heap-snapshot', path });
      await reply;
    },
    async eldStart() {
      const reply = ask('eld-start');
      child.send({ type: 'eld-start' });
      await reply;
    },
    async eldStop() {
      const reply = ask('eld-stop');
      child.send({ type: 'eld-stop' });
      return (await reply).eld as EldSummary;
    },
    async stop() {
      if (child.exitCode === null) {
        child.send({ type: 'stop' });
        const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(timer);
      }
      if (suppressed) process.stderr.write(`  [server] … ${suppressed} more log lines not shown\n`);
      suppressed = 0;
    },
  };
}

/** Starts bench/floor-server.ts (the bare node:http floor) pinned like a Warren server; `dir` holds its log. */
export async function startFloor(opts: {
  dir: string;
  llmUrl: string;
  pin: boolean;
  shape: Record<string, unknown>;
}): Promise<ServerHandle> {
  const shapeFile = join(opts.dir, 'request-shape.json');
  await writeFile(shapeFile, JSON.stringify(opts.shape));
  const nodeArgs = [
    ...(fromSource() ? ['--import', 'tsx', join(REPO, 'bench', 'floor-server.ts')] : [await builtEntry('floor-server')]),
    '--llm',
    opts.llmUrl,
    '--dir',
    opts.dir,
    '--shape',
    shapeFile,
  ];
  const [cmd, args] = opts.pin ? ['taskset', ['-c', '0', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
  const child: ChildProcess = spawn(cmd, args as string[], { cwd: REPO, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await Promise.race([
    new Promise<string>((resolve) =>
      child.on('message', (m: { type: string; url: string }) => {
        if (m.type === 'listening') resolve(m.url);
      }),
    ),
    exited.then((code): never => {
      throw new Error(`floor server exited with ${code} before listening`);
    }),
  ]);
  const pid = child.pid!;
  const unsupported = (what: string) => () => Promise.reject(new Error(`the floor server has no ${what}`));
  const ask = (type: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`floor server did not answer '${type}' in 60 s`)), 60_000);
      const on = (m: Record<string, unknown>) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
      child.send({ type });
    });
  return {
    url,
    pid,
    transport: 'node:http',
    realm: 'floor',
    realmDir: opts.dir,
    cpuMs: () => cpuMs(pid),
    memory: () => procMemory(pid),
    gc: unsupported('gc'),
    lmdbTxnId: () => null,
    profileStart: unsupported('profiler'),
    profileStop: unsupported('profiler'),
    heapSnapshot: unsupported('heap snapshot'),
    eldStart: async () => void (await ask('eld-start')),
    eldStop: async () => (await ask('eld-stop')).eld as EldSummary,
    async stop() {
      if (child.exitCode === null) {
        child.send({ type: 'stop' });
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
