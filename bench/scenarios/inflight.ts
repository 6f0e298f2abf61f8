// bench/scenarios/inflight.ts: N turns in flight at once, the load Warren exists for. N sessions (each made
// by one fast create+turn), each with one SSE subscriber on GET /sessions/{id}/events; then one continue per
// session, all sent at once with `Prefer: respond-async` (202 after the durable request record, so the
// client holds no connection per turn), while a slow streaming fake holds every turn open (first token
// after 1 s, then 40 tokens 50 ms apart, each stamped with CLOCK_MONOTONIC). The same load runs against the
// floor server (bench/floor-server.ts, which serves the same two routes, the subscriber stream and 202).
// The fake runs in its own process (bench/fake-llm-process.ts): N held-open streams plus N subscribers do
// not fit one process's descriptor limit, and a fake sharing this event loop would add its own delay.
// Measured per target and N: server CPU per turn over the window (202s, streaming, commits, fan-out),
// RSS growth per turn in flight (peak during the window minus the baseline with every session and
// subscriber in place), event-loop delay p50/p99 in the server (perf_hooks, 10 ms resolution),
// token-to-client p50/p99 (stamp to subscriber read, every 10th subscriber), and errors (non-202
// answers, run_failed frames, turns whose run_completed never arrived by the deadline).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import type { FakeLlmKnobs, FakeLlmStats } from '../fake-llm.ts';
import { closedLoop, WarrenClient } from '../load.ts';
import { check, type BenchContext, type Row, type Scenario, type ScenarioResult, type TargetCheck } from '../scenario.ts';
import { startFloor, startServer, type ServerHandle } from '../server-process.ts';
import { openFanout } from '../sse-clients.ts';
import { round, summarize } from '../stats.ts';

const WIRE = { provider: 'anthropic', model: 'claude-bench' } as const;
const SLOW: Partial<FakeLlmKnobs> = { ttftMs: 1000, tokenDelayMs: 50, tokens: 40, stampTokens: true };
const FAST: Partial<FakeLlmKnobs> = { ttftMs: 0, tokenDelayMs: 0, tokens: 8, stampTokens: false };
const COLUMNS = [
  'server',
  'in flight',
  'CPU ms/turn',
  'RSS KiB/turn in flight',
  'ELD p50 ms',
  'ELD p99 ms',
  'token→client p50 ms',
  'token→client p99 ms',
  'errors',
  'window s',
];

/** The fake LLM in its own process. */
interface FakeProcess {
  url: string;
  configure(knobs: Partial<FakeLlmKnobs>): Promise<void>;
  stats(): Promise<FakeLlmStats>;
  stop(): Promise<void>;
}

async function startFakeProcess(): Promise<FakeProcess> {
  const entry = fileURLToPath(new URL('../fake-llm-process.ts', import.meta.url));
  const child: ChildProcess = fork(entry, [JSON.stringify(FAST)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = (type: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake LLM process did not answer '${type}' in 30 s`)), 30_000);
      const on = (m: Record<string, unknown>) => {
        if (m.type !== type) return;
        clearTimeout(timer);
        child.off('message', on);
        resolve(m);
      };
      child.on('message', on);
    });
  const url = String((await next('listening')).url);
  return {
    url,
    async configure(knobs) {
      const done = next('configured');
      child.send({ type: 'configure', knobs });
      await done;
    },
    async stats() {
      const reply = next('stats');
      child.send({ type: 'stats' });
      return (await reply).stats as FakeLlmStats;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** One target (Warren or the floor) at one N. */
async function measureInflight(ctx: BenchContext, label: string, server: ServerHandle, fake: FakeProcess, n: number): Promise<Row> {
  const client = new WarrenClient(server.url, 64);
  const url = new URL(server.url);
  const ids: string[] = [];
  await fake.configure(FAST);
  const made = await closedLoop(64, 600_000, async () => void ids.push(await client.create('hold on', WIRE)), n);
  if (made.errors > 0) throw new Error(`${label}: ${made.errors} of ${n} creates failed: ${made.firstError}`);
  ctx.log(`  ${label} N=${n}: ${ids.length} sessions created in ${round(made.elapsedMs / 1000)} s`);
  const fan = await openFanout(url.hostname, Number(url.port), (i) => `/sessions/${ids[i]}/events`, n, 10, 120_000);
  const pool = new Pool(server.url, { connections: 64, pipelining: 1, headersTimeout: 120_000, bodyTimeout: 120_000 });
  try {
    await fake.configure(SLOW);
    // Baseline: every session resident and every subscriber connected, nothing in flight.
    await new Promise((r) => setTimeout(r, 500));
    if (label === 'warren') await server.gc();
    const rss0 = (await server.memory()).rssBytes;
    let peak = rss0;
    const sampler = setInterval(() => {
      server.memory().then(
        (m) => (peak = Math.max(peak, m.rssBytes)),
        () => {},
      );
    }, 200);
    const done0 = fan.completed();
    fan.resetLatencies();
    await server.eldStart();
    // WARREN_BENCH_INFLIGHT_PROFILE=<dir>: a .cpuprofile of Warren over each window (npx tsx bench/profile.ts <file>).
    const profileDir = label === 'warren' ? process.env.WARREN_BENCH_INFLIGHT_PROFILE : undefined;
    if (profileDir) await server.profileStart(200);
    const cpu0 = (await server.cpuMs()).total;
    const t0 = performance.now();
    let errors = 0;
    let firstError: string | undefined;
    await Promise.all(
      ids.map(async (id) => {
        try {
          const res = await pool.request({
            method: 'POST',
            path: `/sessions/${id}/messages`,
            headers: { 'content-type': 'application/json', prefer: 'respond-async' },
            body: JSON.stringify({ session_id: id, prompt: 'take your time' }),
          });
          const text = await res.body.text();
          if (res.statusCode !== 202) throw new Error(`POST continue → ${res.statusCode}: ${text.slice(0, 200)}`);
        } catch (err) {
          errors++;
          firstError ??= err instanceof Error ? err.message : String(err);
        }
      }),
    );
    const acceptedMs = performance.now() - t0;
    // Every turn ends by about ttft + 40 × 50 ms after its 202; allow a minute more before counting it lost.
    const deadline = performance.now() + 3_000 + 60_000;
    while (fan.completed() + fan.failed() - done0 < n - errors && performance.now() < deadline)
      await new Promise((r) => setTimeout(r, 100));
    const windowMs = performance.now() - t0;
    const cpu = (await server.cpuMs()).total - cpu0;
    const eld = await server.eldStop();
    if (profileDir) await server.profileStop(join(profileDir, `inflight-${n}.cpuprofile`));
    clearInterval(sampler);
    const completed = fan.completed() - done0;
    const lost = Math.max(0, n - errors - completed - fan.failed());
    errors += fan.failed() + lost;
    const lat = summarize(fan.latencies());
    ctx.log(
      `  ${label} N=${n}: accepted in ${round(acceptedMs)} ms, ${completed} completed in ${round(windowMs / 1000)} s, CPU ${round(cpu / n)} ms/turn, ` +
        `RSS +${round((peak - rss0) / 1024 / n)} KiB/turn, ELD p99 ${eld.p99} ms, token→client p99 ${round(lat.p99)} ms, errors ${errors}${firstError ? ` (${firstError})` : ''}`,
    );
    return {
      server: label,
      'in flight': n,
      'CPU ms/turn': round(cpu / n),
      'RSS KiB/turn in flight': round((peak - rss0) / 1024 / n),
      'ELD p50 ms': eld.p50,
      'ELD p99 ms': eld.p99,
      'token→client p50 ms': round(lat.p50),
      'token→client p99 ms': round(lat.p99),
      errors,
      'window s': round(windowMs / 1000),
    };
  } finally {
    fan.close();
    await pool.close();
    await client.close();
  }
}

/** The sizes: WARREN_BENCH_INFLIGHT=1000,10000 overrides; quick runs 1,000 only. */
function sizes(ctx: BenchContext): number[] {
  const env = process.env.WARREN_BENCH_INFLIGHT;
  if (env)
    return env
      .split(',')
      .map(Number)
      .filter((x) => x > 0);
  return ctx.quick ? [1000] : [1000, 5000, 10000];
}

export const inflightScenario: Scenario = {
  id: 'inflight',
  title: 'Turns in flight: N concurrent slow streaming turns, one SSE subscriber each, against the floor',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const targets: TargetCheck[] = [];
    const fake = await startFakeProcess();
    try {
      for (const n of sizes(ctx)) {
        let shape: Record<string, unknown> = {};
        const root = await mkdtemp(join(tmpdir(), 'warren-bench-inflight-'));
        try {
          const server = await startServer({
            stateRoot: root,
            llmUrl: fake.url,
            pin: ctx.pin,
            nodeFlags: ctx.nodeFlags,
            idleEvictMs: 3_600_000,
            maxResident: n + 1000,
          });
          try {
            const row = await measureInflight(ctx, 'warren', server, fake, n);
            rows.push(row);
            if (n === 10_000) {
              const where = `inflight N=${n}`;
              targets.push(
                check('inflight: no error', Number(row.errors), 0, 'errors', where),
                check('inflight: event-loop delay p99', Number(row['ELD p99 ms']), 20, 'ms', where),
                check('inflight: token-to-client p99', Number(row['token→client p99 ms']), 50, 'ms', where),
                check('inflight: RSS per turn in flight', Number(row['RSS KiB/turn in flight']), 20, 'KiB', where),
              );
            }
            const { messages: _, ...rest } = JSON.parse((await fake.stats()).lastBody || '{}') as Record<string, unknown>;
            shape = rest;
          } finally {
            await server.stop();
          }
        } finally {
          await rm(root, { recursive: true, force: true });
        }
        const dir = await mkdtemp(join(tmpdir(), 'warren-bench-inflight-floor-'));
        try {
          const floor = await startFloor({ dir, llmUrl: fake.url, pin: ctx.pin, shape });
          try {
            rows.push(await measureInflight(ctx, 'floor', floor, fake, n));
          } finally {
            await floor.stop();
          }
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      }
    } finally {
      await fake.stop();
    }
    return {
      id: 'inflight',
      title: this.title,
      columns: COLUMNS,
      rows,
      notes: [
        'Each N: N sessions (one fast create+turn each), one SSE subscriber per session, then one continue per session sent at once with `Prefer: respond-async`; the fake (its own process) answers every turn after 1 s with 40 tokens 50 ms apart. Warren rows use the default realm (lmdb) and transport; the floor row runs the same load on bench/floor-server.ts.',
        'CPU ms/turn: server utime+stime over the window (from the first POST until every run_completed arrived) divided by N. RSS KiB/turn in flight: peak VmRSS during the window (sampled every 200 ms) minus VmRSS with every session and subscriber in place before the window (after a full GC on Warren), divided by N. ELD: monitorEventLoopDelay in the server over the window. Token→client: fake stamp to subscriber read, every 10th subscriber.',
        'The bench process (subscribers, POSTs) and the fake share core 1: at 10,000 the subscriber side reads 200,000 frames/s and bounds token-to-client latency as much as the server does.',
      ],
      targets,
    };
  },
};
