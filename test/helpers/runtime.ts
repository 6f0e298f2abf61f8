// test/helpers/runtime.ts: an actor runtime without HTTP for tests of actors/ (real LMDB in a temp dir, a
// scripted provider, the default config): the Supervisor and its session kind, closed after the test.
import type { TestContext } from 'node:test';
import pino from 'pino';
import { SessionHost, type SessionPolicy } from '../../actors/session/session-host.ts';
import { Supervisor, type RuntimeDeps } from '../../actors/supervisor.ts';
import { defaultConfig } from '../../config/toml.ts';
import type { Provider } from '../../providers/provider.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { Store } from '../../storage/store.ts';
import { tmpDir } from './tmp-dir.ts';

export interface TestRuntime {
  dir: string;
  store: Store;
  deps: RuntimeDeps;
  runtime: Supervisor;
  sessions: SessionHost;
}

export async function openTestRuntime(
  t: TestContext,
  opts: { provider: Provider; now?: () => number; policy?: Partial<SessionPolicy> },
): Promise<TestRuntime> {
  const dir = await tmpDir('warren-runtime-');
  const store = await openLmdbStore(dir.path);
  const deps: RuntimeDeps = {
    store,
    log: pino({ level: 'silent' }),
    realmId: 'r',
    contextRoot: dir.path,
    providers: { resolve: () => ({ provider: opts.provider, name: 'scripted', model: 'scripted' }) },
    config: () => defaultConfig(),
    now: opts.now ?? Date.now,
  };
  const runtime = new Supervisor(deps);
  const sessions = new SessionHost(runtime, {
    idleEvictMs: 60_000,
    shedAfterMs: 2_000,
    maxResident: 100,
    overdueRunMs: 60_000,
    ...opts.policy,
  });
  t.after(async () => {
    await runtime.close();
    await store.close();
    await dir.cleanup();
  });
  return { dir: dir.path, store, deps, runtime, sessions };
}
