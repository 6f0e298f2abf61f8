// bench/scenarios/cluster.ts: scale-out on PostgreSQL. The create+turn closed loop spread round-robin over
// 1, 2 and 3 Warren nodes sharing one embedded PostgreSQL realm, beside one node on LMDB. CPU per turn is
// the sum over the Warren processes (the PostgreSQL server's own CPU is not counted). On the 2-core dev
// machine the nodes, the database, the load generator and the fake LLM share the cores, so the rows say
// what bounds a node's turn (its own CPU, the database round trips), not what a real cluster would reach.
import { startEmbeddedPostgres } from '../../test/helpers/embedded-postgres.ts';
import { closedLoop, WarrenClient, type LoopResult } from '../load.ts';
import { withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult } from '../scenario.ts';
import { startServer, type ServerHandle } from '../server-process.ts';
import { round } from '../stats.ts';

const COLUMNS = ['setup', 'nodes', 'c', 'turns/s', 'p50 ms', 'p99 ms', 'Warren CPU ms/turn', 'turns', 'errors'];

async function measureSpread(ctx: BenchContext, servers: ServerHandle[], c: number): Promise<{ loop: LoopResult; cpuMs: number }> {
  const clients = servers.map((s) => new WarrenClient(s.url, c));
  try {
    let next = 0;
    const op = async (): Promise<void> => {
      await clients[next++ % clients.length].create('hello', { provider: ctx.provider });
    };
    await closedLoop(Math.min(c, 8), ctx.warmupMs, op);
    const before = await Promise.all(servers.map((s) => s.cpuMs()));
    const loop = await closedLoop(c, ctx.durationMs, op);
    const after = await Promise.all(servers.map((s) => s.cpuMs()));
    return { loop, cpuMs: after.reduce((sum, a, i) => sum + a.total - before[i].total, 0) };
  } finally {
    await Promise.all(clients.map((cl) => cl.close()));
  }
}

function row(setup: string, nodes: number, c: number, m: { loop: LoopResult; cpuMs: number }): Row {
  return {
    setup,
    nodes,
    c,
    'turns/s': round(m.loop.opsPerSec),
    'p50 ms': round(m.loop.latency.p50),
    'p99 ms': round(m.loop.latency.p99),
    'Warren CPU ms/turn': m.loop.ops ? round(m.cpuMs / m.loop.ops) : null,
    turns: m.loop.ops,
    errors: m.loop.errors,
  };
}

export const clusterScenario: Scenario = {
  id: 'cluster',
  title: 'Scale-out: create+turn over 1, 2 and 3 nodes on one PostgreSQL, beside one node on LMDB',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    const c = ctx.quick ? 4 : 10;
    const rows: Row[] = [];
    const notes: string[] = [
      `Closed loop c=${c}, requests round-robin over the nodes; each create+turn lands on the node that owns the new session (no forwarding).`,
    ];
    await withTempRoot(ctx, async (root) => {
      const lmdb = await startServer({ stateRoot: root, realm: 'lmdb', llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
      try {
        const m = await measureSpread(ctx, [lmdb], c);
        ctx.log(`  lmdb 1 node: ${round(m.loop.opsPerSec)} turns/s, ${round(m.cpuMs / Math.max(1, m.loop.ops))} ms CPU/turn`);
        rows.push(row('lmdb', 1, c, m));
      } finally {
        await lmdb.stop();
      }
    });
    const pg = await startEmbeddedPostgres();
    if (!pg.ok) {
      notes.push(`PostgreSQL rows skipped: ${pg.reason}`);
      return { id: 'cluster', title: this.title, columns: COLUMNS, rows, notes, targets: [] };
    }
    try {
      for (const n of [1, 2, 3]) {
        const url = await pg.server.createDatabase(`warren_bench_${n}`);
        await withTempRoot(ctx, async (root) => {
          const servers: ServerHandle[] = [];
          try {
            for (let i = 0; i < n; i++) {
              servers.push(
                await startServer({
                  stateRoot: root,
                  realm: 'cluster',
                  backend: 'postgres',
                  env: { WARREN_DATABASE_URL: url },
                  llmUrl: ctx.fake.url,
                  pin: ctx.pin,
                  nodeFlags: ctx.nodeFlags,
                }),
              );
            }
            const m = await measureSpread(ctx, servers, c);
            ctx.log(`  postgres ${n} node(s): ${round(m.loop.opsPerSec)} turns/s, ${round(m.cpuMs / Math.max(1, m.loop.ops))} ms CPU/turn`);
            rows.push(row('postgres', n, c, m));
          } finally {
            await Promise.all(servers.map((s) => s.stop()));
          }
        });
      }
    } finally {
      await pg.server.stop();
    }
    notes.push('Warren CPU sums utime+stime of every node; the PostgreSQL server (fsync on, one embedded instance) is not counted.');
    if (ctx.pin)
      notes.push('Pinned: every node runs on core 0, so more nodes share one core; the rows show the per-turn cost, not scaling.');
    return { id: 'cluster', title: this.title, columns: COLUMNS, rows, notes, targets: [] };
  },
};
