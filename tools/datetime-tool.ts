// tools/datetime-tool.ts: the `datetime` builtin, which tells the model the current date and time in the
// server's (or a configured) time zone. Built by tools/registry.ts when builtins are enabled.
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool } from './tool.ts';

const DatetimeInput = Type.Object({}, { additionalProperties: false });

export interface DatetimeOptions {
  /** Source of "now"; defaults to the system clock. */
  clock?: () => Date;
  /** IANA time zone; defaults to the process's zone. */
  timeZone?: string;
}

const pad = (n: number, width = 2): string => String(Math.abs(n)).padStart(width, '0');

/**
 * Result fields: `iso8601` is local time with its UTC offset (e.g. `2024-03-05T14:07:09+09:00`), `date`
 * and `time` are its local parts, `unix_timestamp` is whole seconds, `month` is 1-12, `weekday` is English.
 */
export function createDatetimeTool(options: DatetimeOptions = {}): Tool {
  const clock = options.clock ?? (() => new Date());
  const timeZone = options.timeZone ?? new Intl.DateTimeFormat().resolvedOptions().timeZone;
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
    weekday: 'long',
  });
  const args = compileArgs(DatetimeInput);
  return {
    name: 'datetime',
    description: 'Get the current date, time, time zone and Unix timestamp.',
    input_schema: args.jsonSchema,
    async execute(raw) {
      const parsed = args.parse(raw);
      if (!parsed.ok) return invalidArgs('datetime', parsed.message);
      const now = clock();
      const unix = Math.floor(now.getTime() / 1000);
      const parts = Object.fromEntries(format.formatToParts(now).map((p) => [p.type, p.value]));
      const [year, month, day, hour, minute, second] = ['year', 'month', 'day', 'hour', 'minute', 'second'].map((k) => Number(parts[k]));
      const offsetMin = Math.round((Date.UTC(year, month - 1, day, hour, minute, second) / 1000 - unix) / 60);
      const offset = offsetMin === 0 ? 'Z' : `${offsetMin < 0 ? '-' : '+'}${pad(Math.trunc(offsetMin / 60))}:${pad(offsetMin % 60)}`;
      const date = `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
      const time = `${pad(hour)}:${pad(minute)}:${pad(second)}`;
      return jsonResult({
        iso8601: `${date}T${time}${offset}`,
        date,
        time,
        timezone: timeZone,
        unix_timestamp: unix,
        year,
        month,
        day,
        weekday: parts.weekday,
      });
    },
  };
}
