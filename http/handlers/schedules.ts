// http/handlers/schedules.ts: the /schedules routes and the schedule tool surface (/schedule/tools,
// /schedule/call). Each maps the validated request onto the schedule host (actors/schedules/) and
// answers the public Schedule / Occurrence shapes. Gated by `[tools] schedule_enabled` (501 when off).
import { ServiceError } from '../../contracts/errors.ts';
import type { CreateScheduleRequest, OccurrencePhase, ScheduleToolCall, UpdateScheduleRequest } from '../../contracts/schedule.ts';
import type { ScheduleHost } from '../../actors/schedules/schedule-host.ts';
import { scheduleCall, scheduleToolDeclarations } from '../../actors/schedules/schedule-tool-calls.ts';
import type { HandlerContext, HandlerTable } from '../handler.ts';

export interface ScheduleHandlerDeps {
  host: ScheduleHost;
  /** `[tools] schedule_enabled` of the current config. */
  enabled(): boolean;
}

/** Handlers of SCHEDULE_ROUTES. */
export function scheduleHandlers(deps: ScheduleHandlerDeps): HandlerTable {
  const { host } = deps;
  const call = scheduleCall(host);
  const gate = <T>(fn: (ctx: HandlerContext) => Promise<T>) => async (ctx: HandlerContext) => {
    if (!deps.enabled()) {
      throw new ServiceError('CAPABILITY_UNAVAILABLE', 'schedules are disabled by config ([tools] schedule_enabled = false)', { capability: 'schedule' });
    }
    return { status: 200, body: await fn(ctx) };
  };
  return {
    'schedules.create': gate(async (ctx) => (await host.create(ctx.body as CreateScheduleRequest)).view()),
    'schedules.list': gate(async () => ({ schedules: await host.list() })),
    'schedules.get': gate(async (ctx) => (await host.get(ctx.params.id)).view()),
    'schedules.update': gate(async (ctx) => host.update(ctx.params.id, ctx.body as UpdateScheduleRequest)),
    'schedules.delete': gate(async (ctx) => (await host.get(ctx.params.id)).remove()),
    'schedules.pause': gate(async (ctx) => (await host.get(ctx.params.id)).pause()),
    'schedules.resume': gate(async (ctx) => (await host.get(ctx.params.id)).resume()),
    'schedules.occurrences': gate(async (ctx) => ({
      occurrences: await host.occurrences(ctx.params.id, {
        phase: ctx.query.phase as OccurrencePhase | undefined,
        limit: ctx.query.limit === undefined ? undefined : Number(ctx.query.limit),
      }),
    })),
    'schedule.tools': gate(async () => ({ tools: scheduleToolDeclarations() })),
    'schedule.call': gate(async (ctx) => {
      const body = ctx.body as ScheduleToolCall;
      return call(body.name, body.arguments ?? null, null);
    }),
  };
}
