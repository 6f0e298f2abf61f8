// bench/scenarios/turn-cost.ts: the turn-cost workload (Anthropic Messages wire, 20 tokens per reply,
// each token its own content_block_delta frame, a fake answering at once, durable lmdb realm), run on
// Warren and on the floor server (bench/floor-server.ts) back to back in the same run: create+turn and
// continue at each concurrency, and continue at 10, 100 and 1,000 turns of history. Each Warren row
// reports its CPU per turn and turns/s as a ratio to the floor row measured just before it.
import { closedLoop, measured, WarrenClient, type Measured } from '../load.ts';
import { captureTemplate, populate, type SessionTemplate } from '../populate.ts';
import { check, withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { prepareRealm, startFloor, startServer, type ServerHandle } from '../server-process.ts';
import { round } from '../stats.ts';

export const TOKENS = 20;
const WIRE = { provider: 'anthropic', model: 'claude-bench' } as const;

export const COST_COLUMNS = [
  'op',
  'server',
  'c',
  'history turns',
  'turns/s',
  'p50 ms',
  'p99 ms',
  'server CPU ms/turn',
  'CPU × floor',
  'turns/s ÷ floor',
  'RSS MB',
  'provider req KB',
  'LMDB commits/turn',
  'turns',
  'errors',
];

/** A measured window plus the provider request size the fake saw over it. */
export interface CostMeasure extends Measured {
  reqKB: number;
}

/** Measures `op` on `server` at concurrency c, with the fake's request bytes over the window. */
export async function costWindow(
  ctx: BenchContext,
  server: ServerHandle,
  c: number,
  op: (w: number) => Promise<unknown>,
): Promise<CostMeasure> {
  const b0 = ctx.fake.stats.bytesIn;
  const r0 = ctx.fake.stats.requests;
  const m = await measured(server, () =>
    closedLoop(c, ctx.durationMs, async (w) => {
      await op(w);
    }),
  );
  const calls = ctx.fake.stats.requests - r0;
  return { ...m, reqKB: calls ? (ctx.fake.stats.bytesIn - b0) / calls / 1024 : Number.NaN };
}

export function costRow(op: string, server: string, c: number, history: number, m: CostMeasure, floor?: CostMeasure): Row {
  return {
    op,
    server,
    c,
    'history turns': history,
    'turns/s': round(m.opsPerSec),
    'p50 ms': round(m.latency.p50),
    'p99 ms': round(m.latency.p99),
    'server CPU ms/turn': round(m.cpuMsPerOp),
    'CPU × floor': floor ? round(m.cpuMsPerOp / floor.cpuMsPerOp) : null,
    'turns/s ÷ floor': floor ? round(m.opsPerSec / floor.opsPerSec) : null,
    'RSS MB': round(m.rssMB),
    'provider req KB': round(m.reqKB),
    'LMDB commits/turn': m.commitsPerOp === null ? null : round(m.commitsPerOp),
    turns: m.ops,
    errors: m.errors,
  };
}

/** Warm-up create+turn loop (JIT, connection pools, store pages). */
async function warm(ctx: BenchContext, client: WarrenClient, c: number, extra?: Record<string, unknown>): Promise<void> {
  await closedLoop(Math.min(c, 16), ctx.warmupMs, async () => {
    await client.create('warm-up', { ...WIRE, extra });
  });
}

/**
 * Continue loop over a pool of sessions: each worker owns a slice and cycles through it, so no two
 * requests race on one session. Every pool session gets one unmeasured turn first (hydration).
 */
async function continueWindow(
  ctx: BenchContext,
  server: ServerHandle,
  client: WarrenClient,
  c: number,
  ids: string[],
): Promise<CostMeasure> {
  const slices: string[][] = Array.from({ length: c }, () => []);
  ids.forEach((id, i) => slices[i % c].push(id));
  let next = 0;
  await closedLoop(
    c,
    600_000,
    async () => {
      await client.continue(ids[next++], 'and then?');
    },
    ids.length,
  );
  const cursor = new Array<number>(c).fill(0);
  return costWindow(ctx, server, c, (w) => client.continue(slices[w][cursor[w]++ % slices[w].length], 'and then?'));
}

/** Turns compaction off, so a session of N turns really sends N turns of history (as the floor does). */
async function noCompaction(url: string): Promise<void> {
  const res = await fetch(`${url}/config`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ compaction: { enabled: false } }),
  });
  if (res.status !== 200) throw new Error(`PATCH /config → ${res.status}: ${await res.text()}`);
}

/** Pool size for continue at `history` turns: each session gets about history/10 (at least 1) measured turns. */
function poolSize(ctx: BenchContext, c: number, history: number, rate: number): number {
  const perSession = Math.max(1, Math.floor(history / 10));
  return Math.max(c * 2, Math.min(4000, Math.ceil((rate * ctx.durationMs * 1.3) / 1000 / perSession)));
}

/**
 * One Warren session with `history` committed turns, read back as a populate template, and the shape of
 * Warren's provider request (every field but the messages) for the floor to send.
 */
async function template(ctx: BenchContext, history: number): Promise<SessionTemplate & { shape: Record<string, unknown> }> {
  return withTempRoot(ctx, async (root) => {
    const server = await startServer({ stateRoot: root, llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
    await noCompaction(server.url);
    const client = new WarrenClient(server.url, 1);
    let id: string;
    let requestShape: Record<string, unknown> = {};
    try {
      id = await client.create('seed', WIRE);
      const { messages: _, ...shape } = JSON.parse(ctx.fake.stats.lastBody) as Record<string, unknown>;
      requestShape = shape;
      for (let t = 1; t < history; t++) await client.continue(id, 'and then?');
    } finally {
      await client.close();
      await server.stop();
    }
    return { ...(await captureTemplate(server.realmDir, id)), shape: requestShape };
  });
}

export const turnCostScenario: Scenario = {
  id: 'turncost',
  title: 'Turn cost vs the floor server (Anthropic wire, 20 deltas per reply)',
  async run(ctx): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const notes: string[] = [];
    const saved = { ...ctx.fake.knobs };
    ctx.fake.configure({ tokens: TOKENS, tokenDelayMs: 0, ttftMs: 0, stampTokens: false, toolCall: null });
    const createBy = new Map<number, { w: CostMeasure; f: CostMeasure }>();
    const contBy = new Map<number, { w: CostMeasure; f: CostMeasure }>();
    try {
      const templates = new Map<number, SessionTemplate>();
      const first = await template(ctx, 10);
      templates.set(10, first);
      const shape = first.shape;
      // create+turn at each concurrency: the floor, then Warren.
      for (const c of ctx.concurrencies) {
        const f = await withTempRoot(ctx, async (dir) => {
          const floor = await startFloor({ dir, llmUrl: ctx.fake.url, pin: ctx.pin, shape });
          const client = new WarrenClient(floor.url, c);
          try {
            await warm(ctx, client, c);
            return await costWindow(ctx, floor, c, () => client.create('hello', WIRE));
          } finally {
            await client.close();
            await floor.stop();
          }
        });
        rows.push(costRow('create+turn', 'floor', c, 0, f));
        const w = await withTempRoot(ctx, async (root) => {
          const server = await startServer({ stateRoot: root, llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
          const client = new WarrenClient(server.url, c);
          try {
            await warm(ctx, client, c);
            return await costWindow(ctx, server, c, () => client.create('hello', WIRE));
          } finally {
            await client.close();
            await server.stop();
          }
        });
        rows.push(costRow('create+turn', 'warren', c, 0, w, f));
        createBy.set(c, { w, f });
        ctx.log(
          `  create+turn c=${c}: warren ${round(w.cpuMsPerOp)} ms CPU/turn (${round(w.cpuMsPerOp / f.cpuMsPerOp)}× floor), ${round(w.opsPerSec)} turns/s (floor ${round(f.opsPerSec)})`,
        );
      }
      // continue: every concurrency at 10 turns of history, and c=10 (or the first) at 100 and 1,000.
      const cMid = ctx.concurrencies.includes(10) ? 10 : ctx.concurrencies[0];
      const histories = ctx.quick ? [10, 100] : [10, 100, 1000];
      const steps: Array<[number, number]> = [
        ...ctx.concurrencies.map((c): [number, number] => [c, 10]),
        ...histories.filter((h) => h !== 10).map((h): [number, number] => [cMid, h]),
      ];
      for (const [c, history] of steps) {
        const rate = createBy.get(c)?.w.opsPerSec ?? 500;
        const n = poolSize(ctx, c, history, rate);
        const f = await withTempRoot(ctx, async (dir) => {
          const floor = await startFloor({ dir, llmUrl: ctx.fake.url, pin: ctx.pin, shape });
          const client = new WarrenClient(floor.url, c);
          try {
            await warm(ctx, client, c);
            const ids: string[] = [];
            await closedLoop(
              Math.min(c, 16),
              600_000,
              async () => {
                ids.push(await client.create('seed', { ...WIRE, extra: { history_turns: history - 1 } }));
              },
              n,
            );
            return await continueWindow(ctx, floor, client, c, ids);
          } finally {
            await client.close();
            await floor.stop();
          }
        });
        rows.push(costRow('continue', 'floor', c, history, f));
        let t = templates.get(history);
        if (!t) templates.set(history, (t = await template(ctx, history)));
        const tpl = t;
        const w = await withTempRoot(ctx, async (root) => {
          const realmDir = await prepareRealm(root, 'bench', ctx.fake.url);
          const pop = await populate(realmDir, tpl, n, { sample: n });
          const server = await startServer({ stateRoot: root, llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
          await noCompaction(server.url);
          const client = new WarrenClient(server.url, c);
          try {
            await warm(ctx, client, c);
            return await continueWindow(ctx, server, client, c, pop.sampleIds);
          } finally {
            await client.close();
            await server.stop();
          }
        });
        rows.push(costRow('continue', 'warren', c, history, w, f));
        if (history === 10) contBy.set(c, { w, f });
        if (history !== 10 || c === cMid) contBy.set(-history, { w, f });
        ctx.log(
          `  continue c=${c} history ${history}: warren ${round(w.cpuMsPerOp)} ms CPU/turn (${round(w.cpuMsPerOp / f.cpuMsPerOp)}× floor), provider request ${round(w.reqKB)} KB, ${n} sessions`,
        );
      }
    } finally {
      ctx.fake.configure(saved);
    }
    notes.push(
      `Workload: Anthropic Messages wire, ${TOKENS} tokens per reply, each token its own content_block_delta SSE frame, the whole reply written at once; lmdb realm; each row is a fresh server (or floor) process, ${ctx.warmupMs} ms warm-up, ${ctx.durationMs} ms measured.`,
    );
    notes.push(
      'floor: bench/floor-server.ts, a bare node:http server that keeps the Anthropic-shaped history in memory, calls the same fake with the same streaming request, parses the stream and group-commits one fdatasync\'d line per turn. "CPU × floor" and "turns/s ÷ floor" compare each Warren row with the floor row measured just before it.',
    );
    notes.push(
      'continue at N turns of history: sessions copied from one real N-turn session (bench/populate.ts), each given one unmeasured turn first (hydration), then each gets about N/10 measured turns, with compaction off (the whole history is sent every turn, as the floor does); "provider req KB" is the mean request body the fake received per call.',
    );
    const c1 = createBy.get(1);
    const c10 = createBy.get(10);
    const c64 = createBy.get(64);
    const h10 = contBy.get(-10);
    const h1000 = contBy.get(-1000);
    // Continue growth without the provider body: the floor's own growth (it builds and sends the same body) is taken out.
    const growth = h10 && h1000 ? (h1000.w.cpuMsPerOp - (h1000.f.cpuMsPerOp - h10.f.cpuMsPerOp)) / h10.w.cpuMsPerOp : null;
    if (growth !== null)
      notes.push(
        `Continue CPU at 1,000 turns of history vs 10, less the floor's own growth (building and sending the larger body): ${round(growth)}×.`,
      );
    const targets = [
      check(
        'create+turn CPU at c=10 vs the floor (same run)',
        c10 ? round(c10.w.cpuMsPerOp / c10.f.cpuMsPerOp) : null,
        1.5,
        '×',
        'turncost c=10',
      ),
      check('create+turn CPU at c=10', c10 ? round(c10.w.cpuMsPerOp) : null, 0.35, 'ms', 'turncost c=10'),
      check('create+turn p50 at c=1', c1 ? round(c1.w.latency.p50) : null, 1.5, 'ms', 'turncost c=1'),
      check('create+turn throughput at c=10', c10 ? round(c10.w.opsPerSec) : null, 2000, 'turns/s', 'turncost c=10', true),
      check('create+turn p99 ÷ p50 at c=64', c64 ? round(c64.w.latency.p99 / c64.w.latency.p50) : null, 3, '×', 'turncost c=64'),
      check(
        'continue CPU at 1,000 vs 10 turns of history (provider body excluded)',
        growth === null ? null : round(growth),
        1.5,
        '×',
        'turncost continue',
      ),
      check('server RSS at c=64', c64 ? round(c64.w.rssMB) : null, 200, 'MB', 'turncost c=64'),
    ];
    return { id: 'turncost', title: this.title, columns: COST_COLUMNS, rows, notes, targets };
  },
};
