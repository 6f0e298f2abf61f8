// Cron authoring form keeps cron's meaning: each expression, normalised into a calendar trigger and
// planned by the schedule host's trigger planner, fires at exactly the instants croner's own cron
// semantics (day of month OR day of week when both are restricted) give over two years (2028 is a leap year).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Cron } from 'croner';
import { cronToCalendar } from '../../tools/schedule-cron.ts';
import { dueTimes, validateTrigger } from '../../actors/schedules/trigger-plan.ts';

const FROM = Date.parse('2027-01-01T00:00:00Z');
const UNTIL = Date.parse('2029-01-01T00:00:00Z');

/** croner's answer for a standard 5-field expression: every run in (FROM, UNTIL]. */
function cronerRuns(expression: string, timezone: string): number[] {
  const job = new Cron(expression, { timezone, paused: true });
  const out: number[] = [];
  let prev = new Date(FROM);
  for (;;) {
    const next = job.nextRun(prev);
    if (!next || next.getTime() > UNTIL) return out;
    out.push(next.getTime());
    prev = next;
  }
}

const TABLE: Array<[string, string]> = [
  ['0 9 1 * MON', 'UTC'],
  ['30 6 15 * FRI', 'Europe/Berlin'],
  ['0 0 1,15 * 0', 'UTC'],
  ['0 12 13 * 5', 'America/New_York'],
  ['0 9 * * MON-FRI', 'UTC'],
  ['0 9 1 * *', 'UTC'],
  ['15 3 */10 * *', 'Asia/Tokyo'],
  ['0 8 1-7 * 1', 'UTC'],
  ['0 0 29 2 *', 'UTC'],
  ['*/30 9-10 * JAN,JUL SUN', 'UTC'],
];

describe('cron authoring form', () => {
  for (const [expression, zone] of TABLE) {
    it(`'${expression}' in ${zone} fires when croner says, over two years`, () => {
      const trigger = validateTrigger(cronToCalendar(expression, zone), FROM);
      const ours = dueTimes(trigger, FROM, UNTIL, 20_000);
      const theirs = cronerRuns(expression, zone);
      assert.ok(theirs.length > 0, 'croner gives at least one run');
      assert.deepEqual(
        ours.map((t) => new Date(t).toISOString()),
        theirs.map((t) => new Date(t).toISOString()),
      );
    });
  }

  it('a structured calendar naming both day fields still needs both (day_match defaults to all)', () => {
    const trigger = validateTrigger(
      {
        type: 'calendar',
        timezone: 'UTC',
        minute: { kind: 'values', values: [0] },
        hour: { kind: 'values', values: [9] },
        day_of_month: { kind: 'values', values: [1] },
        day_of_week: { kind: 'values', values: [1] },
      },
      FROM,
    );
    const runs = dueTimes(trigger, FROM, UNTIL, 100).map((t) => new Date(t));
    assert.ok(runs.length > 0);
    for (const r of runs) assert.ok(r.getUTCDate() === 1 && r.getUTCDay() === 1, r.toISOString());
  });
});
