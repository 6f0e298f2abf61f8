// bench/compare.ts: turn cost of this checkout beside another checkout of Warren (a baseline commit), in
// one run on one machine. Each round starts a fresh server from each tree in turn (the order alternates
// per round, so drift in machine load hits both), warms it up, and measures a closed create+turn (or
// continue) loop through that tree's own bench/server.ts against one shared fake LLM. Reports the median
// over rounds of server CPU per turn, turns/s and p50, the ratios current ÷ base of those medians, and
// the median of the per-round ratios. With --together both servers run at once in every round (sharing
// the server core, each under its own closed loop), so drift in the machine's speed between rounds
// (large on a shared VM) hits both trees in the same window; its per-round ratios are the steadier figure.
//   git worktree add /tmp/warren-base <commit> && (cd /tmp/warren-base && npm ci)
//   npx tsx bench/compare.ts --base /tmp/warren-base [--rounds 5] [--c 10] [--op create|continue]
//       [--duration 4000] [--warmup 2000] [--provider self_hosted|anthropic] [--tokens 8] [--token-delay 0]
//       [--patch-current '<JSON config patch applied to the current tree only>'] [--env-current 'K=V,K2=V2']
//       [--together] [--sse] [--floor] [--out bench/results]
// Servers run from source through tsx (a base older than bench/build-server.ts can do nothing else);
// --built runs both compiled, as `npm start` does (the base must have bench/build-server.ts).
// --env-current: environment given to the current tree's server only (e.g. a glibc malloc setting, with
// --base naming this same checkout, to measure what the setting alone costs).
// --token-delay <ms>: the fake paces its tokens that far apart (0: the whole reply in one write), so each
// delta reaches the server on its own, as from a real model (one ledger commit per delta per session).
// --sse (with --op continue): every session of the pool has one SSE subscriber (GET /sessions/{id}/events)
// from before the measured window, so each turn's events are also framed and written to a client.
// --floor (Anthropic wire): the floor server (bench/floor-server.ts, from this checkout) runs the same loop in
// every round too (with --together, all three at once on the server core), and each tree is also reported
// as a ratio to the floor measured in its round. Its request shape (system prompt, tool specs) is captured
// from one turn of the current tree first.
// Results: bench/results/<date>-compare-<op>-c<c>[-together].{json,md} (the markdown is also printed).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseLine, requirePositiveIntegers, wantsHelp } from '../config/cli-args.ts';
import { startFakeLlm } from './fake-llm.ts';
import { closedLoop, measured, WarrenClient, type TurnOptions } from './load.ts';
import { openFanout, type SseFanout } from './sse-clients.ts';
import { canPin, pinSelf, startFloor, type ServerHandle, type ServerOptions } from './server-process.ts';
import { round } from './stats.ts';

const USAGE =
  'usage: npx tsx bench/compare.ts --base <checkout dir> [--rounds 5] [--c 10] [--op create|continue] [--duration 4000] [--warmup 2000] [--provider self_hosted|anthropic] [--tokens 8] [--token-delay 0] [--patch-current <json>] [--env-current K=V,...] [--built] [--together] [--sse] [--floor] [--out <dir>]\n';
const argv = process.argv.slice(2);
if (wantsHelp(argv)) {
  process.stdout.write(USAGE);
  process.exit(0);
}
let values;
try {
  ({ values } = parseLine(
    argv,
    {
      base: { type: 'string' },
      rounds: { type: 'string', default: '5' },
      c: { type: 'string', default: '10' },
      op: { type: 'string', default: 'create' },
      duration: { type: 'string', default: '4000' },
      warmup: { type: 'string', default: '2000' },
      provider: { type: 'string', default: 'self_hosted' },
      tokens: { type: 'string', default: '8' },
      'token-delay': { type: 'string', default: '0' },
      'patch-current': { type: 'string', default: '' },
      'env-current': { type: 'string', default: '' },
      together: { type: 'boolean', default: false },
      built: { type: 'boolean', default: false },
      sse: { type: 'boolean', default: false },
      floor: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
    { positionals: false },
  ));
} catch (err) {
  process.stderr.write(`bench/compare.ts: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
  process.exit(1);
}
if (values.base === undefined) {
  process.stderr.write(`bench/compare.ts: --base is required\n${USAGE}`);
  process.exit(1);
}
const here = fileURLToPath(new URL('..', import.meta.url));
const trees = { base: resolve(values.base), current: resolve(here) };
const rounds = Number(values.rounds);
const c = Number(values.c);
const op = values.op === 'continue' ? 'continue' : 'create';
const durationMs = Number(values.duration);
const warmupMs = Number(values.warmup);
const provider = values.provider as TurnOptions['provider'];
const tokens = Number(values.tokens);
const tokenDelayMs = Number(values['token-delay']);
if (!Number.isInteger(tokenDelayMs) || tokenDelayMs < 0) {
  process.stderr.write('--token-delay must be a non-negative integer\n');
  process.exit(1);
}
const patchCurrent = values['patch-current'];
// Read by each tree's bench/server-process.ts (bench/build-server.ts) in this process.
if (!values.built) process.env.WARREN_BENCH_FROM_SOURCE = '1';
const envCurrent: NodeJS.ProcessEnv = {};
for (const pair of values['env-current'] ? values['env-current'].split(',') : []) {
  const eq = pair.indexOf('=');
  if (eq < 1) {
    process.stderr.write(`bench/compare.ts: --env-current wants K=V pairs separated by commas, got ${JSON.stringify(pair)}\n`);
    process.exit(1);
  }
  envCurrent[pair.slice(0, eq)] = pair.slice(eq + 1);
}
const together = values.together;
const sse = values.sse;
if (sse && op !== 'continue') {
  process.stderr.write('bench/compare.ts: --sse needs --op continue (the subscribers open on the pool of sessions)\n');
  process.exit(1);
}
const withFloor = values.floor;
if (withFloor && values.provider !== 'anthropic') {
  process.stderr.write('bench/compare.ts: --floor needs --provider anthropic (the floor speaks the Anthropic Messages wire)\n');
  process.exit(1);
}
const outDir = resolve(values.out ?? join(here, 'bench/results'));
requirePositiveIntegers('bench/compare.ts', { rounds, c, duration: durationMs, warmup: warmupMs, tokens });
const log = (s: string): void => void process.stderr.write(`${s}\n`);
const commitOf = (dir: string): string => {
  try {
    const dirty = execFileSync('git', ['-C', dir, 'status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8' }).trim()
      ? '+dirty'
      : '';
    return execFileSync('git', ['-C', dir, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() + dirty;
  } catch {
    return 'unknown';
  }
};

type Tree = keyof typeof trees;
/** What a round measures: the two trees, and the floor with --floor. */
type Runner = Tree | 'floor';
interface Sample {
  cpuMsPerTurn: number;
  turnsPerSec: number;
  p50: number;
  turns: number;
}

const pin = canPin() && pinSelf(1);
const fake = await startFakeLlm({ tokens, tokenDelayMs });
const wire: TurnOptions = { provider, model: provider === 'anthropic' ? 'claude-bench' : 'bench-model' };
const samples: Record<Runner, Sample[]> = { base: [], current: [], floor: [] };
/** The floor's request fields besides the messages, as the current tree sends them (set with --floor). */
let floorShape: Record<string, unknown> = {};

interface Prepared {
  measure(): Promise<Sample>;
  close(): Promise<void>;
}

/** Starts a tree's server (its own launcher, bench/server-process.ts), or the floor, and warms it up. */
async function prepare(tree: Runner): Promise<Prepared> {
  const root = await mkdtemp(join(tmpdir(), `warren-compare-${tree}-`));
  let server: ServerHandle;
  if (tree === 'floor') server = await startFloor({ dir: root, llmUrl: fake.url, pin, shape: floorShape });
  else {
    const mod = (await import(pathToFileURL(join(trees[tree], 'bench/server-process.ts')).href)) as {
      startServer(o: ServerOptions): Promise<ServerHandle>;
    };
    server = await mod.startServer({ stateRoot: root, llmUrl: fake.url, pin, env: tree === 'current' ? envCurrent : undefined });
  }
  const client = new WarrenClient(server.url, c);
  let fanout: SseFanout | null = null;
  const close = async () => {
    fanout?.close();
    await client.close();
    await server.stop();
    await rm(root, { recursive: true, force: true });
  };
  try {
    if (tree === 'current' && patchCurrent) {
      const res = await fetch(`${server.url}/config`, {
        method: 'PATCH',
        headers: { 'content-type': 'application/json' },
        body: patchCurrent,
      });
      if (!res.ok) throw new Error(`PATCH /config → ${res.status}: ${await res.text()}`);
    }
    const ids: string[] = [];
    await closedLoop(c, warmupMs, async () => {
      ids.push(await client.create('warm-up', wire));
    });
    if (sse) {
      const u = new URL(server.url);
      fanout = await openFanout(u.hostname, Number(u.port), (k) => `/sessions/${ids[k]}/events`, ids.length, 1_000_000, 120_000, {
        maxConnecting: 256,
      });
    }
    let i = 0;
    const turn = op === 'continue' ? () => client.continue(ids[i++ % ids.length], 'and then?') : () => client.create('hello', wire);
    return {
      close,
      async measure() {
        const m = await measured(server, () =>
          closedLoop(c, durationMs, async () => {
            await turn();
          }),
        );
        return { cpuMsPerTurn: m.cpuMsPerOp, turnsPerSec: m.opsPerSec, p50: m.latency.p50, turns: m.ops };
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function measureTree(tree: Runner): Promise<Sample> {
  const p = await prepare(tree);
  try {
    return await p.measure();
  } finally {
    await p.close();
  }
}

/** Every runner in the same window: started and warmed up together, then measured together. */
async function measureTogether(runners: Runner[]): Promise<Map<Runner, Sample>> {
  const prepared = await Promise.allSettled(runners.map((r) => prepare(r)));
  const ready = prepared.flatMap((p) => (p.status === 'fulfilled' ? [p.value] : []));
  try {
    for (const p of prepared) if (p.status === 'rejected') throw p.reason;
    const measures = await Promise.all(ready.map((p) => p.measure()));
    return new Map(runners.map((r, i) => [r, measures[i]]));
  } finally {
    await Promise.all(ready.map((p) => p.close()));
  }
}

/** The current tree's provider request without its messages: what the floor sends beside its history. */
async function captureShape(): Promise<Record<string, unknown>> {
  const root = await mkdtemp(join(tmpdir(), 'warren-compare-shape-'));
  const mod = (await import(pathToFileURL(join(trees.current, 'bench/server-process.ts')).href)) as {
    startServer(o: ServerOptions): Promise<ServerHandle>;
  };
  const server = await mod.startServer({ stateRoot: root, llmUrl: fake.url, pin });
  const client = new WarrenClient(server.url, 1);
  try {
    await client.create('shape', wire);
    const { messages: _, ...shape } = JSON.parse(fake.stats.lastBody) as Record<string, unknown>;
    return shape;
  } finally {
    await client.close();
    await server.stop();
    await rm(root, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const load = (): number => Number(execFileSync('cat', ['/proc/loadavg'], { encoding: 'utf8' }).split(' ')[0]);

const startedAt = new Date();
const loads: number[] = [load()];
const runners: Runner[] = withFloor ? ['base', 'current', 'floor'] : ['base', 'current'];
try {
  if (withFloor) floorShape = await captureShape();
  const report1 = (r: number, tree: Runner, s: Sample) =>
    log(
      `round ${r + 1}/${rounds} ${tree.padEnd(7)} ${op} c=${c}: ${round(s.cpuMsPerTurn)} ms CPU/turn, ${round(s.turnsPerSec)} turns/s, p50 ${round(s.p50)} ms (load ${load()})`,
    );
  for (let r = 0; r < rounds; r++) {
    if (together) {
      const all = await measureTogether(runners);
      for (const tree of runners) {
        samples[tree].push(all.get(tree)!);
        report1(r, tree, all.get(tree)!);
      }
    } else {
      const order: Runner[] = r % 2 === 0 ? runners : [...runners].reverse();
      for (const tree of order) {
        const s = await measureTree(tree);
        samples[tree].push(s);
        report1(r, tree, s);
      }
    }
    loads.push(load());
  }
} finally {
  await fake.close();
}

const summary = (tree: Runner) => ({
  commit: tree === 'floor' ? 'floor' : commitOf(trees[tree]),
  cpuMsPerTurn: round(median(samples[tree].map((s) => s.cpuMsPerTurn))),
  turnsPerSec: round(median(samples[tree].map((s) => s.turnsPerSec))),
  p50: round(median(samples[tree].map((s) => s.p50))),
  samples: samples[tree],
});
const base = summary('base');
const current = summary('current');
const floor = withFloor ? summary('floor') : null;
/** Median over rounds of current ÷ base within the round (each round's pair ran back to back, or at once). */
const pairedRatio = (f: (s: Sample) => number, of: Runner = 'current', to: Runner = 'base'): number =>
  round(median(samples[of].map((s, r) => f(s) / f(samples[to][r]))));
const cpuOf = (s: Sample): number => s.cpuMsPerTurn;
const report = {
  date: startedAt.toISOString(),
  op,
  c,
  rounds,
  durationMs,
  warmupMs,
  provider,
  tokens,
  tokenDelayMs,
  patchCurrent: patchCurrent || null,
  envCurrent: values['env-current'] || null,
  built: values.built,
  together,
  sse,
  pinned: pin,
  loadAverages: loads,
  base,
  current,
  floor,
  // Each tree's CPU per turn over the floor's, median of the per-round ratios (null without --floor).
  floorRatios: withFloor ? { base: pairedRatio(cpuOf, 'base', 'floor'), current: pairedRatio(cpuOf, 'current', 'floor') } : null,
  ratios: {
    cpu: round(current.cpuMsPerTurn / base.cpuMsPerTurn),
    throughput: round(current.turnsPerSec / base.turnsPerSec),
    p50: round(current.p50 / base.p50),
  },
  pairedRatios: { cpu: pairedRatio((s) => s.cpuMsPerTurn), throughput: pairedRatio((s) => s.turnsPerSec), p50: pairedRatio((s) => s.p50) },
};
const md = [
  `# Turn cost: current vs base (${startedAt.toISOString()})`,
  '',
  `- ${op}+turn closed loop, c=${c} per server, ${rounds} rounds (${together ? `${withFloor ? 'both servers and the floor' : 'both servers'} at once, sharing the server core` : 'order alternating'}), ${durationMs} ms windows after ${warmupMs} ms warm-up, ${provider} wire, ${tokens} tokens/reply${tokenDelayMs ? ` ${tokenDelayMs} ms apart` : ' in one write'}, lmdb, uWS${sse ? ', one SSE subscriber per session of the pool' : ''}.`,
  `- Pinning: ${pin ? 'server core 0, load generator + fake LLM core 1' : 'off'}; 1-minute load averages: ${loads.join(', ')}.`,
  ...(patchCurrent ? [`- Config patch on the current tree only: \`${patchCurrent}\`.`] : []),
  `- Servers run ${values.built ? 'compiled (bench/build-server.ts), as npm start runs' : 'from source through tsx'}.`,
  ...(values['env-current'] ? [`- Environment of the current tree's server only: \`${values['env-current']}\`.`] : []),
  '',
  '| tree | commit | CPU ms/turn (median) | turns/s (median) | p50 ms (median) | CPU per round |',
  '|---|---|---|---|---|---|',
  ...runners.map((t) => {
    const s = t === 'base' ? base : t === 'current' ? current : floor!;
    return `| ${t} | \`${s.commit}\` | ${s.cpuMsPerTurn} | ${s.turnsPerSec} | ${s.p50} | ${s.samples.map((x) => round(x.cpuMsPerTurn)).join(', ')} |`;
  }),
  '',
  `Current ÷ base, of the medians: CPU ${report.ratios.cpu}×, throughput ${report.ratios.throughput}×, p50 ${report.ratios.p50}×.`,
  `Current ÷ base, median of the per-round ratios: CPU ${report.pairedRatios.cpu}×, throughput ${report.pairedRatios.throughput}×, p50 ${report.pairedRatios.p50}× (per round: ${samples.current.map((s, r) => round(s.cpuMsPerTurn / samples.base[r].cpuMsPerTurn)).join(', ')}).`,
  ...(report.floorRatios
    ? [
        `CPU per turn × floor, median of the per-round ratios: base ${report.floorRatios.base}×, current ${report.floorRatios.current}× (current per round: ${samples.current.map((s, r) => round(s.cpuMsPerTurn / samples.floor[r].cpuMsPerTurn)).join(', ')}).`,
      ]
    : []),
  '',
].join('\n');
await mkdir(outDir, { recursive: true });
const stem = join(
  outDir,
  `${startedAt.toISOString().slice(0, 10)}-compare-${op}-c${c}${tokenDelayMs ? `-paced${tokenDelayMs}` : ''}${sse ? '-sse' : ''}${together ? '-together' : ''}${withFloor ? '-floor' : ''}`,
);
await writeFile(`${stem}.json`, `${JSON.stringify(report, null, 2)}\n`);
await writeFile(`${stem}.md`, md);
process.stdout.write(md);
log(`wrote ${stem}.json and .md`);
