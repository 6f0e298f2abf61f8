// test/tools/datetime-tool.test.ts: the datetime builtin with an injected clock and zone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createDatetimeTool } from '../../tools/datetime-tool.ts';
import type { ToolContext } from '../../tools/tool.ts';

const ctx: ToolContext = { sessionId: 's1', contextRoot: '.', signal: new AbortController().signal };
const at = new Date('2024-03-05T23:30:15.750Z');

async function run(timeZone: string | undefined, args: unknown = {}) {
  const out = await createDatetimeTool({ clock: () => at, ...(timeZone ? { timeZone } : {}) }).execute(args, ctx);
  return { out, body: out.is_error ? undefined : (JSON.parse(out.content) as Record<string, unknown>) };
}

describe('datetime tool', () => {
  it('reports UTC fields from the injected clock', async () => {
    const { body } = await run('UTC');
    assert.deepEqual(body, {
      iso8601: '2024-03-05T23:30:15Z',
      date: '2024-03-05',
      time: '23:30:15',
      timezone: 'UTC',
      unix_timestamp: 1709681415,
      year: 2024,
      month: 3,
      day: 5,
      weekday: 'Tuesday',
    });
  });

  it('uses local parts and the offset of the configured zone, across a date change', async () => {
    const tokyo = (await run('Asia/Tokyo')).body;
    assert.equal(tokyo?.iso8601, '2024-03-06T08:30:15+09:00');
    assert.equal(tokyo?.weekday, 'Wednesday');
    assert.equal(tokyo?.day, 6);
    assert.equal(tokyo?.unix_timestamp, 1709681415);
    assert.equal((await run('America/St_Johns')).body?.iso8601, '2024-03-05T20:00:15-03:30');
  });

  it('defaults to the process zone and accepts missing arguments', async () => {
    const { body } = await run(undefined, undefined);
    assert.equal(body?.timezone, new Intl.DateTimeFormat().resolvedOptions().timeZone);
    assert.equal(Date.parse(String(body?.iso8601)), Math.floor(at.getTime() / 1000) * 1000);
  });

  it('rejects unexpected arguments', async () => {
    const { out } = await run('UTC', { tz: 'x' });
    assert.equal(out.is_error, true);
    assert.match(out.content, /invalid arguments for datetime: arguments: unknown "tz"/);
  });
});
