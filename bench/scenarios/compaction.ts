// bench/scenarios/compaction.ts: turn latency of one long session at 10, 100 and 1,000 committed turns,
// with context compaction on (a small threshold, so the history stays bounded) against compaction off
// (the whole transcript is re-sent every turn). Sequential continue turns on one session (c=1).
import { WarrenClient } from '../load.ts';
import { withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round, summarize } from '../stats.ts';

const HISTORY_SIZES = [10, 100, 1000];
const PROMPT = 'Please note this detail for later: ' + 'context '.repeat(40);

async function patchConfig(url: string, patch: unknown): Promise<void> {
  const res = await fetch(`${url}/config`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(patch),
  });
  if (res.status !== 200) throw new Error(`PATCH /config → ${res.status}: ${await res.text()}`);
}

export const compactionScenario: Scenario = {
  id: 'compaction',
  title: 'Turn latency of a long session, compaction on vs off',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const window = ctx.quick ? 5 : 30;
    const sizes = ctx.quick ? HISTORY_SIZES.filter((n) => n <= 100) : HISTORY_SIZES;
    for (const mode of ['off', 'on'] as const) {
      await withServer(ctx, {}, async (server) => {
        await patchConfig(
          server.url,
          mode === 'on'
            ? { compaction: { enabled: true, auto_compact_threshold: 8000, min_turns_between_compactions: 3 } }
            : { compaction: { enabled: false } },
        );
        const client = new WarrenClient(server.url, 1);
        try {
          const id = await client.create(PROMPT, { provider: ctx.provider });
          let turns = 1;
          for (const size of sizes) {
            while (turns < size) {
              await client.continue(id, PROMPT);
              turns++;
            }
            const samples: number[] = [];
            for (let i = 0; i < window; i++) {
              const t0 = performance.now();
              await client.continue(id, PROMPT);
              samples.push(performance.now() - t0);
              turns++;
            }
            const s = summarize(samples);
            ctx.log(`  compaction ${mode}, ${size} turns: p50 ${round(s.p50)} ms, p99 ${round(s.p99)} ms`);
            rows.push({
              compaction: mode,
              'history turns': size,
              n: s.n,
              'p50 ms': round(s.p50),
              'p99 ms': round(s.p99),
              'max ms': round(s.max),
            });
          }
        } finally {
          await client.close();
        }
      });
    }
    return {
      id: 'compaction',
      title: this.title,
      columns: ['compaction', 'history turns', 'n', 'p50 ms', 'p99 ms', 'max ms'],
      rows,
      notes: [
        'One session, sequential continue turns; each prompt is ~330 bytes. "on": [compaction] auto_compact_threshold = 8000 tokens, so the transcript is summarised about every 20 turns and stays bounded; "off": the whole transcript is sent every turn.',
        'Latency includes the turns that compact (a summary call to the fake LLM plus one rewrite commit); those show in p99/max.',
        ctx.quick ? 'Quick mode stops at 100 history turns.' : 'Histories of 10, 100 and 1,000 committed turns.',
      ],
      targets: [],
    };
  },
};
