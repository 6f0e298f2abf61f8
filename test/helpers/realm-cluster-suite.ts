// test/helpers/realm-cluster-suite.ts (run by test/integration/realm-cluster-<backend>.test.ts): a realm shared by several `warren serve` processes is a cluster, on
// every backend several processes can open (lmdb, sqlite, postgres). Claims, per backend: a session created
// on A, continued on B, then on A keeps all three turns, and every process reads each commit at once (the
// issue's reproduction); under a kill -9 campaign (three processes, turns alternating between them as fast as
// the client goes, a random process killed and replaced now and then) every acknowledged turn is present
// exactly once, every process serves the same history, and no read after a 200 misses its turn. jsonl and
// memory realms refuse a second process with a one-line reason.
// Short by default (one fixed seed); WARREN_LONG_CAMPAIGNS=1 runs the fixed seed list plus a logged random
// seed with more turns and kills (WARREN_CLUSTER_SEED replays one seed).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { startServerProcess, writeRealmConfig, type ServerProcess } from './server-process.ts';
import { tmpDir } from './tmp-dir.ts';
import { envInt, parseHistory, request } from './durability-tools.ts';
import { runCampaign, seededRandom, type ClusterBackendName } from './realm-campaign.ts';
import { testPostgres } from './postgres.ts';

const LONG = process.env.WARREN_LONG_CAMPAIGNS === '1';
/** A process start may take long on a loaded machine; the start's own deadline. */
const START_MS = 90_000;
const FIXED_SEEDS = [11, 2026, 424242, 0xc0ffee];
const PINNED = envInt('WARREN_CLUSTER_SEED');
const SEEDS = PINNED !== undefined ? [PINNED] : LONG ? [...FIXED_SEEDS, seededRandom()] : [FIXED_SEEDS[0]];

type Backend = { name: ClusterBackendName; skip?: string; env?: () => Promise<NodeJS.ProcessEnv> };

/** One backend's suite; postgres starts its embedded server only when its suite is asked for. */
async function backendOf(name: ClusterBackendName): Promise<Backend> {
  if (name !== 'postgres') return { name };
  const pg = await testPostgres();
  return pg.ok
    ? { name, env: async () => ({ ...process.env, WARREN_DATABASE_URL: await pg.server.createDatabase() }) }
    : { name, skip: `postgres tests skipped: ${pg.reason}` };
}

const prompts = async (node: ServerProcess, id: string): Promise<string[]> => {
  const reply = await request(node.url, 'GET', `/sessions/${id}/history`);
  assert.equal(reply.status, 200, JSON.stringify(reply.body));
  const parsed = parseHistory(reply.body.messages);
  assert.equal(parsed.problem, undefined, parsed.problem);
  return parsed.turns.map((x) => x.prompt);
};

async function realmDir(t: TestContext): Promise<string> {
  const dir = await tmpDir('warren-realm-cluster-');
  t.after(() => dir.cleanup());
  return dir.path;
}

/**
 * The suite for these backends (one test file per backend, so each campaign has its own file time limit and
 * the files run beside the rest of the suite); `singleProcess` adds the jsonl/memory refusal checks.
 */
export async function realmClusterSuite(names: ClusterBackendName[], singleProcess = false): Promise<void> {
  for (const backend of await Promise.all(names.map(backendOf))) {
    describe(`processes sharing one ${backend.name} realm`, { skip: backend.skip }, () => {
      it('a turn acknowledged by one process is never lost by another, and reads never lag a commit', { timeout: 300_000 }, async (t) => {
        const root = await realmDir(t);
        const env = await backend.env?.();
        // Lossless ledger mode: committed deltas stay, so the shared ledger's seqs are checked one by one.
        await writeRealmConfig(root, 'shared', {
          ledger: { keep_text_deltas: true },
          providers: { scripted: { replies: [{ text: 'r1' }, { text: 'r2' }, { text: 'r3' }] } },
        });
        const start = (hint: ClusterBackendName) =>
          startServerProcess({ stateRoot: root, realm: 'shared', backend: hint, env, startTimeoutMs: START_MS, t });
        const a = await start(backend.name);
        // B asks for another backend: the realm's manifest pins the first one.
        const b = await start(backend.name === 'lmdb' ? 'sqlite' : 'lmdb');
        for (const node of [a, b]) assert.equal((await request(node.url, 'GET', '/config')).body.backend, backend.name);
        const created = await request(a.url, 'POST', '/sessions', { prompt: 'one', provider: 'scripted' });
        assert.equal(created.status, 200, JSON.stringify(created.body));
        const id = created.body.session_id as string;
        const onB = await request(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
        assert.equal(onB.status, 200, JSON.stringify(onB.body));
        // A reads B's commit at once: the session, its history and its list row.
        assert.deepEqual(await prompts(a, id), ['one', 'two']);
        const rowOnB = await request(b.url, 'GET', `/sessions/${id}`);
        const row = await request(a.url, 'GET', `/sessions/${id}`);
        assert.equal(row.status, 200, JSON.stringify(row.body));
        assert.deepEqual(row.body, rowOnB.body, 'A serves the record B committed');
        assert.equal(row.body.message_count, 4);
        const listed = await request(a.url, 'GET', '/sessions');
        const listRow = listed.body.sessions.find((s: { session_id: string }) => s.session_id === id);
        assert.equal(listRow?.message_count, 4, `A's list row: ${JSON.stringify(listRow)}`);
        const onA = await request(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'three' });
        assert.equal(onA.status, 200, JSON.stringify(onA.body));
        assert.deepEqual(await prompts(a, id), ['one', 'two', 'three']);
        assert.deepEqual(await prompts(b, id), ['one', 'two', 'three']);
        const ledger = await request(b.url, 'GET', `/sessions/${id}/ledger?limit=1000`);
        assert.equal(ledger.status, 200, JSON.stringify(ledger.body));
        const seqs = (ledger.body.events as Array<{ seq: number }>).map((e) => e.seq);
        assert.ok(seqs.length > 0);
        assert.deepEqual(
          seqs,
          seqs.map((_, i) => i + 1),
          'both processes appended one contiguous ledger',
        );
        const info = await request(b.url, 'GET', '/runtime/host_info');
        assert.equal(info.body.cluster?.database?.state, 'ok', JSON.stringify(info.body.cluster));
        assert.ok(
          info.body.cluster.peers.some((p: { url: string; alive: boolean }) => p.url === a.url && p.alive),
          `B sees A as a live peer: ${JSON.stringify(info.body.cluster.peers)}`,
        );
      });

      for (const seed of SEEDS) {
        it(
          `kill -9 campaign, seed ${seed}: every acknowledged turn once, one history everywhere, no stale read`,
          { timeout: LONG ? 1_800_000 : 300_000 },
          async (t) => {
            t.diagnostic(`backend=${backend.name} seed=${seed} (replay with WARREN_CLUSTER_SEED=${seed})`);
            const result = await runCampaign({
              backend: backend.name,
              stateRoot: await realmDir(t),
              realm: 'campaign',
              seed,
              processes: 3,
              workers: LONG ? 6 : 3,
              turns: LONG ? 600 : 45,
              kills: LONG ? 12 : 2,
              env: await backend.env?.(),
              t,
            });
            t.diagnostic(
              `backend=${backend.name} seed=${seed}: acked=${result.acked} unknown=${result.unknown} kills=${result.kills} lost=${result.lost} duplicates=${result.duplicates} stale=${result.staleReads}`,
            );
            assert.deepEqual(result.problems, []);
            assert.equal(result.lost, 0);
            assert.equal(result.duplicates, 0);
            assert.equal(result.staleReads, 0);
            assert.ok(result.kills >= (LONG ? 12 : 2), `kills: ${result.kills}`);
          },
        );
      }
    });
  }

  if (singleProcess) {
    describe('single-process backends', () => {
      for (const name of ['jsonl', 'memory'] as const) {
        it(`a ${name} realm refuses a second process with a one-line reason`, { timeout: 60_000 }, async (t) => {
          const root = await realmDir(t);
          await startServerProcess({ stateRoot: root, realm: 'solo', backend: name, startTimeoutMs: START_MS, t });
          const second = startServerProcess({ stateRoot: root, realm: 'solo', backend: name, t, startTimeoutMs: START_MS });
          await assert.rejects(second, (err: Error) => {
            assert.match(err.message, new RegExp(`${name} store .* is open in process \\d+: a ${name} realm serves one process`));
            assert.doesNotMatch(err.message.trim(), /\n/, 'one line');
            return true;
          });
        });
      }
    });
  }
}
