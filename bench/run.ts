// bench/run.ts: `npm run bench`. Starts the fake LLM, pins itself (load generator) to core 1 and every
// server to core 0 when taskset exists, runs the scenarios (each on fresh server processes and fresh temp
// state roots), profiles the server when a target is missed, and writes bench/results/<date>.json + .md.
// Progress goes to stderr. Options: see HELP below and bench/README.md.
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CliArgsError, parseLine, wantsHelp } from '../config/cli-args.ts';
import { startFakeLlm, type FakeLlmKnobs } from './fake-llm.ts';
import { closedLoop, measured, WarrenClient } from './load.ts';
import { readProfile, summarizeProfile } from './profile.ts';
import { renderMarkdown, type ProfileReport, type RunReport } from './report.ts';
import { withServer, type BenchContext, type Scenario, type ScenarioResult, type TargetCheck } from './scenario.ts';
import { canPin, pinSelf } from './server-process.ts';
import { clusterScenario } from './scenarios/cluster.ts';
import { compactionScenario } from './scenarios/compaction.ts';
import { commsScenario } from './scenarios/comms.ts';
import { durabilityScenario } from './scenarios/durability.ts';
import { ledgerScenario } from './scenarios/ledger.ts';
import { memoryScenario } from './scenarios/memory.ts';
import { schedulesScenario } from './scenarios/schedules.ts';
import { sseScenario } from './scenarios/sse.ts';
import { structuredScenario } from './scenarios/structured.ts';
import { toolsScenario } from './scenarios/tools.ts';
import { replayScenario } from './scenarios/replay.ts';
import { transportsScenario } from './scenarios/transports.ts';
import { turnCostScenario } from './scenarios/turn-cost.ts';
import { turnsScenario } from './scenarios/turns.ts';
import { inflightScenario } from './scenarios/inflight.ts';
import { viewerScenario } from './scenarios/viewer.ts';
import { webhooksScenario } from './scenarios/webhooks.ts';
import { workgraphScenario } from './scenarios/workgraph.ts';
import { round } from './stats.ts';

const SCENARIOS: Scenario[] = [
  turnsScenario,
  turnCostScenario,
  toolsScenario,
  structuredScenario,
  sseScenario,
  memoryScenario,
  durabilityScenario,
  transportsScenario,
  viewerScenario,
  workgraphScenario,
  webhooksScenario,
  ledgerScenario,
  replayScenario,
  schedulesScenario,
  compactionScenario,
  commsScenario,
  clusterScenario,
  inflightScenario,
];

const HELP = `Usage: npm run bench -- [options]

  --quick                 short smoke run (1.5 s windows, c=1,10, 200 SSE subscribers, 2k/10k resident,
                          1k/20k stored); results go to bench/results/<date>-quick.{json,md}
  --only <ids>            comma-separated scenarios: ${SCENARIOS.map((s) => s.id).join(', ')}
  --duration <ms>         measured window per step (default 5000; quick 1500)
  --warmup <ms>           warm-up per fresh server (default 3000; quick 500)
  --concurrency <list>    closed-loop concurrencies (default 1,10,64; quick 1,10)
  --provider <wire>       self_hosted (OpenAI Chat Completions, default) or anthropic (Messages)
  --tokens <n>            text tokens per fake reply (default 8)
  --ttft <ms>             fake time to first token (default 0)
  --token-delay <ms>      fake gap between tokens (default 0: one chunk)
  --sse-subscribers <n>   subscribers of the SSE scenario (default 1000)
  --resident <list>       resident-session counts of the memory scenario (default 10000,100000)
  --stored <list>         stored-session counts of the memory scenario (default 1000,1000000)
  --profile               always profile the server (create+turn c=1 and c=10)
  --no-profile            never profile (default: profile when a target is missed)
  --no-pin                do not use taskset
  --keep                  keep temp state roots and print their paths
  --out <dir>             results directory (default bench/results)
  --node-flags "<flags>"  extra node flags for every server process (e.g. "--max-old-space-size=8192")
  -h, --help              this text
`;

interface Options {
  quick: boolean;
  only: string[] | null;
  durationMs: number;
  warmupMs: number;
  concurrencies: number[];
  provider: 'self_hosted' | 'anthropic';
  knobs: Partial<FakeLlmKnobs>;
  sseSubscribers: number;
  resident: number[];
  stored: number[];
  profile: 'auto' | 'always' | 'never';
  pin: boolean;
  keep: boolean;
  out: string;
  nodeFlags: string[];
}

function fail(message: string): never {
  process.stderr.write(`bench: ${message}\n\n${HELP}`);
  process.exit(2);
}

const RUN_OPTIONS = {
  quick: { type: 'boolean' },
  only: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  concurrency: { type: 'string' },
  provider: { type: 'string' },
  tokens: { type: 'string' },
  ttft: { type: 'string' },
  'token-delay': { type: 'string' },
  'sse-subscribers': { type: 'string' },
  resident: { type: 'string' },
  stored: { type: 'string' },
  profile: { type: 'boolean' },
  'no-profile': { type: 'boolean' },
  'no-pin': { type: 'boolean' },
  keep: { type: 'boolean' },
  out: { type: 'string' },
  'node-flags': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parseOptions(argv: string[]): Options {
  if (wantsHelp(argv)) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  let v;
  try {
    ({ values: v } = parseLine(argv, RUN_OPTIONS, { positionals: false }));
  } catch (err) {
    fail(err instanceof CliArgsError ? err.message : String(err));
  }
  const quick = v.quick === true;
  const num = (flag: string, x: string): number => {
    const n = Number(x);
    if (!Number.isFinite(n) || n < 0) fail(`${flag} needs a non-negative number`);
    return n;
  };
  const list = (flag: string, x: string | undefined, fallback: number[]): number[] => {
    if (x === undefined) return fallback;
    const xs = x
      .split(',')
      .filter(Boolean)
      .map((y) => num(flag, y));
    if (xs.length === 0 || xs.some((y) => y < 1)) fail(`${flag} needs a comma-separated list of positive numbers`);
    return xs;
  };
  let only: string[] | null = null;
  if (v.only !== undefined) {
    const ids = v.only.split(',').filter(Boolean);
    const unknown = ids.filter((id) => !SCENARIOS.some((s) => s.id === id));
    if (ids.length === 0 || unknown.length) fail(`--only: unknown scenario ${unknown.join(', ') || '(none)'}`);
    only = ids;
  }
  const provider = v.provider ?? 'self_hosted';
  if (provider !== 'self_hosted' && provider !== 'anthropic') fail('--provider must be self_hosted or anthropic');
  const knobs: Partial<FakeLlmKnobs> = {};
  if (v.tokens !== undefined) knobs.tokens = num('--tokens', v.tokens);
  if (v.ttft !== undefined) knobs.ttftMs = num('--ttft', v.ttft);
  if (v['token-delay'] !== undefined) knobs.tokenDelayMs = num('--token-delay', v['token-delay']);
  // As before: the last of --profile / --no-profile wins.
  const profileFlag = argv.filter((a) => a === '--profile' || a === '--no-profile').at(-1);
  return {
    quick,
    only,
    durationMs: v.duration === undefined ? (quick ? 1500 : 5000) : num('--duration', v.duration),
    warmupMs: v.warmup === undefined ? (quick ? 500 : 3000) : num('--warmup', v.warmup),
    concurrencies: list('--concurrency', v.concurrency, quick ? [1, 10] : [1, 10, 64]),
    provider,
    knobs,
    sseSubscribers: v['sse-subscribers'] === undefined ? (quick ? 200 : 1000) : num('--sse-subscribers', v['sse-subscribers']),
    resident: list('--resident', v.resident, quick ? [2000, 10000] : [10_000, 100_000]),
    stored: list('--stored', v.stored, quick ? [1000, 20_000] : [1000, 1_000_000]),
    profile: profileFlag === '--profile' ? 'always' : profileFlag === '--no-profile' ? 'never' : 'auto',
    pin: v['no-pin'] !== true,
    keep: v.keep === true,
    out: v.out ?? fileURLToPath(new URL('./results', import.meta.url)),
    nodeFlags: (v['node-flags'] ?? '').split(/\s+/).filter(Boolean),
  };
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

function git(args: string[]): string {
  const r = spawnSync('git', args, { encoding: 'utf8', cwd: fileURLToPath(new URL('..', import.meta.url)) });
  return r.status === 0 ? r.stdout.trim() : '';
}

/** Profiles the server over a measured create+turn window at concurrency c. */
async function profileRun(ctx: BenchContext, c: number, dir: string): Promise<ProfileReport> {
  return withServer(ctx, {}, async (server) => {
    const client = new WarrenClient(server.url, c);
    try {
      await closedLoop(Math.min(c, 16), ctx.warmupMs, async () => {
        await client.create('warm-up', { provider: ctx.provider });
      });
      const file = join(dir, `server-create-c${c}-${Date.now()}.cpuprofile`);
      await server.profileStart(100);
      const m = await measured(server, () =>
        closedLoop(c, ctx.durationMs, async () => {
          await client.create('hello', { provider: ctx.provider });
        }),
      );
      await server.profileStop(file);
      const summary = summarizeProfile(await readProfile(file), 25);
      ctx.log(`  profiled create+turn c=${c}: ${m.ops} turns, ${round(m.cpuMsPerOp)} ms CPU/turn → ${file}`);
      return { label: `create+turn, c=${c} (${ctx.provider} wire, lmdb, uWS)`, file, turns: m.ops, cpuMsPerTurn: m.cpuMsPerOp, summary };
    } finally {
      await client.close();
    }
  });
}

async function main(): Promise<void> {
  const opts = parseOptions(process.argv.slice(2));
  const started = new Date();
  const taskset = opts.pin && canPin();
  const selfPinned = taskset && pinSelf(1);
  log(
    `bench: ${opts.quick ? 'quick run' : 'full run'}; pinning: ${taskset ? `server → core 0, load generator → ${selfPinned ? 'core 1' : 'NOT pinned (taskset -p failed)'}` : opts.pin ? 'unavailable (no taskset or < 2 CPUs)' : 'off (--no-pin)'}`,
  );
  const fake = await startFakeLlm(opts.knobs);
  const ctx: BenchContext = {
    quick: opts.quick,
    durationMs: opts.durationMs,
    warmupMs: opts.warmupMs,
    concurrencies: opts.concurrencies,
    pin: taskset,
    provider: opts.provider,
    fake,
    nodeFlags: opts.nodeFlags,
    keep: opts.keep,
    residentSizes: opts.resident,
    storedSizes: opts.stored,
    sseSubscribers: opts.sseSubscribers,
    log,
  };
  const results: ScenarioResult[] = [];
  const load: Record<string, number> = { start: round(loadavg()[0]) };
  const failures: Array<{ scenario: string; error: string }> = [];
  const chosen = opts.only ? SCENARIOS.filter((s) => opts.only!.includes(s.id)) : SCENARIOS;
  try {
    for (const s of chosen) {
      load[s.id] = round(loadavg()[0]);
      log(`[${s.id}] ${s.title} (1-min load average ${load[s.id]})`);
      const t0 = performance.now();
      try {
        results.push(await s.run(ctx));
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        failures.push({ scenario: s.id, error: message });
        log(`[${s.id}] FAILED: ${message}`);
      }
      log(`[${s.id}] done in ${round((performance.now() - t0) / 1000)} s`);
    }
    const targets: TargetCheck[] = results.flatMap((r) => r.targets);
    const missed = targets.some((t) => t.met === false);
    const profiles: ProfileReport[] = [];
    if (opts.profile === 'always' || (opts.profile === 'auto' && missed)) {
      log(`[profile] ${missed ? 'a target was missed: ' : ''}profiling the server on create+turn`);
      const dir = join(tmpdir(), 'warren-bench-profiles');
      await mkdir(dir, { recursive: true });
      for (const c of [1, 10]) profiles.push(await profileRun(ctx, c, dir));
    }
    load.end = round(loadavg()[0]);
    const finished = new Date();
    const cpu = cpus();
    const report: RunReport = {
      date: started.toISOString().slice(0, 10),
      startedAt: started.toISOString(),
      finishedAt: finished.toISOString(),
      elapsedS: (finished.getTime() - started.getTime()) / 1000,
      quick: opts.quick,
      git: { rev: git(['rev-parse', '--short', 'HEAD']) || 'unknown', dirty: git(['status', '--porcelain']) !== '' },
      machine: {
        cpus: cpu.length,
        model: cpu[0]?.model ?? 'unknown',
        memGiB: Math.round(totalmem() / 2 ** 30),
        node: process.versions.node,
        platform: `${process.platform}-${process.arch}`,
        clkTck: Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100,
      },
      loadavg1: load,
      pinning: {
        requested: opts.pin,
        taskset,
        server: taskset ? 'core 0 (taskset -c 0)' : 'not pinned',
        loadGenerator: selfPinned ? 'core 1 (taskset -a -p -c 1)' : 'not pinned',
      },
      options: {
        only: opts.only ?? 'all',
        durationMs: opts.durationMs,
        warmupMs: opts.warmupMs,
        concurrencies: opts.concurrencies,
        provider: opts.provider,
        sseSubscribers: opts.sseSubscribers,
        resident: opts.resident,
        stored: opts.stored,
        nodeFlags: opts.nodeFlags,
      },
      fakeLlm: { ...fake.knobs },
      scenarios: results,
      failures,
      targets,
      profiles,
    };
    await mkdir(opts.out, { recursive: true });
    const base = join(opts.out, `${report.date}${opts.quick ? '-quick' : ''}${opts.only ? `-${opts.only.join('-')}` : ''}`);
    await writeFile(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`);
    const md = renderMarkdown(report);
    await writeFile(`${base}.md`, md);
    log(`bench: wrote ${base}.json and ${base}.md in ${round(report.elapsedS)} s`);
    process.stdout.write(md);
    if (failures.length) process.exitCode = 1;
  } finally {
    await fake.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
