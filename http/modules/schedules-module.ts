// http/modules/schedules-module.ts: the schedules subsystem as a module unit: the schedule routes and
// tool surface, the 'schedule' actor kind (actors/schedules/schedule-host.ts), the schedule tools for
// sessions with `enable_schedule`, and the `schedule` capability (gated by [tools] schedule_enabled).
import { systemClock, type Clock } from '../../actors/clock.ts';
import { SCHEDULE_KIND, ScheduleHost } from '../../actors/schedules/schedule-host.ts';
import { scheduleSessionTools } from '../../actors/schedules/schedule-tool-calls.ts';
import { sessionPort } from '../../actors/schedules/session-port.ts';
import { SCHEDULE_ROUTES } from '../../contracts/schedule.ts';
import { scheduleHandlers } from '../handlers/schedules.ts';
import type { ModuleContext, ModuleFactory, ModuleUnit } from '../module-unit.ts';

export interface SchedulesModuleOptions {
  /** Time source of the schedules (default: the system clock); tests pass a ManualClock. */
  clock?: Clock;
  /** A dispatched scheduled turn's claim lease (default 30 minutes). */
  turnLeaseMs?: number;
}

/** The module factory, plus `settled()` (no firing or scheduled turn in progress) for app.ts and tests. */
export function schedulesModule(opts: SchedulesModuleOptions = {}): { factory: ModuleFactory; settled(): Promise<void> } {
  let host: ScheduleHost | undefined;
  const factory = (ctx: ModuleContext): ModuleUnit => {
    const schedules = new ScheduleHost(ctx.supervisor, {
      clock: opts.clock ?? systemClock,
      log: ctx.log.child({ component: 'schedules' }),
      sessions: sessionPort(ctx.sessions()),
      ...(opts.turnLeaseMs !== undefined ? { turnLeaseMs: opts.turnLeaseMs } : {}),
    });
    host = schedules;
    const tools = scheduleSessionTools(schedules);
    return {
      name: 'schedules',
      routes: SCHEDULE_ROUTES,
      handlers: scheduleHandlers({ host: schedules, enabled: () => ctx.config.current().tools.schedule_enabled }),
      actorKinds: [SCHEDULE_KIND],
      tools: { flag: 'schedule', tools },
      capabilities: [{ id: 'schedule' }],
      close: () => schedules.drain(),
    };
  };
  return { factory, settled: async () => host?.settled() };
}
