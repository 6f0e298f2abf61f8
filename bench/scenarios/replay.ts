// bench/scenarios/replay.ts: what recording costs and how fast a replay runs (docs/replay.md). An
// in-process server on lmdb with a scripted model: sessions of N turns (every third turn a tool loop
// with one datetime call, 200-character replies). Recording bytes per turn are the JSON bytes of the
// session's recordings (GET /sessions/{id}/export, `recording` and `blob` lines) divided by its turns; replay speed
// is turns replayed per second by POST /sessions/{id}/replay (wall clock of the synchronous request).
import pino from 'pino';
import { createApp } from '../../app.ts';
import { createScriptedProvider, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';

const COLUMNS = ['turns', 'recording bytes/turn', 'transcript bytes/turn', 'replay turns/s', 'replay status'];

function reply(req: ProviderRequest, i: number): ScriptedReply {
  const last = req.messages.at(-1);
  const afterTool = last?.role === 'tool_results';
  if (!afterTool && i % 3 === 0) return { tool_calls: [{ name: 'datetime', args: {} }], usage: { input_tokens: 200, output_tokens: 20 } };
  return { text: 'x'.repeat(200), usage: { input_tokens: 200, output_tokens: 50 } };
}

async function post(url: string, path: string, body: unknown): Promise<any> {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function measure(root: string, turns: number): Promise<Row> {
  let calls = 0;
  const provider = createScriptedProvider((req) => reply(req, calls++));
  const app = await createApp({
    host: '127.0.0.1',
    port: 0,
    stateRoot: root,
    contextRoot: root,
    realm: `bench-replay-${turns}`,
    logger: pino({ level: 'silent' }),
    providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
  });
  try {
    const id = (await post(app.url, '/sessions', { prompt: 'turn 0', enable_builtins: true })).session_id;
    for (let i = 1; i < turns; i++) await post(app.url, `/sessions/${id}/messages`, { session_id: id, prompt: `turn ${i}` });
    const file = await (await fetch(`${app.url}/sessions/${id}/export`)).text();
    let recBytes = 0;
    let rowBytes = 0;
    for (const line of file.split('\n')) {
      if (line.startsWith('{"type":"recording"') || line.startsWith('{"type":"blob"')) recBytes += Buffer.byteLength(line);
      if (line.startsWith('{"type":"row"')) rowBytes += Buffer.byteLength(line);
    }
    const t0 = performance.now();
    const report = await post(app.url, `/sessions/${id}/replay`, {});
    const secs = (performance.now() - t0) / 1000;
    return {
      turns,
      'recording bytes/turn': round(recBytes / turns),
      'transcript bytes/turn': round(rowBytes / turns),
      'replay turns/s': round(report.turns_replayed / secs),
      'replay status': report.status,
    };
  } finally {
    await app.close();
  }
}

export const replayScenario: Scenario = {
  id: 'replay',
  title: 'Recording bytes per turn and replay speed',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const sizes = ctx.quick ? [10, 50] : [10, 100];
    const rows: Row[] = [];
    for (const n of sizes) rows.push(await withTempRoot(ctx, (root) => measure(root, n)));
    return {
      id: 'replay',
      title: this.title,
      columns: COLUMNS,
      rows,
      notes: ['In-process server on lmdb, scripted model (no network model latency); every third turn runs one tool call.'],
      targets: [],
    };
  },
};
