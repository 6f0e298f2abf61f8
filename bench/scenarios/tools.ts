// bench/scenarios/tools.ts: scenario 2, a tool round-trip turn. The fake LLM answers the first call of
// each turn with one scripted tool call (datetime: pure; task_create: writes a task record), Warren runs
// the builtin tool and calls the model again, which answers with text. Sessions use enable_builtins.
import { closedLoop, measured, WarrenClient } from '../load.ts';
import { withServer, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';
import { TURN_COLUMNS, turnRow } from './turns.ts';

const TOOLS = [
  { name: 'datetime', args: {} },
  { name: 'task_create', args: { subject: 'bench task' } },
];

export const toolsScenario: Scenario = {
  id: 'tools',
  title: 'Tool round-trip turn (one tool call, then the answer)',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const levels = ctx.concurrencies.filter((c) => c <= 10);
    try {
      for (const tool of TOOLS) {
        ctx.fake.configure({ toolCall: tool });
        for (const c of levels.length ? levels : [1]) {
          await withServer(ctx, {}, async (server) => {
            const client = new WarrenClient(server.url, c);
            const opts = { provider: ctx.provider, enableBuiltins: true } as const;
            try {
              await closedLoop(Math.min(c, 16), ctx.warmupMs, async () => {
                await client.create('warm-up', opts);
              });
              const calls0 = ctx.fake.stats.requests;
              const m = await measured(server, () =>
                closedLoop(c, ctx.durationMs, async () => {
                  await client.create('what time is it?', opts);
                }),
              );
              const callsPerTurn = (ctx.fake.stats.requests - calls0) / Math.max(1, m.ops);
              ctx.log(
                `  ${tool.name} c=${c}: ${round(m.opsPerSec)} turns/s, p50 ${round(m.latency.p50)} ms, CPU ${round(m.cpuMsPerOp)} ms/turn`,
              );
              rows.push({ ...turnRow({ tool: tool.name, c }, m), 'model calls/turn': round(callsPerTurn) });
            } finally {
              await client.close();
            }
          });
        }
      }
    } finally {
      ctx.fake.configure({ toolCall: null });
    }
    return {
      id: 'tools',
      title: this.title,
      columns: ['tool', 'c', ...TURN_COLUMNS, 'model calls/turn'],
      rows,
      notes: [
        'Each turn is POST /sessions with enable_builtins: the model asks for the tool, Warren dispatches it, the model answers (2 model calls per turn).',
        'task_create also commits a task record (a separate store commit) inside the turn.',
      ],
      targets: [],
    };
  },
};
