// The turn-path counters and histograms (actors/observe/hot-metrics.ts) render exactly what prom-client's
// own Counter and Histogram render for the same observations, so /metrics did not change with them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from '../../actors/observe/hot-metrics.ts';

const BOUNDS = [0.00005, 0.0001, 0.00025, 0.001, 0.5, 1, 120];

describe('hot metrics', () => {
  it('render the same exposition text as prom-client for the same observations', async () => {
    const ref = new Registry();
    const hot = new Registry();
    const h1 = new Histogram({ name: 'x_seconds', help: 'help with "quotes"', labelNames: ['a', 'b'], buckets: BOUNDS, registers: [ref] });
    const c1 = new Counter({ name: 'y_total', help: 'a counter', labelNames: ['p'], registers: [ref] });
    const h2 = new HotHistogram('x_seconds', 'help with "quotes"', ['a', 'b'], BOUNDS, hot);
    const c2 = new HotCounter('y_total', 'a counter', ['p'], hot);
    assert.equal(await hot.metrics(), await ref.metrics(), 'before any observation');
    // Below, on and between bounds, above the last one (+Inf), and a label value needing escapes.
    for (const v of [0.00001, 0.00005, 0.0002, 0.7, 1, 500, 0.001, 0]) {
      h1.labels('p', 'o').observe(v);
      h2.observe(h2.labels('p', 'o'), v);
    }
    h1.labels('q', 'x"y\\z').observe(2);
    h2.observe(h2.labels('q', 'x"y\\z'), 2);
    c1.labels('p').inc(3);
    c2.inc(c2.labels('p'), 3);
    c1.labels('z').inc();
    c2.inc(c2.labels('z'));
    const text = await hot.metrics();
    assert.equal(text, await ref.metrics());
    assert.match(text, /x_seconds_bucket\{le="\+Inf",a="p",b="o"\} 8/);
    assert.match(text, /x_seconds_count\{a="p",b="o"\} 8/);
  });

  it('refuse what prom-client refuses: wrong label arity, a negative or non-finite amount', () => {
    const r = new Registry();
    const c = new HotCounter('c_total', 'c', ['p'], r);
    const h = new HotHistogram('h_seconds', 'h', ['p'], [1], r);
    assert.throws(() => c.labels('a', 'b'), TypeError);
    assert.throws(() => c.inc(c.labels('a'), -1), TypeError);
    assert.throws(() => h.observe(h.labels('a'), Number.NaN), TypeError);
    assert.throws(() => new HotCounter('c_total', 'again', ['p'], r), /already been registered/);
  });
});
