// bench/scenarios/memory.ts: scenario 4. (a) Memory per resident idle session: sessions made resident by
// create+turn over HTTP, and stored sessions hydrated by GET /sessions/{id}/status; measured after a full
// GC in the server. (b) Turn latency with many stored sessions (pre-populated through the lmdb Store)
// against few. "Resident" = a SessionActor held in the supervisor's registry (actors/supervisor.ts); the
// server runs with idleEvictMs = 1 h and maxResidentSessions above the count, so none is evicted.
import { execFileSync, spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { heapGrowth } from '../heap.ts';
import { closedLoop, measured, WarrenClient, type Measured } from '../load.ts';
import { captureTemplate, populate, type SessionTemplate } from '../populate.ts';
import { check, withServer, withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { prepareRealm, startServer, type NodeMemoryUsage, type ServerHandle } from '../server-process.ts';
import { round } from '../stats.ts';

const KB = 1024;
const MB = 1024 * 1024;

interface Snapshot {
  node: NodeMemoryUsage;
  rssAnon: number;
  rss: number;
}

/**
 * Idle sessions shed their live XState actor, hub and writer after 2 s (createApp's shedAfterMs; the
 * supervisor sweeps every 0.5 s), so a measurement of *idle* sessions waits that out first.
 */
const IDLE_SETTLE_MS = 3_000;

async function snapshot(server: ServerHandle): Promise<Snapshot> {
  await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
  const node = await server.gc();
  const proc = await server.memory();
  return { node, rssAnon: proc.rssAnonBytes, rss: proc.rssBytes };
}

function perSessionRow(how: string, n: number, base: Snapshot, at: Snapshot, seconds: number): Row {
  return {
    measure: `resident idle sessions, ${how}`,
    sessions: n,
    'heapUsed KB/session': round((at.node.heapUsed - base.node.heapUsed) / n / KB),
    'RssAnon KB/session': round((at.rssAnon - base.rssAnon) / n / KB),
    'RSS KB/session': round((at.rss - base.rss) / n / KB),
    'server RSS MB': round(at.rss / MB),
    'p50 ms': null,
    'p99 ms': null,
    'setup s': round(seconds),
  };
}

/** Creates one real session on a throwaway server and reads it back: the shape every stored copy takes. */
async function makeTemplate(ctx: BenchContext): Promise<SessionTemplate> {
  return withTempRoot(ctx, async (root) => {
    const server = await startServer({ stateRoot: root, realm: 'template', llmUrl: ctx.fake.url, pin: ctx.pin });
    const client = new WarrenClient(server.url, 1);
    let id: string;
    try {
      id = await client.create('hello', { provider: ctx.provider });
    } finally {
      await client.close();
      await server.stop();
    }
    return captureTemplate(join(root, 'template'), id);
  });
}

function du(dir: string): number {
  try {
    return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
  } catch {
    return Number.NaN;
  }
}

/** Heap of a restored+started XState session actor and of a session record alone (bench/actor-memory.ts). */
function partsOfASession(template: SessionTemplate, n: number): Row[] {
  const record = (JSON.parse(template.json) as { session: unknown }).session;
  const r = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', fileURLToPath(new URL('../actor-memory.ts', import.meta.url)), String(n), JSON.stringify(record)],
    {
      encoding: 'utf8',
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
    },
  );
  if (r.status !== 0)
    return [{ kind: `actor-memory.ts failed: ${r.stderr.slice(0, 200)}`, 'objects/session': null, 'bytes/session': null }];
  const m = JSON.parse(r.stdout.trim().split('\n').pop()!) as { actorBytes: number; recordBytes: number };
  return [
    {
      kind: 'for comparison, measured alone: XState actor of machines/session-machine.ts restored from the snapshot, started, subscribed',
      'objects/session': null,
      'bytes/session': round(m.actorBytes),
    },
    {
      kind: 'for comparison, measured alone: the session record as a plain JSON object',
      'objects/session': null,
      'bytes/session': round(m.recordBytes),
    },
  ];
}

/** Sessions created over HTTP are measured at most at this count (creating 100,000 takes minutes). */
const MAX_CREATED = 20_000;

/**
 * Resident memory of sessions created by create+turn over HTTP, on one server, read at each of `sizes` as
 * the count grows; with two sizes, also the growth between them per added session (the marginal cost, free
 * of what a server pays once as it warms up: code pages, allocator high-water marks).
 */
async function residentByCreate(ctx: BenchContext, sizes: number[], rows: Row[]): Promise<void> {
  const counts = [...new Set(sizes.map((n) => Math.min(n, MAX_CREATED)))].sort((a, b) => a - b);
  const largest = counts[counts.length - 1];
  await withServer(ctx, { maxResident: largest * 2 }, async (server) => {
    const client = new WarrenClient(server.url, 32);
    try {
      await closedLoop(16, ctx.warmupMs, async () => {
        await client.create('warm-up', { provider: ctx.provider });
      });
      const base = await snapshot(server);
      const t0 = performance.now();
      let made = 0;
      let previous: { n: number; at: Snapshot } | null = null;
      for (const n of counts) {
        const r = await closedLoop(
          32,
          3_600_000,
          async () => {
            await client.create('hello', { provider: ctx.provider });
          },
          n - made,
        );
        if (r.errors) throw new Error(`creating resident sessions failed: ${r.firstError}`);
        made = n;
        const at = await snapshot(server);
        const row = perSessionRow('create+turn over HTTP', n, base, at, (performance.now() - t0) / 1000);
        rows.push(row);
        ctx.log(`  ${n} resident (created): heap ${row['heapUsed KB/session']} KB, RSS ${row['RSS KB/session']} KB per session`);
        if (previous) {
          const step = perSessionRow(
            `create+turn over HTTP, sessions ${previous.n + 1}-${n} only`,
            n - previous.n,
            previous.at,
            at,
            (performance.now() - t0) / 1000,
          );
          rows.push(step);
          ctx.log(`  sessions ${previous.n + 1}-${n}: RSS ${step['RSS KB/session']} KB per added session`);
        }
        previous = { n, at };
      }
    } finally {
      await client.close();
    }
  });
}

/** Heap breakdown: two heap snapshots of a fresh server on the same realm, around hydrating `n` sessions. */
async function heapBreakdown(ctx: BenchContext, root: string, ids: string[], n: number): Promise<Row[]> {
  const server = await startServer({ stateRoot: root, realm: 'hydrate', llmUrl: ctx.fake.url, pin: ctx.pin, maxResident: n * 2 });
  const client = new WarrenClient(server.url, 32);
  const before = join(root, 'before.heapsnapshot');
  const after = join(root, 'after.heapsnapshot');
  try {
    await closedLoop(16, ctx.warmupMs, async () => {
      await client.create('warm-up', { provider: ctx.provider });
    });
    // The warm-up sessions stay resident in both snapshots; the measured ones come from the stored set.
    await server.gc();
    await server.heapSnapshot(before);
    let next = ids.length - n;
    await closedLoop(
      32,
      3_600_000,
      async () => {
        await client.status(ids[next++]);
      },
      n,
    );
    await server.gc();
    await server.heapSnapshot(after);
  } finally {
    await client.close();
    await server.stop();
  }
  const g = await heapGrowth(before, after, n, 20);
  await rm(before, { force: true });
  await rm(after, { force: true });
  ctx.log(`  heap snapshot diff: ${round(g.total)} B per hydrated session`);
  return [
    { kind: 'all heap objects', 'objects/session': null, 'bytes/session': round(g.total) },
    ...g.kinds.map((k) => ({ kind: k.kind, 'objects/session': round(k.countPerSession), 'bytes/session': round(k.bytesPerSession) })),
  ];
}

/** Resident memory of stored sessions hydrated by GET status, at each size (one server, growing). */
async function residentByHydrate(
  ctx: BenchContext,
  template: SessionTemplate,
  sizes: number[],
  rows: Row[],
  breakdown: Row[],
): Promise<Map<number, { heap: number; anon: number }>> {
  const out = new Map<number, { heap: number; anon: number }>();
  const max = Math.max(...sizes);
  await withTempRoot(ctx, async (root) => {
    const realmDir = await prepareRealm(root, 'hydrate', ctx.fake.url);
    const t0 = performance.now();
    const pop = await populate(realmDir, template, max, { sample: max });
    ctx.log(`  populated ${max} stored sessions in ${round(pop.elapsedMs / 1000)} s (${round(pop.perSec)}/s)`);
    const server = await startServer({
      stateRoot: root,
      realm: 'hydrate',
      llmUrl: ctx.fake.url,
      pin: ctx.pin,
      maxResident: max * 2,
      nodeFlags: ctx.nodeFlags,
    });
    const client = new WarrenClient(server.url, 32);
    try {
      // Warm-up on sessions that are not part of the measured set.
      await closedLoop(16, ctx.warmupMs, async () => {
        await client.create('warm-up', { provider: ctx.provider });
      });
      const base = await snapshot(server);
      let next = 0;
      let setup = (performance.now() - t0) / 1000;
      for (const size of [...sizes].sort((a, b) => a - b)) {
        const t1 = performance.now();
        const r = await closedLoop(
          32,
          3_600_000,
          async () => {
            await client.status(pop.sampleIds[next++]);
          },
          size - next,
        );
        if (r.errors) throw new Error(`hydrating sessions failed: ${r.firstError}`);
        const at = await snapshot(server);
        setup += (performance.now() - t1) / 1000;
        const row = perSessionRow('stored, hydrated by GET status', size, base, at, setup);
        row['p50 ms'] = round(r.latency.p50);
        row['p99 ms'] = round(r.latency.p99);
        rows.push(row);
        out.set(size, { heap: Number(row['heapUsed KB/session']), anon: Number(row['RssAnon KB/session']) });
        ctx.log(
          `  ${size} resident (hydrated): heap ${row['heapUsed KB/session']} KB, RssAnon ${row['RssAnon KB/session']} KB per session`,
        );
      }
    } finally {
      await client.close();
      await server.stop();
    }
    // Self sizes from heap snapshots, on a separate server (a snapshot inflates RSS for the rest of a run).
    const n = Math.min(10_000, Math.min(...sizes), Math.floor(pop.sampleIds.length / 2));
    breakdown.push(...(await heapBreakdown(ctx, root, pop.sampleIds, n)));
  });
  return out;
}

/** Turn latency on a realm holding `stored` sessions: create+turn, and continue on cold stored sessions. */
async function storedLatency(ctx: BenchContext, template: SessionTemplate, stored: number, rows: Row[]): Promise<void> {
  await withTempRoot(ctx, async (root) => {
    const realmDir = await prepareRealm(root, 'stored', ctx.fake.url);
    const pop = await populate(realmDir, template, stored, {
      sample: 5000,
      progress: (d) => {
        if (d % 200_000 === 0) ctx.log(`  populated ${d}…`);
      },
    });
    const bytes = du(join(realmDir, 'store'));
    ctx.log(
      `  populated ${stored} stored sessions in ${round(pop.elapsedMs / 1000)} s (${round(pop.perSec)}/s, compaction ${round(pop.compactMs / 1000)} s), store ${round(bytes / MB)} MB`,
    );
    const server = await startServer({ stateRoot: root, realm: 'stored', llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
    const client = new WarrenClient(server.url, 1);
    try {
      await closedLoop(1, ctx.warmupMs, async () => {
        await client.create('warm-up', { provider: ctx.provider });
      });
      const add = (op: string, m: Measured): void => {
        rows.push({
          measure: `turn latency, c=1: ${op}`,
          sessions: stored,
          'heapUsed KB/session': null,
          'RssAnon KB/session': null,
          'RSS KB/session': null,
          'server RSS MB': round(m.rssMB),
          'p50 ms': round(m.latency.p50),
          'p99 ms': round(m.latency.p99),
          'setup s': round(pop.elapsedMs / 1000),
          'store MB': round(bytes / MB),
          'server CPU ms/turn': round(m.cpuMsPerOp),
        });
        ctx.log(`  ${stored} stored, ${op}: p50 ${round(m.latency.p50)} ms, p99 ${round(m.latency.p99)} ms`);
      };
      add(
        'create+turn',
        await measured(server, () =>
          closedLoop(1, ctx.durationMs, async () => {
            await client.create('hello', { provider: ctx.provider });
          }),
        ),
      );
      // Cold: each continue hits a stored session that is not resident (hydrate + turn).
      let i = 0;
      const ids = pop.sampleIds;
      add(
        'continue on a cold stored session (hydrate + turn)',
        await measured(server, () =>
          closedLoop(
            1,
            ctx.durationMs,
            async () => {
              await client.continue(ids[i++ % ids.length], 'hello again');
            },
            ids.length,
          ),
        ),
      );
    } finally {
      await client.close();
      await server.stop();
    }
  });
}

export const memoryScenario: Scenario = {
  id: 'memory',
  title: 'Memory per resident session; turn latency vs stored sessions',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const rows: Row[] = [];
    const template = await makeTemplate(ctx);
    await residentByCreate(ctx, ctx.residentSizes, rows);
    const breakdown: Row[] = [];
    const hydrated = await residentByHydrate(ctx, template, ctx.residentSizes, rows, breakdown);
    breakdown.push(...partsOfASession(template, 10_000));
    for (const stored of ctx.storedSizes) await storedLatency(ctx, template, stored, rows);
    const largest = Math.max(...ctx.residentSizes);
    const at = hydrated.get(largest);
    return {
      id: 'memory',
      title: this.title,
      columns: [
        'measure',
        'sessions',
        'heapUsed KB/session',
        'RssAnon KB/session',
        'RSS KB/session',
        'server RSS MB',
        'p50 ms',
        'p99 ms',
        'server CPU ms/turn',
        'store MB',
        'setup s',
      ],
      rows,
      notes: [
        "Resident = a SessionActor held in the supervisor registry. An idle session sheds its live XState actor, event hub and writer after 2 s (it keeps its record and the machine's persisted snapshot, and wakes into a live actor on its next command), so measurements are taken 3 s after the last command. The server runs with idleEvictMs = 1 h and maxResidentSessions above the count, so nothing is evicted from the registry during the measurement.",
        'Per-session figures are (after − before) / sessions, each read after 4× gc() in the server (node --expose-gc); RssAnon excludes the LMDB file pages mapped into RSS.',
        `Stored sessions are written through the Store (bench/populate.ts: openLmdbStore + commit of putSession and putRows records copied from a session the server wrote), in batches of 2,000, into a scratch environment that is then copied with compaction into the realm's store; the event ledger is not copied. Each stored session holds ${JSON.parse(template.json).rows.length} transcript rows.`,
        'Why compaction: loaded in place, the bulk transactions leave a large LMDB free-page list, and every later commit pays for it until the pages are reused (measured: 42-70 ms of server CPU per create+turn for ~6 s after loading 100k sessions, 150 ms per turn with 1M); a realm grown turn by turn does not carry such a list. See the report notes on bulk writes.',
        'The hydrated sessions are measured on one server as the count grows; the created ones on a fresh server.',
        'Cold continue: each turn hits a stored session that is not resident, so it includes hydration (record, ledger seq and row count reads) before the turn.',
      ],
      extraTables: [
        {
          title: 'What one hydrated idle session adds to the heap (V8 heap snapshots before/after, self sizes, top kinds)',
          columns: ['kind', 'objects/session', 'bytes/session'],
          rows: breakdown,
        },
      ],
      targets: [
        check(`memory per resident idle session at ${largest.toLocaleString('en-US')} (RssAnon)`, at ? at.anon : null, 5, 'KB', 'memory'),
        check(`memory per resident idle session at ${largest.toLocaleString('en-US')} (heapUsed)`, at ? at.heap : null, 5, 'KB', 'memory'),
      ],
    };
  },
};
