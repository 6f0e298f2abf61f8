// http/handlers/schedules.ts: the /schedules routes and the schedule tool surface (/schedule/tools,
// /schedule/call). Each maps the validated request onto the schedule host (actors/schedules/) and
// answers the public Schedule / Occurrence shapes. Gated by `[tools] schedule_enabled` (501 when off).
import { ServiceError } from '../../contracts/errors.ts';
import type { RouteDef } from '../../contracts/route.ts';
import { SCHEDULE_ROUTE } from '../../contracts/schedule.ts';
import type { ScheduleHost } from '../../actors/schedules/schedule-host.ts';
import { scheduleCall, scheduleToolDeclarations } from '../../actors/schedules/schedule-tool-calls.ts';
import { on, type HandlerTable, type RouteContext } from '../handler.ts';

export interface ScheduleHandlerDeps {
  host: ScheduleHost;
  /** `[tools] schedule_enabled` of the current config. */
  enabled(): boolean;
}

/** Handlers of SCHEDULE_ROUTES. */
export function scheduleHandlers(deps: ScheduleHandlerDeps): HandlerTable {
  const { host } = deps;
  const call = scheduleCall(host);
  /** Binds a route's handler behind the `[tools] schedule_enabled` switch; its result answers 200. */
  const gate = <R extends RouteDef, T>(route: R, fn: (ctx: RouteContext<R>) => Promise<T>): HandlerTable =>
    on(route, async (ctx) => {
      if (!deps.enabled()) {
        throw new ServiceError('CAPABILITY_UNAVAILABLE', 'schedules are disabled by config ([tools] schedule_enabled = false)', {
          capability: 'schedule',
        });
      }
      return { status: 200, body: await fn(ctx) };
    });
  return {
    ...gate(SCHEDULE_ROUTE.create, async (ctx) => (await host.create(ctx.body)).view()),
    ...gate(SCHEDULE_ROUTE.list, async () => ({ schedules: await host.list() })),
    ...gate(SCHEDULE_ROUTE.get, async (ctx) => (await host.get(ctx.params.id)).view()),
    ...gate(SCHEDULE_ROUTE.update, async (ctx) => host.update(ctx.params.id, ctx.body)),
    ...gate(SCHEDULE_ROUTE['delete'], async (ctx) => (await host.get(ctx.params.id)).remove()),
    ...gate(SCHEDULE_ROUTE.pause, async (ctx) => (await host.get(ctx.params.id)).pause()),
    ...gate(SCHEDULE_ROUTE.resume, async (ctx) => (await host.get(ctx.params.id)).resume()),
    ...gate(SCHEDULE_ROUTE.occurrences, async (ctx) => ({
      occurrences: await host.occurrences(ctx.params.id, {
        phase: ctx.query.phase,
        limit: ctx.query.limit === undefined ? undefined : Number(ctx.query.limit),
      }),
    })),
    ...gate(SCHEDULE_ROUTE.tools, async () => ({ tools: scheduleToolDeclarations() })),
    ...gate(SCHEDULE_ROUTE.call, async (ctx) => call(ctx.body.name, ctx.body.arguments ?? null, null)),
  };
}
