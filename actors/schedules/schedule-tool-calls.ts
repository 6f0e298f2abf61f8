// actors/schedules/schedule-tool-calls.ts: executes the schedule tools for POST /schedule/call and for
// sessions: argument checks, the authoring forms (5-field cron → calendar trigger; `current_session`
// target → the calling session, resumable) and the raw tool results (schedule objects include
// `machine_state`). Unknown tool or bad arguments: 400; unknown schedule: 404.
import { ServiceError } from '../../contracts/errors.ts';
import { CreateScheduleRequest, UpdateScheduleRequest, type OccurrencePhase } from '../../contracts/schedule.ts';
import { cronToCalendar, CronSyntaxError } from '../../tools/schedule-cron.ts';
import { createScheduleTools, SCHEDULE_TOOL_PREFIX, SCHEDULE_TOOL_SPECS, type ScheduleCall } from '../../tools/schedule-tools.ts';
import type { Tool } from '../../tools/tool.ts';
import type { ScheduleHost } from './schedule-host.ts';
import { bodyChecker } from './schedule-validate.ts';

const checkCreate = bodyChecker('arguments', CreateScheduleRequest);
const checkUpdate = bodyChecker('arguments', UpdateScheduleRequest);

type Args = Record<string, unknown>;

function objectArgs(args: unknown): Args {
  if (args === null || args === undefined) return {};
  if (typeof args !== 'object' || Array.isArray(args)) throw new ServiceError('BAD_REQUEST', 'arguments must be an object');
  return args as Args;
}

/** Rewrites the tool-only authoring forms into wire forms. */
function normalize(args: Args, currentSessionId: string | null): Args {
  const out = { ...args };
  const trigger = out.trigger as { type?: unknown; expression?: unknown; timezone?: unknown } | undefined;
  if (trigger && trigger.type === 'cron') {
    if (typeof trigger.expression !== 'string')
      throw new ServiceError('BAD_REQUEST', 'invalid trigger (cron): expression must be a string');
    try {
      out.trigger = cronToCalendar(trigger.expression, typeof trigger.timezone === 'string' ? trigger.timezone : 'UTC');
    } catch (err) {
      if (err instanceof CronSyntaxError) throw new ServiceError('BAD_REQUEST', `invalid trigger (cron): ${err.message}`);
      throw err;
    }
  }
  const target = out.target as { type?: unknown; action?: unknown } | undefined;
  if (target && target.type === 'current_session') {
    if (!currentSessionId)
      throw new ServiceError('BAD_REQUEST', "invalid target: current_session is only available to a session's own tools");
    out.target = { target_kind: 'session', type: 'resumable_session', session_id: currentSessionId, action: target.action };
  }
  return out;
}

function requireObject(value: unknown, what: string): void {
  if (value === undefined || value === null || typeof value !== 'object')
    throw new ServiceError('BAD_REQUEST', `invalid arguments: ${what} is required`);
}

/** The call function for the tools and POST /schedule/call. */
export function scheduleCall(host: ScheduleHost): ScheduleCall {
  return async (name, rawArgs, currentSessionId) => {
    if (!name.startsWith(SCHEDULE_TOOL_PREFIX)) throw new ServiceError('BAD_REQUEST', `unknown schedule tool: ${name}`);
    const args = normalize(objectArgs(rawArgs), currentSessionId);
    switch (name.slice(SCHEDULE_TOOL_PREFIX.length)) {
      case 'create':
        requireObject(args.trigger, 'trigger');
        requireObject(args.target, 'target');
        checkCreate(args);
        return (await host.create(args as unknown as CreateScheduleRequest)).toolView();
      case 'get':
        return (await host.get(args.schedule_id)).toolView();
      case 'list':
        return { schedules: await host.list() };
      case 'update': {
        const { schedule_id: id, ...rest } = args;
        const actor = await host.get(id);
        checkUpdate(rest);
        await actor.update(rest as UpdateScheduleRequest);
        return actor.toolView();
      }
      case 'pause': {
        const actor = await host.get(args.schedule_id);
        await actor.pause();
        return actor.toolView();
      }
      case 'resume': {
        const actor = await host.get(args.schedule_id);
        await actor.resume();
        return actor.toolView();
      }
      case 'delete': {
        const actor = await host.get(args.schedule_id);
        await actor.remove();
        return actor.toolView();
      }
      case 'occurrences': {
        const limit = typeof args.limit === 'number' && Number.isInteger(args.limit) && args.limit >= 0 ? args.limit : undefined;
        const phase = typeof args.phase === 'string' ? (args.phase as OccurrencePhase) : undefined;
        return { occurrences: await host.occurrences(args.schedule_id, { phase, limit }) };
      }
      default:
        throw new ServiceError('BAD_REQUEST', `unknown schedule tool: ${name}`);
    }
  };
}

/** The tool declarations as GET /schedule/tools answers them (camelCase `inputSchema`). */
export function scheduleToolDeclarations(): Array<{ name: string; description: string; inputSchema: Record<string, unknown> }> {
  return SCHEDULE_TOOL_SPECS.map((t) => ({ name: t.name, description: t.description, inputSchema: t.input_schema }));
}

/** The schedule tools a session gets (with `enable_schedule`). */
export function scheduleSessionTools(host: ScheduleHost): Tool[] {
  return createScheduleTools(scheduleCall(host));
}
