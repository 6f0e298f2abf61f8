// test/integration/cluster-kill.test.ts: three `warren serve` processes on one embedded PostgreSQL realm, a
// client spreading turns, reads and SSE over them, and one node killed with SIGKILL mid-load. Claims: every
// acknowledged turn is in its session's history exactly once and no turn is ever committed twice; the
// sessions the dead node hosted are usable on the survivors once its leases expire (a new turn answers 200,
// or 409 SESSION_NOT_RUNNING with the durable resume hold when its turn died in flight); turns, SSE and
// Last-Event-ID replay answer from every node. Short by default; WARREN_CLUSTER_LONG=1 runs a longer load
// with a kill and restart per round (WARREN_CLUSTER_ROUNDS). Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { envInt, killSeeds, prng, intIn, request, parseHistory, type Reply } from '../helpers/durability-tools.ts';
import { openEvents, kindsOf } from '../helpers/sse-client.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';

const LONG = process.env.WARREN_CLUSTER_LONG === '1';
/** A fixed seed (its kill plan replays every run) and one random seed; WARREN_CLUSTER_SEED pins one. */
const SEEDS = killSeeds('WARREN_CLUSTER_SEED', [0x5eed0c01]);
const ROUNDS = envInt('WARREN_CLUSTER_ROUNDS') ?? (LONG ? 4 : 1);
const WORKERS = LONG ? 6 : 3;
/** Acknowledged turns before the kill, and turns each worker runs after it, per round. */
const BEFORE_KILL = LONG ? 40 : 9;
const AFTER_KILL = LONG ? 8 : 3;
const LEASE_MS = 1500;

const pgServer = await testPostgres();

interface Turn {
  prompt: string;
  outcome: 'acked' | 'unknown';
}
interface Sess {
  id: string;
  turns: Turn[];
  held: boolean;
}

async function tryRequest(base: string, method: string, path: string, body?: unknown): Promise<Reply | 'down'> {
  try {
    return await request(base, method, path, body);
  } catch {
    return 'down';
  }
}

if (!pgServer.ok) {
  describe('cluster kill', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('three nodes on one postgres realm, one killed mid-load', () => {
    for (const seed of SEEDS)
      it(
        `keeps every acknowledged turn, commits none twice, and serves the dead node's sessions from the survivors (seed ${seed})`,
        { timeout: 120_000 },
        async (t) => {
          t.diagnostic(`seed=${seed} rounds=${ROUNDS} (reproduce with WARREN_CLUSTER_SEED=${seed})`);
          const rng = prng(seed);
          const url = await server.createDatabase('warren_kill');
          const dir = await tmpDir('warren-cluster-');
          t.after(() => dir.cleanup());
          const realm = 'cluster';
          const replies = Array.from({ length: 2000 }, (_, i) => ({ chunks: [`r${i} `, 'done'], delay_ms: intIn(rng, 0, 15) }));
          await writeRealmConfig(dir.path, realm, { cluster: { lease_ms: LEASE_MS }, providers: { scripted: { replies } } });
          const env = { ...process.env, WARREN_DATABASE_URL: url };
          const start = (): Promise<ServerProcess> => startServerProcess({ stateRoot: dir.path, realm, backend: 'postgres', env, t });
          const nodes: ServerProcess[] = [];
          for (let i = 0; i < 3; i++) nodes.push(await start());
          const alive = (): ServerProcess[] => nodes.filter((n) => !n.hasExited());
          const pick = (): ServerProcess => alive()[Math.floor(rng() * alive().length)];

          // Sessions created round-robin, so each node owns some.
          const sessions: Sess[] = [];
          for (let i = 0; i < WORKERS * 2; i++) {
            const prompt = `p-create-${i}`;
            const reply = await request(nodes[i % 3].url, 'POST', '/sessions', { prompt, provider: 'scripted' });
            assert.equal(reply.status, 200, JSON.stringify(reply.body));
            sessions.push({ id: reply.body.session_id, turns: [{ prompt, outcome: 'acked' }], held: false });
          }

          // SSE from a node that does not own the session sees its turns, and replays from another node.
          const watched = sessions[0];
          const sse = await openEvents(nodes[1].url, watched.id);
          const sseTurn = await request(nodes[2].url, 'POST', `/sessions/${watched.id}/messages`, {
            session_id: watched.id,
            prompt: 'p-sse',
          });
          assert.equal(sseTurn.status, 200, JSON.stringify(sseTurn.body));
          watched.turns.push({ prompt: 'p-sse', outcome: 'acked' });
          await sse.until(
            (c) => kindsOf(c.envelopes()).filter((k) => k === 'run_completed').length >= 1,
            'run_completed over SSE on a non-owner',
          );
          const seen = sse.envelopes();
          sse.close();
          const replay = await openEvents(nodes[2].url, watched.id, { 'last-event-id': String(seen[0].seq) });
          await replay.until((c) => c.envelopes().some((e) => e.seq >= seen.at(-1)!.seq), 'Last-Event-ID replay from another node');
          // The ledger keeps a committed turn's text_complete, not its deltas: the replay is the live stream's durable part.
          const replayed = replay
            .envelopes()
            .map((e) => e.seq)
            .filter((s) => s <= seen.at(-1)!.seq);
          assert.ok(
            replayed.every((s, i) => s > seen[0].seq && (i === 0 || s > replayed[i - 1]) && seen.some((e) => e.seq === s)),
            `replayed ${replayed}`,
          );
          assert.equal(replayed.at(-1), seen.at(-1)!.seq);
          replay.close();

          let counter = 0;
          const forbidden: string[] = [];
          for (let round = 0; round < ROUNDS; round++) {
            let acked = 0;
            let killAt = 0;
            let victim: ServerProcess | undefined;
            let kill!: () => void;
            const killed = new Promise<void>((resolve) => (kill = resolve));
            const worker = async (w: number): Promise<void> => {
              let after = 0;
              while (after < AFTER_KILL) {
                const sess = sessions[w * 2 + Math.floor(rng() * 2)];
                if (sess.held) {
                  if (sessions[w * 2].held && sessions[w * 2 + 1].held) return;
                  continue;
                }
                const prompt = `p-${round}-${w}-${counter++}`;
                const turn: Turn = { prompt, outcome: 'unknown' };
                sess.turns.push(turn);
                const reply = await tryRequest(pick().url, 'POST', `/sessions/${sess.id}/messages`, { session_id: sess.id, prompt });
                if (reply !== 'down') {
                  if (reply.status === 200) {
                    turn.outcome = 'acked';
                    if (++acked === BEFORE_KILL) kill();
                  } else if (reply.status === 409 && reply.body?.code === 'SESSION_NOT_RUNNING') sess.held = true;
                  else if (reply.status >= 500 && reply.status !== 503)
                    forbidden.push(`${prompt}: ${reply.status} ${JSON.stringify(reply.body)}`);
                }
                if (victim) after++;
              }
            };
            const load = Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
            await killed;
            victim = alive()[Math.floor(rng() * alive().length)];
            killAt = performance.now();
            await victim.kill('SIGKILL');
            await load;
            t.diagnostic(
              `round ${round}: killed pid ${victim.pid} after ${acked} acked turns; load finished ${Math.round(performance.now() - killAt)} ms later`,
            );
            if (round < ROUNDS - 1) nodes[nodes.indexOf(victim)] = await start();
          }
          assert.deepEqual(forbidden, []);

          // Every session, read from a survivor: acked turns exactly once, nothing twice, and usable again.
          for (const sess of sessions) {
            const node = pick();
            const hist = await request(node.url, 'GET', `/sessions/${sess.id}/history`);
            assert.equal(hist.status, 200, JSON.stringify(hist.body));
            const parsed = parseHistory(hist.body.messages);
            assert.equal(parsed.problem, undefined, parsed.problem);
            const prompts = parsed.turns.map((x) => x.prompt);
            assert.equal(new Set(prompts).size, prompts.length, `a turn committed twice in ${sess.id}: ${prompts}`);
            for (const turn of sess.turns) {
              if (turn.outcome === 'acked') assert.ok(prompts.includes(turn.prompt), `acked turn ${turn.prompt} missing from ${sess.id}`);
            }
            const asked = new Set(sess.turns.map((x) => x.prompt));
            for (const p of prompts) assert.ok(asked.has(p), `unknown prompt ${p} in ${sess.id}`);
            const again = await request(node.url, 'POST', `/sessions/${sess.id}/messages`, {
              session_id: sess.id,
              prompt: `p-final-${sess.id}`,
            });
            assert.ok(
              again.status === 200 || (again.status === 409 && again.body.code === 'SESSION_NOT_RUNNING'),
              `${sess.id}: ${again.status} ${JSON.stringify(again.body)}`,
            );
          }
          const info = await request(pick().url, 'GET', '/runtime/host_info');
          assert.equal(info.body.cluster.database.state, 'ok');
          t.diagnostic(
            `acked turns: ${sessions.flatMap((s) => s.turns).filter((x) => x.outcome === 'acked').length}; takeovers on the reporting node: ${info.body.cluster.lease_takeovers}`,
          );
        },
      );
  });
}
