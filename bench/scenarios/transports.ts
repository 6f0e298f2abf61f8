// bench/scenarios/transports.ts: scenario 6, the HTTP transports. The same create+turn closed loop on
// uWebSockets.js and on node:http (lmdb backend both).
import type { BenchContext, Scenario, ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';
import { TURN_COLUMNS } from './turns.ts';
import { compareVariants } from './durability.ts';

export const transportsScenario: Scenario = {
  id: 'transports',
  title: 'HTTP transports: uWS vs node:http (create+turn)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const levels = ctx.concurrencies.filter((c) => c <= 10);
    const { rows, rates } = await compareVariants(
      ctx,
      levels.length ? levels : [1],
      [
        { key: 'uws', value: 'uWS', server: { transport: 'uws' } },
        { key: 'node', value: 'node:http', server: { transport: 'node' } },
      ],
      'transport',
    );
    const notes = ['lmdb backend; uWS and node:http alternate per concurrency so that drift hits both.'];
    for (const c of levels) {
      const u = rates.get(`uws:${c}`);
      const n = rates.get(`node:${c}`);
      if (u && n) notes.push(`c=${c}: node:http runs at ${round((100 * n) / u)}% of uWS's turns/s.`);
    }
    return { id: 'transports', title: this.title, columns: ['transport', 'c', ...TURN_COLUMNS], rows, notes, targets: [] };
  },
};
