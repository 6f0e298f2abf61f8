// bench/scenarios/workgraph.ts: WorkGraph read latency vs graph size. For each size a realm is populated
// through the Store (items with machine snapshots, `blocks` edges, one `created` event per item, the
// namespace high-water mark; batches of 2,000 records per commit), then a fresh server answers: the first
// read (which hydrates the namespace actor), `GET /workgraph/ready?limit=50`, full `GET /workgraph/ready`,
// and `GET /workgraph/snapshot` (every item, edge and ready id), each in a closed loop at c=1.
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { applyToItem, newItemRecord } from '../../actors/workgraph/wg-namespace.ts';
import { HOST_CALLER } from '../../actors/workgraph/wg-host.ts';
import { uuidv7 } from '../../actors/uuidv7.ts';
import { putEdgeOp, putEventOp, putItemOp, putMetaOp } from '../../actors/workgraph/wg-records.ts';
import type { WorkItemFields } from '../../contracts/stored-records.ts';
import type { WorkEdge } from '../../contracts/workgraph.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { StoreOp } from '../../storage/store.ts';
import { closedLoop } from '../load.ts';
import { check, withTempRoot, type BenchContext, type Row, type Scenario, type ScenarioResult, type TargetCheck } from '../scenario.ts';
import { prepareRealm, startServer } from '../server-process.ts';
import { round } from '../stats.ts';

const REALM = 'wg';
const BATCH = 2_000;
const PRIORITIES = ['low', 'medium', 'high'] as const;

/** Writes `n` items: every 4th is blocked by the one before it, every 10th is completed. */
async function populateGraph(realmDir: string, n: number): Promise<number> {
  const store = await openLmdbStore(join(realmDir, 'store'));
  const t0 = performance.now();
  const base = Date.now() - n;
  let seq = 0;
  let ops: StoreOp[] = [];
  let prev = '';
  try {
    for (let i = 0; i < n; i++) {
      const now = base + i;
      const at = new Date(now).toISOString();
      const fields: WorkItemFields = {
        id: `work_${uuidv7(now)}`,
        title: `item ${i}`,
        priority: PRIORITIES[i % 3]!,
        labels: [`team-${i % 8}`],
        created_at: at,
        updated_at: at,
        external_refs: [],
      };
      let rec = newItemRecord(fields, { kind: 'self_attest' });
      if (i % 10 === 0) rec = applyToItem(rec, { type: 'item.close', outcome: 'completed', expectedRevision: 1, by: HOST_CALLER, now }).rec;
      ops.push(putItemOp('default', rec));
      ops.push(putEventOp('default', { seq: ++seq, realm_id: REALM, namespace: 'default', item_id: fields.id, kind: 'created', at }));
      if (i % 4 === 3) {
        const edge: WorkEdge = { realm_id: REALM, namespace: 'default', from_id: prev, to_id: fields.id, kind: 'blocks', created_at: at };
        ops.push(putEdgeOp('default', edge));
        ops.push(
          putEventOp('default', {
            seq: ++seq,
            realm_id: REALM,
            namespace: 'default',
            item_id: prev,
            kind: 'linked',
            at,
            payload: { edge },
          }),
        );
      }
      prev = fields.id;
      if (ops.length >= BATCH) {
        await store.commit([...ops, putMetaOp('default', seq)]);
        ops = [];
      }
    }
    await store.commit([...ops, putMetaOp('default', seq)]);
  } finally {
    await store.close();
  }
  return performance.now() - t0;
}

async function get(pool: Pool, path: string): Promise<number> {
  const res = await pool.request({ method: 'GET', path });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`GET ${path} → ${res.statusCode}: ${text.slice(0, 200)}`);
  return text.length;
}

export const workgraphScenario: Scenario = {
  id: 'workgraph',
  title: 'WorkGraph reads (ready, snapshot) vs graph size',
  async run(ctx: BenchContext): Promise<ScenarioResult> {
    // WARREN_BENCH_WG_SIZES=1000,100000 overrides the sizes (e.g. one 100k smoke check in a quick run).
    const env = process.env.WARREN_BENCH_WG_SIZES?.split(',')
      .map(Number)
      .filter((n) => Number.isInteger(n) && n > 0);
    const sizes = env?.length ? env : ctx.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
    const rows: Row[] = [];
    const targets: TargetCheck[] = [];
    for (const n of sizes) {
      await withTempRoot(ctx, async (root) => {
        const realmDir = await prepareRealm(root, REALM, ctx.fake.url);
        const popMs = await populateGraph(realmDir, n);
        ctx.log(`  workgraph: populated ${n} items in ${round(popMs / 1000)} s`);
        const server = await startServer({ stateRoot: root, realm: REALM, llmUrl: ctx.fake.url, pin: ctx.pin, nodeFlags: ctx.nodeFlags });
        const pool = new Pool(server.url, { connections: 1, headersTimeout: 600_000, bodyTimeout: 600_000 });
        try {
          const h0 = performance.now();
          await get(pool, '/workgraph/ready?limit=1');
          const hydrateMs = performance.now() - h0;
          const measure = async (what: string, path: string, maxOps: number) => {
            let bytes = 0;
            const r = await closedLoop(
              1,
              ctx.durationMs,
              async () => {
                bytes = await get(pool, path);
              },
              maxOps,
            );
            if (r.errors) throw new Error(`${what}: ${r.firstError}`);
            rows.push({
              items: n,
              read: what,
              ops: r.ops,
              'p50 ms': round(r.latency.p50),
              'p99 ms': round(r.latency.p99),
              'response KB': round(bytes / 1024),
              'first read (hydrate) ms': round(hydrateMs),
            });
            ctx.log(`  workgraph n=${n} ${what}: p50 ${round(r.latency.p50)} ms, p99 ${round(r.latency.p99)} ms`);
            return r;
          };
          const ready50 = await measure('ready?limit=50', '/workgraph/ready?limit=50', Number.POSITIVE_INFINITY);
          await measure('ready (all)', '/workgraph/ready', ctx.quick ? 50 : 500);
          const snap = await measure('snapshot', '/workgraph/snapshot', ctx.quick ? 5 : 50);
          if (n === Math.max(...sizes)) {
            targets.push(
              check(`ready?limit=50 p99 at ${n.toLocaleString('en-US')} items`, round(ready50.latency.p99), 100, 'ms', 'workgraph'),
            );
            targets.push(check(`snapshot p50 at ${n.toLocaleString('en-US')} items`, round(snap.latency.p50), 5_000, 'ms', 'workgraph'));
          }
        } finally {
          await pool.close();
          await server.stop();
        }
      });
    }
    return {
      id: 'workgraph',
      title: this.title,
      columns: ['items', 'read', 'ops', 'p50 ms', 'p99 ms', 'response KB', 'first read (hydrate) ms'],
      rows,
      notes: [
        'One namespace; every 4th item is blocked by the previous one, every 10th is completed; 1 + 1/4 events per item.',
        'The namespace actor holds the graph in memory after its first read (hydration reads every item, edge and event record); later reads re-check the stored high-water mark only.',
        'ready is a scan of the items with a per-item blocker check (O(items)); snapshot projects and serializes every non-terminal item.',
      ],
      targets,
    };
  },
};
