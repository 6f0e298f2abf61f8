// test/helpers/shared-realm.ts: in-process cluster nodes on one realm of any backend several processes can
// share (lmdb, sqlite: one state root; postgres: one database). Each node is a real app (createApp) with
// its own scripted provider; the realm's cleanup closes every node, then removes the state root.
import type { TestContext } from 'node:test';
import type { Script } from '../../providers/scripted.ts';
import { bootApp, type TestApp } from './app.ts';
import { skipUnlessRequired } from './absent.ts';
import { testPostgres } from './postgres.ts';
import { tmpDir } from './tmp-dir.ts';
import { within } from './wait.ts';

export type SharedBackend = 'lmdb' | 'sqlite' | 'postgres';
export const SHARED_BACKENDS: readonly SharedBackend[] = ['lmdb', 'sqlite', 'postgres'];

const REALM = 'shared';
const CLOSE_TIMEOUT_MS = 15_000;

export interface SharedRealm {
  backend: SharedBackend;
  /** Starts one more node on the realm (`[cluster] lease_ms` 1500 unless `cluster` says otherwise). */
  node(script?: Script, cluster?: Record<string, unknown>): Promise<TestApp>;
}

/**
 * The skip option of a test on `backend`: the reason postgres cannot start here (where a skip is allowed:
 * test/helpers/absent.ts), else false.
 */
export async function sharedBackendSkip(backend: SharedBackend): Promise<string | false> {
  if (backend !== 'postgres') return false;
  const pg = await testPostgres();
  return pg.ok ? false : skipUnlessRequired('postgres', `postgres tests skipped: ${pg.reason}`);
}

/**
 * A realm on `backend` for several in-process nodes (postgres: a fresh database on the process's test
 * server). Everything is closed and removed by `t`'s cleanup, nodes first.
 */
export async function sharedRealm(t: Pick<TestContext, 'after'>, backend: SharedBackend): Promise<SharedRealm> {
  let env: NodeJS.ProcessEnv = process.env;
  if (backend === 'postgres') {
    const pg = await testPostgres();
    if (!pg.ok) throw new Error(`postgres could not start: ${pg.reason}`);
    env = { ...process.env, WARREN_DATABASE_URL: await pg.server.createDatabase() };
  }
  const dir = await tmpDir(`warren-shared-${backend}-`);
  const nodes: TestApp[] = [];
  t.after(async () => {
    try {
      // Bounded: a node whose close hangs fails the test here instead of hanging it.
      for (const n of nodes.reverse()) await within('a cluster node to close', n.close(), CLOSE_TIMEOUT_MS);
    } finally {
      await dir.cleanup();
    }
  });
  return {
    backend,
    async node(script: Script = [], cluster: Record<string, unknown> = {}) {
      const config = { cluster: { lease_ms: 1500, ...cluster } };
      nodes.push(await bootApp({ stateRoot: dir.path, realm: REALM, realmBackend: backend, env, script, config }));
      return nodes.at(-1)!;
    },
  };
}
