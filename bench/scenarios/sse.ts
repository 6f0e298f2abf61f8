// bench/scenarios/sse.ts: scenario 3, one session streaming to many SSE subscribers. A driver runs
// continue turns back to back on the session while the fake LLM streams stamped tokens (paced, or all at
// once); the subscribers count delivered events and sample token-to-client latency.
import { closedLoop, measured, WarrenClient } from '../load.ts';
import { check, withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { openFanout } from '../sse-clients.ts';
import { round, summarize } from '../stats.ts';

interface Mode {
  label: string;
  tokens: number;
  tokenDelayMs: number;
}

const MODES: Mode[] = [
  { label: 'paced 100 tokens/s', tokens: 50, tokenDelayMs: 10 },
  { label: 'paced 500 tokens/s', tokens: 250, tokenDelayMs: 2 },
  // Under the 256-entry subscriber buffer (http/sse.ts): a burst is delivered in one tick, so a larger
  // one is cut by design (stream_truncated) rather than measured.
  { label: 'burst: 200 tokens in one chunk per turn', tokens: 200, tokenDelayMs: 0 },
];

export const sseScenario: Scenario = {
  id: 'sse',
  title: 'SSE fan-out: one session streaming to many subscribers',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const n = ctx.sseSubscribers;
    const saved = { ...ctx.fake.knobs };
    let best = 0;
    let paced100p99: number | null = null;
    try {
      await withServer(ctx, {}, async (server) => {
        const client = new WarrenClient(server.url, 1);
        const fake = ctx.fake;
        fake.configure({ stampTokens: true, tokens: 8, tokenDelayMs: 0 });
        const id = await client.create('stream to many', { provider: ctx.provider });
        const url = new URL(server.url);
        const fan = await openFanout(url.hostname, Number(url.port), `/sessions/${id}/events`, n, 20);
        ctx.log(`  ${n} subscribers connected`);
        try {
          for (const mode of MODES) {
            fake.configure({ tokens: mode.tokens, tokenDelayMs: mode.tokenDelayMs });
            await client.continue(id, 'warm-up');
            const e0 = fan.events();
            const t0 = fan.truncated();
            fan.resetLatencies();
            const m = await measured(server, () =>
              closedLoop(1, ctx.durationMs, async () => {
                await client.continue(id, 'go on');
              }),
            );
            // Let the last frames arrive (delivery follows the durable commit by a little).
            await new Promise((r) => setTimeout(r, 200));
            const events = fan.events() - e0;
            const perSec = (events * 1000) / m.elapsedMs;
            const lat = summarize(fan.latencies());
            best = Math.max(best, perSec);
            if (mode.tokenDelayMs === 10) paced100p99 = round(lat.p99);
            ctx.log(`  ${mode.label}: ${round(perSec)} events/s delivered, token→client p50 ${round(lat.p50)} ms p99 ${round(lat.p99)} ms`);
            rows.push({
              mode: mode.label,
              subscribers: n,
              'events/s delivered': Math.round(perSec),
              'tokens/s offered': Math.round((m.ops * mode.tokens * 1000) / m.elapsedMs),
              'token→client p50 ms': round(lat.p50),
              'token→client p99 ms': round(lat.p99),
              'latency samples': lat.n,
              'server CPU util': round(m.serverCpuUtil),
              'RSS MB': round(m.rssMB),
              'stream_truncated frames': fan.truncated() - t0,
              turns: m.ops,
            });
          }
        } finally {
          fan.close();
          await client.close();
        }
      });
    } finally {
      ctx.fake.configure(saved);
    }
    return {
      id: 'sse',
      title: this.title,
      columns: [
        'mode',
        'subscribers',
        'events/s delivered',
        'tokens/s offered',
        'token→client p50 ms',
        'token→client p99 ms',
        'latency samples',
        'server CPU util',
        'RSS MB',
        'stream_truncated frames',
        'turns',
      ],
      rows,
      notes: [
        'Events are every SSE event frame a subscriber receives (text_delta plus run/turn lifecycle events), summed over subscribers, per second of the measured window.',
        'Latency: the fake LLM stamps each token with CLOCK_MONOTONIC when it writes it; every 20th subscriber parses the stamps. It includes Warren decoding the stream, the durable ledger commit that precedes live delivery (lmdb realm), the fan-out and the client read.',
        'The subscribers run in the load-generator process, on the same core as the fake LLM.',
      ],
      targets: [
        check(`SSE events/s to ${n.toLocaleString('en-US')} subscribers (best mode)`, Math.round(best), 100_000, 'events/s', 'sse', true),
        ...(paced100p99 !== null
          ? [
              {
                target: 'SSE token→client p99 at 100 tokens/s (reported, no target)',
                bound: '—',
                measured: paced100p99,
                unit: 'ms',
                met: null,
                where: 'sse',
              },
            ]
          : []),
      ],
    };
  },
};
