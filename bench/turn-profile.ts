// bench/turn-profile.ts: profiles one Warren server over a measured create+turn (or continue) window on
// the turn-cost workload (Anthropic wire, 20 tokens per reply, each its own SSE frame) and prints the
// hot spots (bench/profile.ts). The quick loop for working on the turn path:
//   npx tsx bench/turn-profile.ts [--op create|continue] [--c 10] [--duration 3000] [--warmup 2000] [--top 30]
//                                 [--history <turns>: continue on c sessions grown to that many turns, compaction off]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProgramLine } from '../config/cli-args.ts';
import { startFakeLlm } from './fake-llm.ts';
import { closedLoop, measured, WarrenClient } from './load.ts';
import { readProfile, summarizeProfile } from './profile.ts';
import { canPin, pinSelf, startServer } from './server-process.ts';
import { round } from './stats.ts';

const { values: args } = parseProgramLine(
  'bench/turn-profile.ts',
  {
    op: { type: 'string', default: 'create' },
    c: { type: 'string', default: '10' },
    duration: { type: 'string', default: '3000' },
    warmup: { type: 'string', default: '2000' },
    top: { type: 'string', default: '30' },
    history: { type: 'string', default: '0' },
  },
  { positionals: false },
);
const op = args.op;
const c = Number(args.c);
const durationMs = Number(args.duration);
const warmupMs = Number(args.warmup);
const top = Number(args.top);
const history = Number(args.history);
const WIRE = { provider: 'anthropic', model: 'claude-bench' } as const;

/** Self time grouped into the areas the turn path is discussed in. */
function byArea(modules: Array<{ fn: string; pct: number }>): Array<[string, number]> {
  const area = (m: string): string => {
    if (/^(lmdb|msgpackr|ordered-binary)|^storage\/|session-writer|store-health|instrumented-store/.test(m))
      return 'storage (lmdb, msgpack, store, writer)';
    if (m.startsWith('xstate') || m.startsWith('machines/')) return 'xstate + machines';
    if (/^(undici|eventsource-parser)|^providers\//.test(m)) return 'provider (undici, SSE parse, wire mapping)';
    if (m.startsWith('http/') || m.startsWith('wasm://')) return 'http (uWS, router, handlers)';
    if (m.startsWith('node internals')) return 'node internals';
    if (m === '(garbage collector)' || m === '(program)') return 'GC + (program)';
    if (m.startsWith('actors/observe') || m.startsWith('prom-client') || m.startsWith('pino') || m.startsWith('@pinojs'))
      return 'observability (metrics, logs)';
    if (m.startsWith('actors/')) return 'actors (session, turn, compaction, ...)';
    return 'other';
  };
  const out = new Map<string, number>();
  for (const h of modules) out.set(area(h.fn.replace(/ \(native\)$/, '')), (out.get(area(h.fn.replace(/ \(native\)$/, ''))) ?? 0) + h.pct);
  return [...out].sort((a, b) => b[1] - a[1]);
}

const pin = canPin() && pinSelf(1);
const fake = await startFakeLlm({ tokens: 20 });
const root = await mkdtemp(join(tmpdir(), 'warren-prof-'));
const server = await startServer({ stateRoot: root, llmUrl: fake.url, pin });
const client = new WarrenClient(server.url, c);
try {
  const ids: string[] = [];
  if (history > 0) {
    // continue at a given history: c sessions grown to `history` turns, compaction off.
    await fetch(`${server.url}/config`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ compaction: { enabled: false } }),
    });
    await closedLoop(
      c,
      3_600_000,
      async () => {
        const id = await client.create('seed', WIRE);
        for (let t = 1; t < history; t++) await client.continue(id, 'and then?');
        ids.push(id);
      },
      c,
    );
  } else {
    await closedLoop(c, warmupMs, async () => {
      ids.push(await client.create('warm-up', WIRE));
    });
  }
  let i = 0;
  const turn = op === 'continue' ? () => client.continue(ids[i++ % ids.length], 'and then?') : () => client.create('hello', WIRE);
  // continue: c workers over distinct sessions (cycling; never two on one session at once when ids ≥ c).
  const file = join(tmpdir(), `warren-turn-${op}-c${c}-${Date.now()}.cpuprofile`);
  await server.profileStart(100);
  const m = await measured(server, () =>
    closedLoop(c, durationMs, async () => {
      await turn();
    }),
  );
  await server.profileStop(file);
  const profile = await readProfile(file);
  const s = summarizeProfile(profile, top);
  const all = summarizeProfile(profile, 10_000);
  process.stdout.write(
    `${op} c=${c}: ${m.ops} turns, ${round(m.opsPerSec)} turns/s, p50 ${round(m.latency.p50)} ms, ${round(m.cpuMsPerOp)} ms CPU/turn, ${round(m.commitsPerOp ?? Number.NaN)} commits/turn, busy ${round(s.busyMs)} ms → ${file}\n`,
  );
  process.stdout.write('\nby area (self time):\n');
  for (const [area, pct] of byArea(all.byModule)) process.stdout.write(`  ${round(pct)}%  ${area}\n`);
  process.stdout.write('\nby module:\n');
  for (const h of s.byModule) process.stdout.write(`  ${round(h.pct)}%  ${h.fn}\n`);
  process.stdout.write('\ntop self:\n');
  for (const h of s.topSelf) process.stdout.write(`  ${round(h.pct)}%  ${h.fn}  ${h.where}\n`);
  process.stdout.write('\nWarren inclusive:\n');
  for (const h of s.topWarrenTotal) process.stdout.write(`  ${round(h.pct)}%  ${h.fn}  ${h.where}\n`);
} finally {
  await client.close();
  await server.stop();
  await fake.close();
  await rm(root, { recursive: true, force: true });
}
