// bench/scenarios/durability.ts: scenario 5, the cost of durability. The same create+turn closed loop on
// the durable backends (lmdb, sqlite, jsonl: every turn's commit is durable before the reply) and on memory.
import { WarrenClient } from '../load.ts';
import { withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';
import { measureCreate, TURN_COLUMNS, turnRow, warmUp } from './turns.ts';

/** Runs create+turn at each concurrency for each variant (fresh server each), interleaved per concurrency. */
export async function compareVariants(
  ctx: BenchContext,
  levels: number[],
  variants: Array<{ key: string; value: string; server: { backend?: 'lmdb' | 'sqlite' | 'jsonl' | 'memory'; transport?: 'uws' | 'node' } }>,
  keyName: string,
): Promise<{ rows: Row[]; rates: Map<string, number> }> {
  const rows: Row[] = [];
  const rates = new Map<string, number>();
  for (const c of levels) {
    for (const v of variants) {
      await withServer(ctx, v.server, async (server) => {
        const client = new WarrenClient(server.url, c);
        try {
          await warmUp(ctx, client, c);
          const m = await measureCreate(ctx, server, client, c);
          ctx.log(`  ${v.value} c=${c}: ${round(m.opsPerSec)} turns/s, p50 ${round(m.latency.p50)} ms, CPU ${round(m.cpuMsPerOp)} ms/turn`);
          rows.push(turnRow({ [keyName]: v.value, c }, m));
          rates.set(`${v.key}:${c}`, m.opsPerSec);
        } finally {
          await client.close();
        }
      });
    }
  }
  return { rows, rates };
}

export const durabilityScenario: Scenario = {
  id: 'durability',
  title: 'Durable commit: lmdb, sqlite and jsonl vs the memory backend (create+turn)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const levels = ctx.concurrencies.filter((c) => c <= 10);
    const { rows, rates } = await compareVariants(
      ctx,
      levels.length ? levels : [1],
      [
        { key: 'lmdb', value: 'lmdb (durable)', server: { backend: 'lmdb' } },
        { key: 'sqlite', value: 'sqlite (durable)', server: { backend: 'sqlite' } },
        { key: 'jsonl', value: 'jsonl (durable)', server: { backend: 'jsonl' } },
        { key: 'memory', value: 'memory (not durable)', server: { backend: 'memory' } },
      ],
      'backend',
    );
    const notes = [
      'Same loop as the create+turn rows of scenario 1, uWS transport; the backends alternate per concurrency so that drift hits all of them.',
    ];
    for (const c of levels) {
      const m = rates.get(`memory:${c}`);
      for (const key of ['lmdb', 'sqlite', 'jsonl']) {
        const r = rates.get(`${key}:${c}`);
        if (r && m) notes.push(`c=${c}: ${key} runs at ${round((100 * r) / m)}% of the memory backend's turns/s.`);
      }
    }
    return { id: 'durability', title: this.title, columns: ['backend', 'c', ...TURN_COLUMNS], rows, notes, targets: [] };
  },
};
