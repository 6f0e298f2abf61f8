// bench/scenarios/replay.ts: what recording costs and how fast a replay runs (docs/replay.md). An
// in-process server on lmdb with a scripted model: sessions of N turns (every third turn a tool loop
// with one datetime call, 200-character replies streamed as 50 deltas of 4 characters, about a token each),
// once with `[record] raw_streams` off (the default) and once on. Recording bytes per turn are the JSON bytes of the
// session's recordings (GET /sessions/{id}/export, `recording` and `blob` lines) divided by the turns whose
// recording the default `[ledger]` retention kept; replay speed
// is turns replayed per second by POST /sessions/{id}/replay (wall clock of the synchronous request, median of 5).
import pino from 'pino';
import { createApp } from '../../app.ts';
import { createScriptedProvider, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { round } from '../stats.ts';

const COLUMNS = [
  'turns',
  'raw_streams',
  'turns recorded',
  'recording bytes/turn',
  'transcript bytes/turn',
  'replay turns/s',
  'live turns/s',
  'replay status',
];
const REPLAYS = 5;
const TEXT = 'x'.repeat(200);
const CHUNKS = Array.from({ length: 50 }, (_, i) => TEXT.slice(i * 4, i * 4 + 4));

function reply(req: ProviderRequest, i: number): ScriptedReply {
  const last = req.messages.at(-1);
  const afterTool = last?.role === 'tool_results';
  if (!afterTool && i % 3 === 0) return { tool_calls: [{ name: 'datetime', args: {} }], usage: { input_tokens: 200, output_tokens: 20 } };
  return { chunks: CHUNKS, usage: { input_tokens: 200, output_tokens: 50 } };
}

async function post(url: string, path: string, body: unknown, method = 'POST'): Promise<any> {
  const res = await fetch(url + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`${path} → ${res.status}: ${JSON.stringify(json)}`);
  return json;
}

async function measure(root: string, turns: number, raw: boolean): Promise<Row> {
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
    if (raw) await post(app.url, '/config', { record: { raw_streams: true } }, 'PATCH');
    const t0 = performance.now();
    const id = (await post(app.url, '/sessions', { prompt: 'turn 0', enable_builtins: true })).session_id;
    for (let i = 1; i < turns; i++) await post(app.url, `/sessions/${id}/messages`, { session_id: id, prompt: `turn ${i}` });
    const liveRate = turns / ((performance.now() - t0) / 1000);
    const file = await (await fetch(`${app.url}/sessions/${id}/export`)).text();
    let recBytes = 0;
    let rowBytes = 0;
    let recorded = 0;
    for (const line of file.split('\n')) {
      if (line.startsWith('{"type":"recording"')) recorded++;
      if (line.startsWith('{"type":"recording"') || line.startsWith('{"type":"blob"')) recBytes += Buffer.byteLength(line);
      if (line.startsWith('{"type":"row"')) rowBytes += Buffer.byteLength(line);
    }
    // Five replays of the session, the median rate reported (a loaded machine moves single runs a lot).
    const rates: number[] = [];
    let report: any;
    for (let r = 0; r < REPLAYS; r++) {
      const t0 = performance.now();
      report = await post(app.url, `/sessions/${id}/replay`, {});
      rates.push(report.turns_replayed / ((performance.now() - t0) / 1000));
    }
    rates.sort((a, b) => a - b);
    return {
      turns,
      raw_streams: raw ? 'on' : 'off',
      'turns recorded': recorded,
      'recording bytes/turn': round(recBytes / recorded),
      'transcript bytes/turn': round(rowBytes / turns),
      'replay turns/s': round(rates[REPLAYS >> 1]),
      'live turns/s': round(liveRate),
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
    const sizes = ctx.quick ? [10, 50] : [10, 100, 1000];
    const rows: Row[] = [];
    for (const raw of [false, true]) for (const n of sizes) rows.push(await withTempRoot(ctx, (root) => measure(root, n, raw)));
    return {
      id: 'replay',
      title: this.title,
      columns: COLUMNS,
      rows,
      notes: [
        'In-process server on lmdb, scripted model (no network model latency); every third turn runs one tool call.',
        'Turns recorded: the recordings the [ledger] retention (default bounds) kept; recording bytes/turn divides by them (the tool-list blob included, so it is amortized over more turns in longer sessions). The replay replays the kept ones.',
        'Live turns/s: the same session recorded turn by turn against the scripted model (one POST per turn), for comparison.',
        'Replies are 200 characters streamed as 50 deltas; raw_streams on keeps each delta of each call.',
        'Replay turns/s: the median of 5 synchronous POST /sessions/{id}/replay of the session (wall clock); each replayed turn is a full durable turn commit.',
      ],
      targets: [],
    };
  },
};
