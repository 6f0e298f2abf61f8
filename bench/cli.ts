// bench/cli.ts: `warren bench --url <a running Warren>` (main.ts dispatches here). Closed-loop turns
// against a running server: create+turn and/or continue at each concurrency, with the bundled fake LLM
// (started here) or whatever provider the server is configured for (--provider-url). Prints a table
// (or the JSON document with --json) and a progress line on stderr. Server CPU and RSS come from the
// server's GET /metrics (process_cpu_seconds_total, process_resident_memory_bytes) when it answers.
import { writeFile } from 'node:fs/promises';
import { CliArgsError, parseLine, wantsHelp } from '../config/cli-args.ts';
import { startFakeLlm, type FakeLlm } from './fake-llm.ts';
import { closedLoop, WarrenClient, type LoopResult } from './load.ts';
import { round } from './stats.ts';

export const BENCH_HELP = `Usage: warren bench --url <warren base URL> [options]

Load-tests a running Warren server with closed-loop turns (N workers, each sends its next turn when
the previous one answered) and prints turns/s, latency p50/p99, server CPU per turn and RSS.

  --url <url>               the Warren server (required), e.g. http://127.0.0.1:8080
  --scenarios <list>        create (POST /sessions with a prompt: create + first turn) and/or continue
                            (POST /sessions/{id}/messages over a pool of sessions) (default create,continue)
  --concurrency <list>      closed-loop concurrencies (default 1,10)
  --duration <ms>           measured window per step (default 5000)
  --warmup <ms>             warm-up before each step (default 1000)
  --history <n>             continue: turns each pool session has before the window (default 10)
  --wire <name>             anthropic (Messages, default) or self_hosted (Chat Completions)
  --model <id>              model sent with each create (default bench-model)
  --tokens <n>              bundled fake: tokens per reply, each its own SSE frame (default 20)
  --fake-host <host>        bundled fake: listen address (default 127.0.0.1; the server must reach it)
  --fake-port <port>        bundled fake: port (default 0 = any free port)
  --fake-advertise <url>    bundled fake: the base URL the server reaches it at (default: its listen
                            address; set it when listening on 0.0.0.0 for a server on another machine)
  --configure               point the server at the bundled fake for the run (PATCH /config
                            [providers.<wire>] base_url, restored afterwards)
  --provider-url <url>      do not start the fake: the server already points at this provider (a real
                            vendor or your own fake); reported only
  --json                    print the JSON document instead of the table
  --out <file>              also write the JSON document to <file>
  -h, --help                this text

Without --configure or --provider-url the server must already point at the bundled fake, e.g. started
with --fake-port 9999 and [providers.anthropic] base_url = "http://127.0.0.1:9999" in its realm's
config.toml (the anthropic wire also needs ANTHROPIC_API_KEY set to any value; self_hosted needs none).
Figures from a server sharing its machine with the load generator are lower bounds on its capacity.
`;

export interface BenchCliResult {
  code: number;
  stdout: string;
  stderr: string;
}

interface Opts {
  url: string;
  scenarios: Array<'create' | 'continue'>;
  concurrency: number[];
  durationMs: number;
  warmupMs: number;
  history: number;
  wire: 'anthropic' | 'self_hosted';
  model: string;
  tokens: number;
  fakeHost: string;
  fakePort: number;
  fakeAdvertise: string | null;
  configure: boolean;
  providerUrl: string | null;
  json: boolean;
  out: string | null;
}

class Usage extends Error {}

const BENCH_OPTIONS = {
  url: { type: 'string' },
  scenarios: { type: 'string' },
  concurrency: { type: 'string' },
  duration: { type: 'string' },
  warmup: { type: 'string' },
  history: { type: 'string' },
  wire: { type: 'string' },
  model: { type: 'string' },
  tokens: { type: 'string' },
  'fake-host': { type: 'string' },
  'fake-port': { type: 'string' },
  'fake-advertise': { type: 'string' },
  configure: { type: 'boolean' },
  'provider-url': { type: 'string' },
  json: { type: 'boolean' },
  out: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

function parse(argv: string[]): Opts | 'help' {
  if (wantsHelp(argv)) return 'help';
  let v;
  try {
    ({ values: v } = parseLine(argv, BENCH_OPTIONS, { positionals: false }));
  } catch (err) {
    throw err instanceof CliArgsError ? new Usage(err.message) : err;
  }
  const num = (flag: string, x: string | undefined, fallback: number, min = 0): number => {
    if (x === undefined) return fallback;
    const n = Number(x);
    if (!Number.isInteger(n) || n < min) throw new Usage(`${flag} needs an integer >= ${min}`);
    return n;
  };
  const scenarios = v.scenarios === undefined ? ['create', 'continue'] : v.scenarios.split(',').filter(Boolean);
  if (scenarios.length === 0 || scenarios.some((x) => x !== 'create' && x !== 'continue'))
    throw new Usage('--scenarios takes create and/or continue');
  const wire = v.wire ?? 'anthropic';
  if (wire !== 'anthropic' && wire !== 'self_hosted') throw new Usage('--wire must be anthropic or self_hosted');
  const o: Opts = {
    url: (v.url ?? '').replace(/\/+$/, ''),
    scenarios: scenarios as Opts['scenarios'],
    concurrency: v.concurrency === undefined ? [1, 10] : v.concurrency.split(',').map((x) => num('--concurrency', x, 0, 1)),
    durationMs: num('--duration', v.duration, 5000, 1),
    warmupMs: num('--warmup', v.warmup, 1000),
    history: num('--history', v.history, 10, 1),
    wire,
    model: v.model ?? 'bench-model',
    tokens: num('--tokens', v.tokens, 20, 1),
    fakeHost: v['fake-host'] ?? '127.0.0.1',
    fakePort: num('--fake-port', v['fake-port'], 0),
    fakeAdvertise: v['fake-advertise'] === undefined ? null : v['fake-advertise'].replace(/\/+$/, ''),
    configure: v.configure === true,
    providerUrl: v['provider-url'] ?? null,
    json: v.json === true,
    out: v.out ?? null,
  };
  if (!o.url) throw new Usage('--url is required');
  if (!/^https?:\/\//.test(o.url)) throw new Usage('--url must be an http(s) URL');
  if (o.configure && o.providerUrl) throw new Usage('--configure and --provider-url exclude each other');
  if (o.fakeAdvertise && !/^https?:\/\//.test(o.fakeAdvertise)) throw new Usage('--fake-advertise must be an http(s) URL');
  return o;
}

/** CPU seconds and RSS bytes from the server's /metrics, or null when it does not answer them. */
async function serverStats(url: string): Promise<{ cpuS: number; rss: number } | null> {
  try {
    const res = await fetch(`${url}/metrics`);
    if (res.status !== 200) return null;
    const text = await res.text();
    let cpuS = 0;
    let rss = Number.NaN;
    for (const line of text.split('\n')) {
      if (line.startsWith('process_cpu_seconds_total')) cpuS += Number(line.slice(line.lastIndexOf(' ') + 1));
      else if (line.startsWith('process_resident_memory_bytes')) rss = Number(line.slice(line.lastIndexOf(' ') + 1));
    }
    return Number.isFinite(cpuS) && cpuS > 0 ? { cpuS, rss } : null;
  } catch {
    return null;
  }
}

async function json(url: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
}

export interface BenchRow {
  scenario: 'create' | 'continue';
  concurrency: number;
  turns: number;
  errors: number;
  turns_per_s: number;
  p50_ms: number;
  p99_ms: number;
  /** null when the server's /metrics did not answer. */
  server_cpu_ms_per_turn: number | null;
  server_rss_mb: number | null;
  /** continue: mean committed turns per pool session at the end of the window. */
  history_turns?: number;
  first_error?: string;
}

/** Runs one closed loop with a progress line on stderr. */
async function window(
  o: Opts,
  label: string,
  c: number,
  op: (w: number) => Promise<unknown>,
  progress: (line: string) => void,
): Promise<{ r: LoopResult; cpuMs: number | null; rssMB: number | null }> {
  const s0 = await serverStats(o.url);
  let done = 0;
  const t0 = performance.now();
  const tick = setInterval(() => {
    const s = (performance.now() - t0) / 1000;
    progress(`${label} c=${c}: ${round(s)}/${o.durationMs / 1000} s, ${done} turns, ${round(done / s)} turns/s`);
  }, 500);
  try {
    const r = await closedLoop(c, o.durationMs, async (w) => {
      await op(w);
      done++;
    });
    const s1 = await serverStats(o.url);
    return {
      r,
      cpuMs: s0 && s1 && r.ops ? ((s1.cpuS - s0.cpuS) * 1000) / r.ops : null,
      rssMB: s1 && Number.isFinite(s1.rss) ? s1.rss / 2 ** 20 : null,
    };
  } finally {
    clearInterval(tick);
  }
}

function row(scenario: BenchRow['scenario'], c: number, m: Awaited<ReturnType<typeof window>>): BenchRow {
  return {
    scenario,
    concurrency: c,
    turns: m.r.ops,
    errors: m.r.errors,
    turns_per_s: round(m.r.opsPerSec),
    p50_ms: round(m.r.latency.p50),
    p99_ms: round(m.r.latency.p99),
    server_cpu_ms_per_turn: m.cpuMs === null ? null : round(m.cpuMs),
    server_rss_mb: m.rssMB === null ? null : round(m.rssMB),
    ...(m.r.firstError ? { first_error: m.r.firstError } : {}),
  };
}

export function renderTable(rows: BenchRow[]): string {
  const cols = ['scenario', 'c', 'turns/s', 'p50 ms', 'p99 ms', 'server CPU ms/turn', 'RSS MB', 'turns', 'errors'];
  const cell = (v: unknown) => (v === null || v === undefined ? '—' : String(v));
  const lines = rows.map(
    (r) =>
      `| ${[r.scenario + (r.history_turns ? ` (history ${r.history_turns})` : ''), r.concurrency, r.turns_per_s, r.p50_ms, r.p99_ms, r.server_cpu_ms_per_turn, r.server_rss_mb, r.turns, r.errors].map(cell).join(' | ')} |`,
  );
  return `| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n${lines.join('\n')}\n`;
}

/** Runs `warren bench ...`; `err` receives progress (the caller's stderr). */
export async function runBenchCli(argv: string[], err: (text: string) => void = (t) => process.stderr.write(t)): Promise<BenchCliResult> {
  let o: Opts;
  try {
    const p = parse(argv);
    if (p === 'help') return { code: 0, stdout: BENCH_HELP, stderr: '' };
    o = p;
  } catch (e) {
    if (e instanceof Usage) return { code: 2, stdout: '', stderr: `warren bench: ${e.message}\n\n${BENCH_HELP}` };
    throw e;
  }
  const tty = process.stderr.isTTY === true;
  let lastLine = 0;
  const progress = (line: string): void => {
    if (tty) err(`\r${line.padEnd(78)}`);
    else if (performance.now() - lastLine > 2000) {
      lastLine = performance.now();
      err(`${line}\n`);
    }
  };
  const endProgress = (): void => {
    if (tty) err('\n');
  };
  const fake: FakeLlm | null = o.providerUrl ? null : await startFakeLlm({ tokens: o.tokens }, o.fakePort, o.fakeHost);
  const providerUrl = o.providerUrl ?? o.fakeAdvertise ?? fake!.url;
  let restore: (() => Promise<void>) | null = null;
  const client = new WarrenClient(o.url, Math.max(...o.concurrency));
  // Every session this run creates carries bench.run=<run id> (warren.* keys are reserved) and is archived at the end.
  const runId = `run-${Date.now().toString(36)}-${process.pid}`;
  try {
    if (o.configure) {
      const before = await json(o.url, 'GET', '/config');
      if (before.status !== 200) return { code: 1, stdout: '', stderr: `warren bench: GET /config → ${before.status}\n` };
      const prev = (before.body.config as Record<string, Record<string, Record<string, unknown>>> | undefined)?.providers?.[o.wire];
      const section = { base_url: providerUrl, ...(o.wire === 'self_hosted' ? { default_model: o.model } : {}) };
      const patched = await json(o.url, 'PATCH', '/config', { providers: { [o.wire]: section } });
      if (patched.status !== 200)
        return { code: 1, stdout: '', stderr: `warren bench: PATCH /config → ${patched.status}: ${JSON.stringify(patched.body)}\n` };
      restore = async () => {
        const back = prev ? { base_url: prev.base_url ?? null, default_model: prev.default_model ?? null } : null;
        await json(o.url, 'PATCH', '/config', { providers: { [o.wire]: back } });
      };
      err(`warren bench: pointed ${o.url} [providers.${o.wire}] base_url at ${providerUrl} (restored at the end)\n`);
    } else if (fake) {
      err(
        `warren bench: bundled fake LLM at ${fake.url}; the server must point [providers.${o.wire}] base_url at it (or pass --configure)\n`,
      );
    }
    const turn = { provider: o.wire, model: o.model, extra: { labels: { 'bench.run': runId } } };
    // One probe turn: a misconfigured server fails here with its own error, not 1000 times in the loop.
    let probe: string;
    try {
      probe = await client.create('probe', turn);
    } catch (e) {
      return {
        code: 1,
        stdout: '',
        stderr: `warren bench: the probe turn failed: ${e instanceof Error ? e.message : String(e)}\n(is [providers.${o.wire}] base_url of the server pointing at ${providerUrl}? see 'warren bench --help')\n`,
      };
    }
    void probe;
    const rows: BenchRow[] = [];
    for (const c of o.concurrency) {
      if (o.scenarios.includes('create')) {
        if (o.warmupMs) await closedLoop(c, o.warmupMs, () => client.create('warm-up', turn).then(() => undefined));
        const m = await window(o, 'create+turn', c, () => client.create('hello', turn), progress);
        rows.push(row('create', c, m));
      }
      if (o.scenarios.includes('continue')) {
        // Two sessions per worker, each grown to --history turns before the window.
        const slices: string[][] = Array.from({ length: c }, () => []);
        await closedLoop(
          c,
          3_600_000,
          async (w) => {
            const id = await client.create('seed', turn);
            for (let t = 1; t < o.history; t++) await client.continue(id, 'and then?');
            slices[w].push(id);
          },
          c * 2,
        );
        const pool = slices.flat();
        const even = Array.from({ length: c }, (_, w) => pool.filter((_, i) => i % c === w));
        const cursor = new Array<number>(c).fill(0);
        const next = (w: number) => even[w][cursor[w]++ % even[w].length];
        if (o.warmupMs) await closedLoop(c, o.warmupMs, (w) => client.continue(next(w), 'and then?').then(() => undefined));
        const m = await window(o, 'continue', c, (w) => client.continue(next(w), 'and then?'), progress);
        const r = row('continue', c, m);
        r.history_turns = round(o.history + cursor.reduce((a, b) => a + b, 0) / pool.length);
        rows.push(r);
      }
    }
    endProgress();
    const doc = {
      url: o.url,
      started_by: 'warren bench',
      provider: { wire: o.wire, url: providerUrl, bundled_fake: fake !== null, ...(fake ? { tokens_per_reply: o.tokens } : {}) },
      options: {
        scenarios: o.scenarios,
        concurrency: o.concurrency,
        duration_ms: o.durationMs,
        warmup_ms: o.warmupMs,
        history: o.history,
        model: o.model,
      },
      rows,
      totals: { turns: rows.reduce((a, r) => a + r.turns, 0), errors: rows.reduce((a, r) => a + r.errors, 0) },
    };
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    if (o.out) await writeFile(o.out, text);
    return { code: 0, stdout: o.json ? text : renderTable(rows), stderr: '' };
  } finally {
    await client.close();
    await archiveRun(o.url, runId).then(
      (n) => err(`warren bench: archived ${n} sessions labelled bench.run=${runId}\n`),
      (e: unknown) => err(`warren bench: archiving the run's sessions failed: ${e instanceof Error ? e.message : String(e)}\n`),
    );
    await restore?.().catch(() => {});
    await fake?.close();
  }
}

/** Archives every session labelled bench.run=<runId>; resolves with how many. */
async function archiveRun(url: string, runId: string): Promise<number> {
  const ids: string[] = [];
  for (let offset = 0; ; offset += 500) {
    const page = await json(url, 'GET', `/sessions?label=${encodeURIComponent(`bench.run=${runId}`)}&limit=500&offset=${offset}`);
    if (page.status !== 200) throw new Error(`GET /sessions → ${page.status}`);
    const sessions = (page.body.sessions ?? []) as Array<{ session_id: string }>;
    ids.push(...sessions.map((s) => s.session_id));
    if (sessions.length < 500) break;
  }
  for (const id of ids) {
    const res = await json(url, 'DELETE', `/sessions/${id}`);
    if (res.status !== 200) throw new Error(`DELETE /sessions/${id} → ${res.status}`);
  }
  return ids.length;
}
