// test/helpers/realm-campaign.ts: the multi-process campaign of test/integration/realm-cluster.test.ts. Several
// `warren serve` processes on one realm (lmdb, sqlite or postgres); workers drive turns on their own sessions
// through a random live process each time, as fast as the client can; a killer sends SIGKILL to a random
// process now and then and starts a fresh one in its place. After every acknowledged turn a read from another
// random process must already show it (no stale read). At the end every session's history is read from every
// live process: identical everywhere, every acknowledged turn exactly once, nothing twice, nothing unknown.
import type { TestContext } from 'node:test';
import { startServerProcess, writeRealmConfig, type ServerProcess } from './server-process.ts';
import { intIn, parseHistory, prng, request, type Reply, type Rng } from './durability-tools.ts';

export type ClusterBackendName = 'lmdb' | 'sqlite' | 'postgres';

export interface CampaignOptions {
  backend: ClusterBackendName;
  stateRoot: string;
  realm: string;
  seed: number;
  processes: number;
  workers: number;
  /** Acknowledged turns to reach before the campaign stops. */
  turns: number;
  /** SIGKILLs spread over the campaign (each followed by a restart). */
  kills: number;
  env?: NodeJS.ProcessEnv;
  t: TestContext;
}

export interface CampaignResult {
  acked: number;
  unknown: number;
  kills: number;
  lost: number;
  duplicates: number;
  staleReads: number;
  problems: string[];
}

interface Turn {
  prompt: string;
  acked: boolean;
}
interface Sess {
  id: string;
  turns: Turn[];
  /** The turn died in flight with its owner: the session holds for a resume (409 SESSION_NOT_RUNNING). */
  held: boolean;
}

const LEASE_MS = 1500;
/** How long one request may keep failing (owner dying, lease moving) before the campaign reports it. */
const SETTLE_MS = 20_000;

async function tryRequest(base: string, method: string, path: string, body?: unknown): Promise<Reply | 'down'> {
  try {
    return await request(base, method, path, body);
  } catch {
    return 'down';
  }
}

/** Writes the realm config the campaign's processes share (scripted replies with small random delays). */
export async function writeCampaignConfig(stateRoot: string, realm: string, rng: Rng): Promise<void> {
  const replies = Array.from({ length: 400 }, (_, i) => ({ chunks: [`r${i} `, 'done'], delay_ms: intIn(rng, 2, 30) }));
  await writeRealmConfig(stateRoot, realm, { cluster: { lease_ms: LEASE_MS }, providers: { scripted: { replies } } });
}

export async function runCampaign(o: CampaignOptions): Promise<CampaignResult> {
  const rng = prng(o.seed);
  await writeCampaignConfig(o.stateRoot, o.realm, rng);
  const start = (): Promise<ServerProcess> =>
    startServerProcess({ stateRoot: o.stateRoot, realm: o.realm, backend: o.backend, env: o.env, startTimeoutMs: 90_000, t: o.t });
  // The first process creates the realm; the others join it.
  const nodes: ServerProcess[] = [await start()];
  nodes.push(...(await Promise.all(Array.from({ length: o.processes - 1 }, start))));
  const alive = (): ServerProcess[] => nodes.filter((n) => !n.hasExited());
  const pick = (not?: ServerProcess): ServerProcess => {
    const pool = alive().filter((n) => n !== not);
    const from = pool.length ? pool : alive();
    return from[Math.floor(rng() * from.length)];
  };
  const result: CampaignResult = { acked: 0, unknown: 0, kills: 0, lost: 0, duplicates: 0, staleReads: 0, problems: [] };
  const sessions: Sess[][] = Array.from({ length: o.workers }, () => []);
  let counter = 0;

  const create = async (w: number): Promise<void> => {
    const deadline = Date.now() + SETTLE_MS;
    while (Date.now() < deadline) {
      const prompt = `c-${w}-${counter++}`;
      const reply = await tryRequest(pick().url, 'POST', '/sessions', { prompt, provider: 'scripted' });
      if (reply !== 'down' && reply.status === 200) {
        sessions[w].push({ id: reply.body.session_id, turns: [{ prompt, acked: true }], held: false });
        result.acked++;
        return;
      }
      if (reply !== 'down' && reply.status >= 500 && reply.status !== 503)
        result.problems.push(`create: ${reply.status} ${JSON.stringify(reply.body)}`);
    }
    throw new Error(`worker ${w}: no process created a session within ${SETTLE_MS} ms`);
  };

  /** Reads the session's history from `node` until it answers; undefined when the node died meanwhile. */
  const history = async (node: ServerProcess, id: string): Promise<string[] | undefined> => {
    const deadline = Date.now() + SETTLE_MS;
    while (!node.hasExited()) {
      const reply = await tryRequest(node.url, 'GET', `/sessions/${id}/history`);
      if (reply !== 'down' && reply.status === 200) {
        const parsed = parseHistory(reply.body.messages);
        if (parsed.problem) result.problems.push(`${id} from pid ${node.pid}: ${parsed.problem}`);
        return parsed.turns.map((x) => x.prompt);
      }
      if (reply !== 'down' && reply.status !== 503) {
        result.problems.push(`history of ${id} from pid ${node.pid}: ${reply.status} ${JSON.stringify(reply.body)}`);
        return undefined;
      }
      if (Date.now() > deadline) throw new Error(`history of ${id} from pid ${node.pid}: no answer within ${SETTLE_MS} ms`);
      // The session is moving between owners (503): ask again shortly, within the deadline above.
      await new Promise((r) => setTimeout(r, 25));
    }
    return undefined;
  };

  // Turns in flight per process: the killer prefers a process that is serving one right now.
  const inFlight = new Map<ServerProcess, number>();
  const killsAt = Array.from({ length: o.kills }, (_, i) => Math.floor(((i + 1) * o.turns) / (o.kills + 1)));
  let killing: Promise<void> = Promise.resolve();
  const maybeKill = (): void => {
    if (killsAt.length === 0 || result.acked < killsAt[0]) return;
    killsAt.shift();
    killing = killing.then(async () => {
      const busy = alive().filter((n) => (inFlight.get(n) ?? 0) > 0);
      const pool = busy.length ? busy : alive();
      const victim = pool[Math.floor(rng() * pool.length)];
      await victim.kill('SIGKILL');
      result.kills++;
      nodes[nodes.indexOf(victim)] = await start();
    });
  };

  const worker = async (w: number): Promise<void> => {
    await create(w);
    await create(w);
    while (result.acked < o.turns) {
      const usable = sessions[w].filter((s) => !s.held);
      if (usable.length === 0) {
        await create(w);
        continue;
      }
      const sess = usable[Math.floor(rng() * usable.length)];
      const via = pick();
      const turn: Turn = { prompt: `p-${w}-${counter++}`, acked: false };
      sess.turns.push(turn);
      inFlight.set(via, (inFlight.get(via) ?? 0) + 1);
      // Once a kill is due, it lands while this turn is being served.
      if (killsAt.length && result.acked >= killsAt[0]) maybeKill();
      const reply = await tryRequest(via.url, 'POST', `/sessions/${sess.id}/messages`, { session_id: sess.id, prompt: turn.prompt });
      inFlight.set(via, (inFlight.get(via) ?? 1) - 1);
      if (reply === 'down' || reply.status !== 200) {
        result.unknown++;
        if (reply !== 'down' && reply.status === 409 && reply.body?.code === 'SESSION_NOT_RUNNING') sess.held = true;
        else if (reply !== 'down' && reply.status >= 500 && reply.status !== 503)
          result.problems.push(`${turn.prompt}: ${reply.status} ${JSON.stringify(reply.body)}`);
        continue;
      }
      turn.acked = true;
      result.acked++;
      // No stale read: another process already serves the acknowledged turn.
      const reader = pick(via);
      const seen = await history(reader, sess.id);
      if (seen && !seen.includes(turn.prompt)) {
        result.staleReads++;
        result.problems.push(`stale read: pid ${reader.pid} served ${sess.id} without ${turn.prompt} after its 200 from pid ${via.pid}`);
      }
    }
  };
  await Promise.all(Array.from({ length: o.workers }, (_, w) => worker(w)));
  await killing;

  // Every session from every live process: the same history, every acknowledged turn once, nothing unknown.
  for (const sess of sessions.flat()) {
    const views = new Map<number, string[]>();
    for (const node of alive()) {
      const seen = await history(node, sess.id);
      if (seen) views.set(node.pid, seen);
    }
    const [first] = views.values();
    if (!first) {
      result.problems.push(`${sess.id}: no process served its history`);
      continue;
    }
    for (const [pid, seen] of views) {
      if (JSON.stringify(seen) !== JSON.stringify(first)) result.problems.push(`${sess.id}: pid ${pid} serves ${seen}, another ${first}`);
    }
    const asked = new Set(sess.turns.map((x) => x.prompt));
    for (const p of first) if (!asked.has(p)) result.problems.push(`${sess.id}: unknown prompt ${p}`);
    result.duplicates += first.length - new Set(first).size;
    for (const turn of sess.turns) {
      const n = first.filter((p) => p === turn.prompt).length;
      if (turn.acked && n === 0) {
        result.lost++;
        result.problems.push(`${sess.id}: acknowledged turn ${turn.prompt} lost`);
      }
    }
  }
  if (result.duplicates) result.problems.push(`${result.duplicates} turns committed twice`);
  await Promise.all(alive().map((n) => n.kill('SIGTERM')));
  return result;
}

export const seededRandom = (): number => (Date.now() ^ (process.pid << 8)) >>> 0;
export { prng };
