// GET /metrics passes Prometheus' own checker (`promtool check metrics`) after a workload, and the
// event-loop delay gauges are consistent (p50 <= p99 <= max). promtool comes from Debian's prometheus
// package (.ci/run extracts it); without it the test skips with the reason.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { call, startApp } from '../helpers/app.ts';
import { parseProm, sumOf } from '../helpers/prom-text.ts';

function findPromtool(): string | null {
  const candidates = [process.env.WARREN_PROMTOOL, '/usr/bin/promtool', '/usr/local/bin/promtool', '/opt/promtool/usr/bin/promtool'];
  return candidates.find((p): p is string => typeof p === 'string' && p !== '' && existsSync(p)) ?? null;
}

const promtool = findPromtool();

describe('GET /metrics under promtool', () => {
  it(
    'passes `promtool check metrics` with consistent event-loop gauges',
    { skip: promtool ? false : 'promtool not installed (set WARREN_PROMTOOL or install Debian prometheus)' },
    async (t) => {
      const app = await startApp(t, [{ text: 'ok' }, { text: 'again' }]);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'one', provider: 'scripted' });
      assert.equal(created.status, 200);
      const id: string = created.body.session_id;
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' })).status, 200);
      // A busy moment so the event-loop window has samples above zero.
      const until = Date.now() + 60;
      while (Date.now() < until);
      await new Promise((r) => setTimeout(r, 50));

      const text = await (await fetch(`${app.url}/metrics`)).text();
      const run = spawnSync(promtool!, ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 20_000 });
      assert.equal(run.status, 0, `promtool check metrics failed:\n${run.stdout}${run.stderr}`);

      const s = parseProm(text);
      const p50 = sumOf(s, 'nodejs_eventloop_delay_p50_seconds');
      const p99 = sumOf(s, 'nodejs_eventloop_delay_p99_seconds');
      const max = sumOf(s, 'nodejs_eventloop_delay_max_seconds');
      assert.ok(max > 0, 'the busy window is seen');
      assert.ok(p50 <= p99 && p99 <= max, `p50 ${p50} <= p99 ${p99} <= max ${max}`);
    },
  );
});
