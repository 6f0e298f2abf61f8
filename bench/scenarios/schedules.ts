// bench/scenarios/schedules.ts: scenario 7, durable schedules. (a) How many active schedules one process
// holds per MB of heap (N once-schedules created over HTTP, heap after GC before and after). (b) Dispatch
// lag when N schedules come due in the same second: the schedules run on a ManualClock, which is moved
// to the shared due time in one step; lag is the real time from that step to each scheduled turn's
// model call (the scripted provider stamps it), and to the last turn settled. In-process: the app is
// built by createApp with the scripted provider, on a fresh lmdb realm.
import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import pino from 'pino';
import { ManualClock } from '../../actors/clock.ts';
import { createApp } from '../../app.ts';
import { createScriptedProvider, echoReply } from '../../providers/scripted.ts';
import { withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round, summarize } from '../stats.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function heapMb(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1_048_576;
}

async function createMany(url: string, n: number, body: (i: number) => unknown, width = 32): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < n) {
        const i = next++;
        const res = await fetch(`${url}/schedules`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body(i)),
        });
        if (res.status !== 200) throw new Error(`create schedule: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
}

async function runSize(ctx: BenchContext, n: number): Promise<Row> {
  return withTempRoot(ctx, async (root) => {
    const t0 = Date.parse('2030-01-01T00:00:00Z');
    const due = t0 + 3_600_000;
    const clock = new ManualClock(t0);
    let advancedAt = 0;
    const calls: number[] = [];
    const provider = createScriptedProvider((req) => {
      calls.push(performance.now() - advancedAt);
      return echoReply(req);
    });
    const app = await createApp({
      host: '127.0.0.1',
      port: 0,
      stateRoot: root,
      contextRoot: root,
      realm: 'bench-schedules',
      logger: pino({ level: 'warn' }),
      providerOverrides: { scripted: provider },
      clock,
    });
    try {
      const before = heapMb();
      const created = performance.now();
      await createMany(app.url, n, (i) => ({
        name: `s${i}`,
        trigger: { type: 'once', due_at_utc: new Date(due).toISOString() },
        target: {
          target_kind: 'session',
          type: 'materialize_on_demand_session',
          create: { provider: 'scripted' },
          action: { type: 'prompt', prompt: `tick ${i}` },
        },
      }));
      const createMs = performance.now() - created;
      const heldMb = heapMb() - before;
      ctx.log(`  ${n} schedules: created in ${round(createMs)} ms, heap +${round(heldMb)} MB`);
      advancedAt = performance.now();
      clock.advanceTo(due);
      await app.schedulesSettled();
      const allDoneMs = performance.now() - advancedAt;
      const lag = summarize(calls);
      ctx.log(`  ${n} due at once: model call lag p50 ${round(lag.p50)} ms, p99 ${round(lag.p99)} ms, all settled ${round(allDoneMs)} ms`);
      return {
        schedules: n,
        'creates/s': round((n * 1000) / createMs),
        'heap MB': round(heldMb),
        'schedules/MB': heldMb > 0 ? round(n / heldMb) : null,
        fired: calls.length,
        'lag p50 ms': round(lag.p50),
        'lag p99 ms': round(lag.p99),
        'lag max ms': round(lag.max),
        'all settled ms': round(allDoneMs),
      };
    } finally {
      await app.close();
    }
  });
}

export const schedulesScenario: Scenario = {
  id: 'schedules',
  title: 'Schedules: active schedules per MB, dispatch lag with N due in the same second',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const sizes = ctx.quick ? [1000] : [10_000];
    const rows: Row[] = [];
    for (const n of sizes) rows.push(await runSize(ctx, n));
    return {
      id: 'schedules',
      title: this.title,
      columns: ['schedules', 'creates/s', 'heap MB', 'schedules/MB', 'fired', 'lag p50 ms', 'lag p99 ms', 'lag max ms', 'all settled ms'],
      rows,
      notes: [
        'In-process (createApp, scripted provider, lmdb realm). Each schedule is a once trigger with a materialize-on-demand session target, so each firing creates a session and runs its first turn.',
        'heap MB: heapUsed after GC, after creating the schedules minus before (schedule actors resident, one planned occurrence each, plus the wheel).',
        "Lag: real time from moving the fake clock to the shared due time to each turn's model call (claim, dispatching write, session creation, turn start); all settled: until every turn committed and every occurrence was recorded completed.",
      ],
      targets: [],
    };
  },
};
