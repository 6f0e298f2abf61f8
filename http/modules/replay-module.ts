// http/modules/replay-module.ts: record, replay, fork, rerun and portable sessions (issue 34,
// docs/replay.md). Installs the turn recorder (RuntimeDeps.recorder, `[record]`), serves the replay
// routes and, at start, archives replays a crash left running.
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openRealmKey, REALM_KEY_FILE, type RealmCipher } from '../../actors/auth/realm-key.ts';
import { RecordConfig } from '../../actors/replay/record-config.ts';
import { TurnRecorder } from '../../actors/replay/recorder.ts';
import { ReplayService } from '../../actors/replay/replay-service.ts';
import { REPLAY_EXTENSION, REPLAY_ROUTES } from '../../contracts/replay.ts';
import { replayHandlers } from '../handlers/replay.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function replayModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  // The realm key seals recorded hooks_overrides (actors/replay/sealed-override.ts); opened at start.
  let cipher: RealmCipher | undefined;
  // A run's hooks as the turn-features module runs them (none when that module is not installed).
  const record = new RecordConfig(deps);
  const recorder = new TurnRecorder(record.settings, ctx.clock('replay'), record.hookEntries, () => cipher);
  deps.recorder = recorder;
  const service = new ReplayService(ctx.sessions(), recorder, () => cipher);
  const running = new Set<Promise<unknown>>();
  return {
    name: 'replay',
    routes: REPLAY_ROUTES,
    handlers: replayHandlers({
      service,
      realm: { realmId: ctx.realm.realmId, backend: ctx.realm.backend },
      track: (p) => {
        running.add(p);
        p.finally(() => running.delete(p)).catch(() => undefined); // p's failure is the replay's report
      },
    }),
    configKeys: ['record'],
    capabilities: [{ id: 'session_replay', gate: null, description: () => REPLAY_EXTENSION.description }],
    start: async () => {
      if (ctx.realm.dir) cipher = await realmKey(join(ctx.realm.dir, REALM_KEY_FILE));
      const n = await service.recoverInterrupted();
      if (n) deps.log.warn({ count: n }, 'archived replays interrupted by a restart');
    },
    close: async () => {
      await Promise.allSettled([...running]);
    },
  };
}

/**
 * The realm key. Another module may be creating the key file at this moment (created, not yet written):
 * its short read is retried for a while before it counts as an error.
 */
async function realmKey(path: string): Promise<RealmCipher> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await openRealmKey(path);
    } catch (err) {
      if (attempt >= 40 || !/is not \d+ bytes/.test(String((err as Error).message))) throw err;
      await sleep(50);
    }
  }
}
