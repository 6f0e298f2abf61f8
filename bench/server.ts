// bench/server.ts: the Warren server process the benchmarks start (bench/server-process.ts spawns it,
// pinned to core 0). Same composition root as main.ts (createApp with a pino logger), plus what main.ts
// does not expose: idleEvictMs / maxResidentSessions, and an IPC channel to report the URL, run a full
// GC (node --expose-gc) and read process.memoryUsage().
import { writeFile } from 'node:fs/promises';
import { findSourceMap } from 'node:module';
import { Session } from 'node:inspector/promises';
import { writeHeapSnapshot } from 'node:v8';
import { EldWindow } from './eld.ts';
import { createApp } from '../app.ts';
import { parseLine } from '../config/cli-args.ts';
import { createLogger, type LogLevel } from '../config/logger.ts';

interface Args {
  port: number;
  stateRoot: string;
  realm: string;
  httpTransport: 'uws' | 'node';
  realmBackend: 'lmdb' | 'memory' | 'jsonl';
  logLevel: LogLevel;
  idleEvictMs: number;
  maxResident: number;
}

function parse(argv: string[]): Args {
  const { values } = parseLine(
    argv,
    {
      port: { type: 'string', default: '0' },
      'state-root': { type: 'string' },
      realm: { type: 'string' },
      'http-transport': { type: 'string', default: 'uws' },
      'realm-backend': { type: 'string', default: 'lmdb' },
      'log-level': { type: 'string', default: 'warn' },
      'idle-evict-ms': { type: 'string', default: String(3_600_000) },
      'max-resident': { type: 'string', default: String(2_000_000) },
    },
    { positionals: false },
  );
  const required = (name: 'state-root' | 'realm'): string => {
    const v = values[name];
    if (v === undefined) throw new Error(`bench/server.ts: --${name} is required`);
    return v;
  };
  return {
    port: Number(values.port),
    stateRoot: required('state-root'),
    realm: required('realm'),
    httpTransport: values['http-transport'] as Args['httpTransport'],
    realmBackend: values['realm-backend'] as Args['realmBackend'],
    logLevel: values['log-level'] as LogLevel,
    idleEvictMs: Number(values['idle-evict-ms']),
    maxResident: Number(values['max-resident']),
  };
}

type Msg =
  | { type: 'gc' }
  | { type: 'memory' }
  | { type: 'stop' }
  | { type: 'profile-start'; intervalUs?: number }
  | { type: 'profile-stop'; path: string }
  | { type: 'heap-snapshot'; path: string }
  | { type: 'eld-start' }
  | { type: 'eld-stop' };

/** The V8 sampling profiler of this process, started and stopped over IPC (only the measured window). */
class Profiler {
  private session: Session | null = null;

  async start(intervalUs: number): Promise<void> {
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: intervalUs });
    await this.session.post('Profiler.start');
    // WARREN_BENCH_ALLOC_PROFILE=1: also sample allocations, garbage included (what the GC has to collect),
    // written beside the .cpuprofile as .heapprofile (npx tsx bench/alloc-profile.ts <file>).
    if (process.env.WARREN_BENCH_ALLOC_PROFILE === '1') {
      await this.session.post('HeapProfiler.enable');
      await this.session.post('HeapProfiler.startSampling', {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      } as never);
      this.sampling = true;
    }
  }

  private sampling = false;

  async stop(path: string): Promise<void> {
    if (!this.session) throw new Error('profiler not started');
    const { profile } = await this.session.post('Profiler.stop');
    if (this.sampling) {
      const heap = await this.session.post('HeapProfiler.stopSampling');
      this.sampling = false;
      mapHeapNode(heap.profile.head as unknown as SampledFrame);
      await writeFile(path.replace(/\.cpuprofile$/, '') + '.heapprofile', JSON.stringify(heap.profile));
    }
    this.session.disconnect();
    this.session = null;
    for (const node of profile.nodes) toSource(node.callFrame);
    await writeFile(path, JSON.stringify(profile));
  }
}

interface SampledFrame {
  callFrame: { url: string; lineNumber: number; columnNumber: number };
  children?: SampledFrame[];
}

/**
 * A frame of the compiled server (bench/build-server.ts) moved to its TypeScript source, line and column
 * (the bundle's source map, loaded by --enable-source-maps), so every reader of the profile sees the same
 * file names as from a run through tsx. Frames without a mapping are left as they are.
 */
function toSource(cf: SampledFrame['callFrame']): void {
  if (!cf.url.startsWith('file:') || !cf.url.endsWith('.js')) return;
  const entry = findSourceMap(cf.url)?.findEntry(cf.lineNumber, cf.columnNumber) as
    { originalSource?: string; originalLine?: number; originalColumn?: number } | undefined;
  if (!entry?.originalSource) return;
  cf.url = new URL(entry.originalSource, cf.url).href;
  cf.lineNumber = entry.originalLine ?? cf.lineNumber;
  cf.columnNumber = entry.originalColumn ?? cf.columnNumber;
}

function mapHeapNode(node: SampledFrame): void {
  toSource(node.callFrame);
  for (const child of node.children ?? []) mapHeapNode(child);
}

async function main(): Promise<void> {
  const a = parse(process.argv.slice(2));
  const logger = createLogger({ level: a.logLevel });
  const app = await createApp({
    host: '127.0.0.1',
    port: a.port,
    stateRoot: a.stateRoot,
    contextRoot: a.stateRoot,
    realm: a.realm,
    httpTransport: a.httpTransport,
    realmBackend: a.realmBackend,
    logger,
    idleEvictMs: a.idleEvictMs,
    maxResidentSessions: a.maxResident,
  });
  const send = (m: unknown): void => {
    process.send?.(m);
  };
  const profiler = new Profiler();
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    // A clean exit, so that --cpu-prof writes its profile.
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', stop);
  // The bench process is gone (killed, or its output pipe closed): do not outlive it.
  process.on('disconnect', stop);
  process.on('SIGINT', stop);
  const eld = new EldWindow();
  process.on('message', (m: Msg) => {
    if (m.type === 'gc' || m.type === 'memory') {
      const g = (globalThis as { gc?: () => void }).gc;
      if (m.type === 'gc' && g) for (let i = 0; i < 4; i++) g();
      send({ type: m.type, memory: process.memoryUsage(), gc: Boolean(g) });
    } else if (m.type === 'profile-start') {
      profiler.start(m.intervalUs ?? 100).then(
        () => send({ type: m.type }),
        (err: unknown) => send({ type: m.type, error: String(err) }),
      );
    } else if (m.type === 'profile-stop') {
      profiler.stop(m.path).then(
        () => send({ type: m.type }),
        (err: unknown) => send({ type: m.type, error: String(err) }),
      );
    } else if (m.type === 'eld-start') {
      eld.start();
      send({ type: m.type });
    } else if (m.type === 'eld-stop') {
      send({ type: m.type, eld: eld.stop() });
    } else if (m.type === 'heap-snapshot') {
      writeHeapSnapshot(m.path);
      send({ type: m.type });
    } else if (m.type === 'stop') stop();
  });
  send({ type: 'listening', url: app.url, transport: app.transport, pid: process.pid });
}

main().catch((err: unknown) => {
  process.stderr.write(`bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
