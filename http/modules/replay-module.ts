// http/modules/replay-module.ts: record, replay, fork, rerun and portable sessions (issue 34,
// docs/replay.md). Installs the turn recorder (RuntimeDeps.recorder, `[record]`), serves the replay
// routes and, at start, archives replays a crash left running.
import { RecordConfig } from '../../actors/replay/record-config.ts';
import { TurnRecorder } from '../../actors/replay/recorder.ts';
import { ReplayService } from '../../actors/replay/replay-service.ts';
import { REPLAY_EXTENSION, REPLAY_ROUTES } from '../../contracts/replay.ts';
import { replayHandlers } from '../handlers/replay.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function replayModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  // A run's hooks as the turn-features module runs them (none when that module is not installed).
  const record = new RecordConfig(deps);
  const recorder = new TurnRecorder(record.settings, ctx.clock('replay'), record.hookEntries);
  deps.recorder = recorder;
  const service = new ReplayService(ctx.sessions(), recorder);
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
      const n = await service.recoverInterrupted();
      if (n) deps.log.warn({ count: n }, 'archived replays interrupted by a restart');
    },
    close: async () => {
      await Promise.allSettled([...running]);
    },
  };
}
