// bench/scenarios/turns.ts: scenario 1, create+turn and continue in a closed loop at each concurrency
// (a fresh server per concurrency), plus the same loop against the fake LLM directly (the floor).
// measureCreate / measureContinue are shared with the durability and transport scenarios.
import { closedLoop, FloorClient, measured, WarrenClient, type Measured, type TurnOptions } from '../load.ts';
import { check, withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import type { ServerHandle } from '../server-process.ts';
import { round } from '../stats.ts';

/** Turns a measured loop into a table row. */
export function turnRow(label: Record<string, string | number>, m: Measured): Row {
  return {
    ...label,
    'turns/s': round(m.opsPerSec),
    'p50 ms': round(m.latency.p50),
    'p99 ms': round(m.latency.p99),
    'server CPU ms/turn': round(m.cpuMsPerOp),
    'server CPU util': round(m.serverCpuUtil),
    'kernel share of CPU': round(m.sysShare),
    'RSS MB': round(m.rssMB),
    'LMDB commits/turn': m.commitsPerOp === null ? null : round(m.commitsPerOp),
    turns: m.ops,
    errors: m.errors,
  };
}

export const TURN_COLUMNS = [
  'turns/s',
  'p50 ms',
  'p99 ms',
  'server CPU ms/turn',
  'server CPU util',
  'kernel share of CPU',
  'RSS MB',
  'LMDB commits/turn',
  'turns',
  'errors',
];

/** Closed-loop warm-up: create+turn for `ms` (JIT, connection pools, LMDB pages). */
export async function warmUp(ctx: BenchContext, client: WarrenClient, c: number, o: TurnOptions = {}): Promise<void> {
  await closedLoop(Math.min(c, 16), ctx.warmupMs, async () => {
    await client.create('warm-up', { provider: ctx.provider, ...o });
  });
}

/** Measured create+turn loop (POST /sessions with a prompt) at concurrency c. */
export function measureCreate(
  ctx: BenchContext,
  server: ServerHandle,
  client: WarrenClient,
  c: number,
  o: TurnOptions = {},
): Promise<Measured> {
  return measured(server, () =>
    closedLoop(c, ctx.durationMs, async () => {
      await client.create('hello', { provider: ctx.provider, ...o });
    }),
  );
}

/** Turns per session the continue loop aims for, so transcripts stay short and alike across runs. */
const TURNS_PER_SESSION = 16;

/**
 * Measured continue loop at concurrency c. Each worker owns a slice of a session pool created up front
 * (sized from the expected rate) and cycles through it, so no two requests race on one session.
 */
export async function measureContinue(
  ctx: BenchContext,
  server: ServerHandle,
  client: WarrenClient,
  c: number,
  expectedRate: number,
): Promise<Measured & { meanTurnsPerSession: number }> {
  const perWorker = Math.max(2, Math.ceil((expectedRate * (ctx.durationMs / 1000) * 1.5) / TURNS_PER_SESSION / c));
  const pool: string[][] = Array.from({ length: c }, () => []);
  await closedLoop(
    Math.min(64, c * perWorker),
    600_000,
    async () => {
      const id = await client.create('seed', { provider: ctx.provider });
      pool.find((p) => p.length < perWorker)?.push(id);
    },
    c * perWorker,
  );
  if (pool.some((p) => p.length === 0)) throw new Error('could not create the session pool for the continue loop');
  const cursor = new Array<number>(c).fill(0);
  const m = await measured(server, () =>
    closedLoop(c, ctx.durationMs, async (w) => {
      const slice = pool[w];
      const id = slice[cursor[w]++ % slice.length];
      await client.continue(id, 'and then?');
    }),
  );
  return { ...m, meanTurnsPerSession: 1 + m.ops / (c * perWorker) };
}

export const turnsScenario: Scenario = {
  id: 'turns',
  title: 'Create+turn and continue, closed loop',
  async run(ctx): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const notes: string[] = [];
    const byC = new Map<number, { create: Measured; cont: Measured }>();
    for (const c of ctx.concurrencies) {
      await withServer(ctx, {}, async (server) => {
        const client = new WarrenClient(server.url, c);
        try {
          await warmUp(ctx, client, c);
          const create = await measureCreate(ctx, server, client, c);
          ctx.log(
            `  c=${c} create+turn: ${round(create.opsPerSec)} turns/s, p50 ${round(create.latency.p50)} ms, CPU ${round(create.cpuMsPerOp)} ms/turn`,
          );
          rows.push(turnRow({ op: 'create+turn', c }, create));
          const cont = await measureContinue(ctx, server, client, c, create.opsPerSec);
          ctx.log(
            `  c=${c} continue: ${round(cont.opsPerSec)} turns/s, p50 ${round(cont.latency.p50)} ms, CPU ${round(cont.cpuMsPerOp)} ms/turn`,
          );
          rows.push(turnRow({ op: 'continue', c }, cont));
          notes.push(
            `continue c=${c}: ${round(cont.meanTurnsPerSession)} turns per session on average at the end (history read on every turn grows with it).`,
          );
          byC.set(c, { create, cont });
        } finally {
          await client.close();
        }
      });
    }
    // The other wire: Anthropic Messages through the same fake.
    if (ctx.provider !== 'anthropic') {
      const c = ctx.concurrencies.includes(10) ? 10 : ctx.concurrencies[0];
      await withServer(ctx, {}, async (server) => {
        const client = new WarrenClient(server.url, c);
        try {
          await warmUp(ctx, client, c, { provider: 'anthropic', model: 'claude-bench' });
          const m = await measureCreate(ctx, server, client, c, { provider: 'anthropic', model: 'claude-bench' });
          ctx.log(`  c=${c} create+turn (anthropic wire): ${round(m.opsPerSec)} turns/s`);
          rows.push(turnRow({ op: 'create+turn, anthropic wire', c }, m));
        } finally {
          await client.close();
        }
      });
    }
    // Cost of each streamed token: the same create+turn with 8× the tokens per reply.
    {
      const c = ctx.concurrencies.includes(10) ? 10 : ctx.concurrencies[0];
      const tokens = ctx.fake.knobs.tokens;
      const more = tokens * 8;
      ctx.fake.configure({ tokens: more });
      try {
        await withServer(ctx, {}, async (server) => {
          const client = new WarrenClient(server.url, c);
          try {
            await warmUp(ctx, client, c);
            const m = await measureCreate(ctx, server, client, c);
            rows.push(turnRow({ op: `create+turn, ${more} tokens/reply`, c }, m));
            const base = byC.get(c)?.create;
            if (base) {
              const perToken = ((m.cpuMsPerOp - base.cpuMsPerOp) / (more - tokens)) * 1000;
              notes.push(
                perToken > 0
                  ? `Each streamed token costs about ${round(perToken)} µs of server CPU (create+turn at c=${c} with ${more} vs ${tokens} tokens per reply, on different servers); every token is a text_delta event and a ledger entry.`
                  : `The per-token cost was not resolvable in this run (create+turn at c=${c}: ${round(m.cpuMsPerOp)} ms/turn with ${more} tokens vs ${round(base.cpuMsPerOp)} with ${tokens}; run-to-run noise is larger).`,
              );
              ctx.log(`  c=${c} ${more} tokens/reply: ${round(m.cpuMsPerOp)} ms CPU/turn → ${round(perToken)} µs per token`);
            }
          } finally {
            await client.close();
          }
        });
      } finally {
        ctx.fake.configure({ tokens });
      }
    }
    // The floor: the same closed loop against the fake LLM directly (no Warren).
    for (const c of ctx.concurrencies) {
      const floor = new FloorClient(ctx.fake.url, c);
      try {
        await closedLoop(c, Math.min(ctx.warmupMs, 1000), () => floor.call());
        const r = await closedLoop(c, ctx.durationMs, () => floor.call());
        ctx.log(`  c=${c} floor: ${round(r.opsPerSec)} calls/s, p50 ${round(r.latency.p50)} ms`);
        rows.push({
          op: 'floor: fake LLM direct',
          c,
          'turns/s': round(r.opsPerSec),
          'p50 ms': round(r.latency.p50),
          'p99 ms': round(r.latency.p99),
          'server CPU ms/turn': null,
          'server CPU util': null,
          'RSS MB': null,
          turns: r.ops,
          errors: r.errors,
        });
      } finally {
        await floor.close();
      }
    }
    notes.push(
      `Each concurrency runs on a fresh server (${ctx.provider} wire, ${ctx.fake.knobs.tokens} tokens per reply, streamed in one chunk), after ${ctx.warmupMs} ms of warm-up; ${ctx.durationMs} ms measured per row.`,
    );
    notes.push(
      'The floor row is the load generator calling the fake LLM directly with the body Warren sends: what the client and fake cost on their core, without Warren.',
    );
    const c1 = byC.get(1);
    const c10 = byC.get(10);
    const targets = [
      check('server CPU per non-streaming turn (create+turn, c=10)', c10 ? round(c10.create.cpuMsPerOp) : null, 0.5, 'ms', 'turns c=10'),
      check('server CPU per non-streaming turn (continue, c=10)', c10 ? round(c10.cont.cpuMsPerOp) : null, 0.5, 'ms', 'turns c=10'),
      check('c=1 p50 with durable commits (create+turn)', c1 ? round(c1.create.latency.p50) : null, 1.5, 'ms', 'turns c=1'),
      check('c=1 p50 with durable commits (continue)', c1 ? round(c1.cont.latency.p50) : null, 1.5, 'ms', 'turns c=1'),
      check('c=10 throughput (create+turn)', c10 ? round(c10.create.opsPerSec) : null, 1500, 'turns/s', 'turns c=10', true),
      check('c=10 throughput (continue)', c10 ? round(c10.cont.opsPerSec) : null, 1500, 'turns/s', 'turns c=10', true),
    ];
    return { id: 'turns', title: this.title, columns: ['op', 'c', ...TURN_COLUMNS], rows, notes, targets };
  },
};
