// bench/scenarios/structured.ts: the cost of structured output. create+turn with `output_schema` (the
// turn, its commit, one extraction call through the vendor's JSON-schema slot, validation and the
// extraction commit) beside the same turn without it, on fresh servers at each concurrency ≤ 10.
import { closedLoop, measured, WarrenClient } from '../load.ts';
import { withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';
import { TURN_COLUMNS, turnRow } from './turns.ts';

const SCHEMA = { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] };

export const structuredScenario: Scenario = {
  id: 'structured',
  title: 'Structured output: create+turn with output_schema beside the same turn without',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const levels = ctx.concurrencies.filter((c) => c <= 10);
    ctx.fake.configure({ jsonText: '{"ok":true}' });
    for (const variant of ['plain', 'output_schema'] as const) {
      for (const c of levels.length ? levels : [1]) {
        await withServer(ctx, {}, async (server) => {
          const client = new WarrenClient(server.url, c);
          const opts = { provider: ctx.provider, ...(variant === 'output_schema' ? { outputSchema: SCHEMA } : {}) };
          try {
            await closedLoop(Math.min(c, 16), ctx.warmupMs, async () => {
              await client.create('warm-up', opts);
            });
            const calls0 = ctx.fake.stats.requests;
            const m = await measured(server, () =>
              closedLoop(c, ctx.durationMs, async () => {
                await client.create('answer in JSON', opts);
              }),
            );
            const callsPerTurn = (ctx.fake.stats.requests - calls0) / Math.max(1, m.ops);
            ctx.log(
              `  ${variant} c=${c}: ${round(m.opsPerSec)} turns/s, p50 ${round(m.latency.p50)} ms, CPU ${round(m.cpuMsPerOp)} ms/turn`,
            );
            rows.push({ ...turnRow({ variant, c }, m), 'model calls/turn': round(callsPerTurn) });
          } finally {
            await client.close();
          }
        });
      }
    }
    return {
      id: 'structured',
      title: this.title,
      columns: ['variant', 'c', ...TURN_COLUMNS, 'model calls/turn'],
      rows,
      notes: [
        'output_schema rows: the turn (1 model call) is committed, then one extraction call (schema in the vendor slot, no tools) answers valid JSON, which is validated (ajv, compiled once) and committed.',
        'The difference in server CPU ms/turn between the two variants is the cost of extraction: one more model call, its decode, validation and a second commit.',
      ],
      targets: [],
    };
  },
};
