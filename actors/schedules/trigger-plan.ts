// actors/schedules/trigger-plan.ts: validates triggers and computes their due times. Calendar triggers
// (IANA zones, DST gaps and repeats, month ends, leap days) go through croner as a pure parser; nothing
// about local time is computed by hand here. Used by the schedule host and the schedule tools.
import { Cron } from 'croner';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { ServiceError } from '../../contracts/errors.ts';
import { CalendarTrigger, IntervalTrigger, OnceTrigger, type FieldSpec, type TriggerSpec } from '../../contracts/schedule.ts';

/** Checks one tagged variant with its own compiled schema, so a 400 names the variant's exact problem. */
export function variantChecker(what: string, variants: Record<string, TSchema>): (value: unknown) => unknown {
  const compiled = new Map(Object.entries(variants).map(([tag, schema]) => [tag, Compile(schema)]));
  const tags = [...compiled.keys()].join(', ');
  return (value) => {
    const tag = typeof value === 'object' && value !== null ? (value as { type?: unknown }).type : undefined;
    const check = typeof tag === 'string' ? compiled.get(tag) : undefined;
    if (!check) throw new ServiceError('BAD_REQUEST', `invalid ${what}: type must be one of ${tags}, got ${JSON.stringify(tag ?? null)}`);
    if (check.Check(value)) return value;
    const first = [...check.Errors(value)][0];
    const where = first ? `${first.instancePath || '/'} ${first.message}` : 'does not match';
    throw new ServiceError('BAD_REQUEST', `invalid ${what} (${String(tag)}): ${where}`, {
      errors: first ? [{ path: first.instancePath || '/', message: first.message }] : [],
    });
  };
}

const checkTriggerShape = variantChecker('trigger', { once: OnceTrigger, interval: IntervalTrigger, calendar: CalendarTrigger });

const FIELD_RANGES: Record<'minute' | 'hour' | 'day_of_month' | 'month' | 'day_of_week' | 'year', [number, number]> = {
  minute: [0, 59],
  hour: [0, 23],
  day_of_month: [1, 31],
  month: [1, 12],
  day_of_week: [0, 6],
  year: [1970, 9999],
};

function badTrigger(reason: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `invalid trigger: ${reason}`);
}

/** True for a time zone name the runtime's Intl knows (IANA names, plus UTC). */
function isValidTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function fieldPattern(name: keyof typeof FIELD_RANGES, spec: FieldSpec | undefined): string {
  if (!spec || spec.kind === 'any') return '*';
  const [lo, hi] = FIELD_RANGES[name];
  for (const v of spec.values) if (v < lo || v > hi) throw badTrigger(`${name} value ${v} is outside ${lo}-${hi}`);
  return [...new Set(spec.values)].sort((a, b) => a - b).join(',');
}

const cronCache = new Map<string, Cron>();

/** The croner job (paused: used only as a pure parser) for a calendar trigger. */
function calendarCron(t: CalendarTrigger): Cron {
  const pattern = [
    '0',
    fieldPattern('minute', t.minute),
    fieldPattern('hour', t.hour),
    fieldPattern('day_of_month', t.day_of_month),
    fieldPattern('month', t.month),
    fieldPattern('day_of_week', t.day_of_week),
    fieldPattern('year', t.year),
  ].join(' ');
  const either = t.day_match === 'any';
  const key = `${t.timezone} ${pattern}${either ? ' any' : ''}`;
  let cron = cronCache.get(key);
  if (!cron) {
    try {
      // domAndDow: a structured calendar constrains with every field it names (day of month AND weekday),
      // unless it asks for cron's rule (day_match "any": either day field matches when both are set).
      cron = new Cron(pattern, { timezone: t.timezone, paused: true, mode: '7-part', domAndDow: !either });
    } catch (err) {
      throw badTrigger(err instanceof Error ? err.message : String(err));
    }
    if (cronCache.size > 10_000) cronCache.clear();
    cronCache.set(key, cron);
  }
  return cron;
}

const ms = (iso: string): number => Date.parse(iso);

/**
 * Validates a trigger (shape, time zone, field ranges, interval bounds) and returns it typed.
 * Throws 400 BAD_REQUEST naming the reason.
 */
export function validateTrigger(raw: unknown, nowMs: number): TriggerSpec {
  const t = checkTriggerShape(raw) as TriggerSpec;
  if (t.type === 'once' && !Number.isFinite(ms(t.due_at_utc))) throw badTrigger(`due_at_utc is not a valid instant: ${t.due_at_utc}`);
  if (t.type === 'interval') {
    if (!Number.isFinite(ms(t.start_at_utc))) throw badTrigger(`start_at_utc is not a valid instant: ${t.start_at_utc}`);
    if (t.end_at_utc !== undefined && !(ms(t.end_at_utc) >= ms(t.start_at_utc)))
      throw badTrigger('end_at_utc must not be before start_at_utc');
  }
  if (t.type === 'calendar') {
    if (!isValidTimeZone(t.timezone))
      throw new ServiceError(
        'BAD_REQUEST',
        `invalid trigger: unknown time zone '${t.timezone}' (expected an IANA name such as Europe/Berlin)`,
      );
    if (calendarCron(t).nextRun(new Date(nowMs)) === null) throw badTrigger('calendar trigger has no occurrence after now');
  }
  return t;
}

/**
 * Due times (epoch ms, ascending) strictly after `afterMs` and at most `untilMs`, at most `limit` of them.
 * `afterMs` null means "from the trigger's beginning" (once: its instant; interval: its start).
 */
export function dueTimes(t: TriggerSpec, afterMs: number | null, untilMs: number, limit: number): number[] {
  const out: number[] = [];
  if (limit <= 0) return out;
  const after = afterMs ?? -Infinity;
  switch (t.type) {
    case 'once': {
      const due = ms(t.due_at_utc);
      if (due > after && due <= untilMs) out.push(due);
      return out;
    }
    case 'interval': {
      const start = ms(t.start_at_utc);
      const every = t.every_seconds * 1000;
      const end = t.end_at_utc === undefined ? Infinity : ms(t.end_at_utc);
      const k = after < start ? 0 : Math.floor((after - start) / every) + 1;
      for (let due = start + k * every; due <= untilMs && due <= end && out.length < limit; due += every) out.push(due);
      return out;
    }
    case 'calendar': {
      const cron = calendarCron(t);
      let prev: Date = new Date(Number.isFinite(after) ? after : 0);
      while (out.length < limit) {
        const next = cron.nextRun(prev);
        if (!next || next.getTime() > untilMs) break;
        out.push(next.getTime());
        prev = next;
      }
      return out;
    }
  }
}
