// tools/schedule-cron.ts: the 5-field cron authoring form of the schedule tools (`minute hour
// day-of-month month day-of-week`, with `*`, lists, ranges, steps and JAN-DEC / SUN-SAT names),
// normalised into the structured calendar trigger that schedules store. There is no cron on the wire.
import type { CalendarTrigger, FieldSpec } from '../contracts/schedule.ts';

/** A cron expression that cannot be normalised; the tool call answers 400 with its message. */
export class CronSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronSyntaxError';
  }
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldDef {
  name: string;
  min: number;
  max: number;
  names?: string[];
  /** Value of the first name (JAN = 1, SUN = 0). */
  nameBase?: number;
}

const FIELDS: FieldDef[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day_of_month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS, nameBase: 1 },
  // 7 is accepted as Sunday, as most crons do.
  { name: 'day_of_week', min: 0, max: 7, names: DAYS, nameBase: 0 },
];

function atom(text: string, def: FieldDef): number {
  const upper = text.toUpperCase();
  const named = def.names?.indexOf(upper) ?? -1;
  if (named >= 0) return named + (def.nameBase ?? 0);
  if (!/^\d+$/.test(text)) throw new CronSyntaxError(`${def.name}: '${text}' is not a number${def.names ? ' or name' : ''}`);
  const n = Number(text);
  if (n < def.min || n > def.max) throw new CronSyntaxError(`${def.name}: ${n} is outside ${def.min}-${def.max}`);
  return n;
}

function field(text: string, def: FieldDef): FieldSpec {
  if (text === '*' || text === '?') return { kind: 'any' };
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const [range, stepText, extra] = part.split('/');
    if (extra !== undefined || range === '') throw new CronSyntaxError(`${def.name}: malformed '${part}'`);
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step < 1) throw new CronSyntaxError(`${def.name}: step must be a positive integer in '${part}'`);
    let lo: number;
    let hi: number;
    if (range === '*') [lo, hi] = [def.min, def.max];
    else if (range.includes('-')) {
      const [a, b] = range.split('-');
      [lo, hi] = [atom(a, def), atom(b, def)];
      if (lo > hi) throw new CronSyntaxError(`${def.name}: range '${range}' runs backwards`);
    } else {
      lo = atom(range, def);
      hi = stepText === undefined ? lo : def.max;
    }
    for (let v = lo; v <= hi; v += step) values.add(def.name === 'day_of_week' && v === 7 ? 0 : v);
  }
  const sorted = [...values].sort((a, b) => a - b);
  const full = def.name === 'day_of_week' ? 7 : def.max - def.min + 1;
  return sorted.length >= full ? { kind: 'any' } : { kind: 'values', values: sorted };
}

/** Normalises `expression` (5 fields) in `timezone` into a calendar trigger. Throws CronSyntaxError. */
export function cronToCalendar(expression: string, timezone = 'UTC'): CalendarTrigger {
  const parts = expression.trim().split(/\s+/);
  if (parts.length !== 5) throw new CronSyntaxError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const [minute, hour, dom, month, dow] = parts.map((p, i) => field(p, FIELDS[i]));
  const out: CalendarTrigger = { type: 'calendar', timezone, minute, hour };
  if (dom.kind !== 'any') out.day_of_month = dom;
  if (month.kind !== 'any') out.month = month;
  if (dow.kind !== 'any') out.day_of_week = dow;
  // Cron's rule: when both day fields are restricted, a day matching either one fires.
  if (dom.kind !== 'any' && dow.kind !== 'any') out.day_match = 'any';
  return out;
}
