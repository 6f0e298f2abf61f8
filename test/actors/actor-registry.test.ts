// test/actors/actor-registry.test.ts: the generic registry with a small in-test kind (a counter that
// "hydrates" from a Map standing in for storage): deduplicated hydration, not-found, the serialized
// mailbox, idle eviction with the stopping map, the viewer's describe() and graceful close.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ActorRegistry, type ActorKind } from '../../actors/actor-registry.ts';
import { isServiceError } from '../../contracts/errors.ts';

interface Counter {
  id: string;
  lastUsedMs: number;
  value: number;
  stopped: boolean;
}

function setup(stored: Map<string, number>, opts: { serialized?: boolean; now?: () => number } = {}) {
  let hydrations = 0;
  const stops: string[] = [];
  const now = opts.now ?? (() => 0);
  const registry = new ActorRegistry({ now, log: pino({ level: 'silent' }) });
  const kind: ActorKind<Counter> = {
    kind: 'counter',
    policy: { idleEvictMs: 1_000, maxResident: 2 },
    serialized: opts.serialized ?? false,
    async hydrate(id) {
      hydrations++;
      const value = stored.get(id);
      return value === undefined ? undefined : { id, lastUsedMs: now(), value, stopped: false };
    },
    busy: () => false,
    async stop(a) {
      a.stopped = true;
      stops.push(a.id);
      stored.set(a.id, a.value);
    },
    describe: (a) => ({ state: a.value > 0 ? 'positive' : 'zero', labels: { parity: a.value % 2 ? 'odd' : 'even' } }),
  };
  const table = registry.register(kind);
  return { registry, table, stops, hydrations: () => hydrations };
}

describe('actor registry', () => {
  it('hydrates once for concurrent first messages and answers not-found for unknown ids', async () => {
    const { registry, table, hydrations } = setup(new Map([['a', 1]]));
    const [x, y] = await Promise.all([table.get('a'), table.get('a')]);
    assert.equal(x, y);
    assert.equal(hydrations(), 1);
    await assert.rejects(table.get('nope'), (err) => isServiceError(err) && err.code === 'NOT_FOUND');
    assert.deepEqual(registry.list(), [{ kind: 'counter', id: 'a', state: 'positive', labels: { parity: 'odd' }, sinceMs: 0 }]);
    await registry.close();
  });

  it('keeps its own time-in-state clock for a kind that gives none: it moves only when the described state changes', async () => {
    let clock = 100;
    const { registry, table } = setup(new Map([['a', 0]]), { now: () => clock });
    const a = await table.get('a');
    assert.equal(registry.describe('counter', 'a')?.sinceMs, 100, 'first seen');
    clock = 150;
    assert.equal(registry.describe('counter', 'a')?.sinceMs, 100, 'same state');
    a.value = 3;
    clock = 170;
    assert.equal(registry.describe('counter', 'a')?.state, 'positive');
    assert.equal(registry.describe('counter', 'a')?.sinceMs, 170, 'a new state, seen at 170');
    clock = 200;
    assert.equal(registry.list()[0].sinceMs, 170);
    assert.equal(registry.describe('counter', 'nope'), undefined);
    await registry.close();
  });

  it("runs a serialized kind's commands one at a time in arrival order, a failure not blocking the next", async () => {
    const { registry, table } = setup(new Map([['a', 0]]), { serialized: true });
    const order: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const first = table.deliver('a', async (c) => {
      order.push('first:start');
      await gate;
      c.value++;
      order.push('first:end');
    });
    const failing = table.deliver('a', () => {
      order.push('second');
      throw new Error('boom');
    });
    const third = table.deliver('a', (c) => {
      order.push('third');
      return c.value;
    });
    release();
    await first;
    await assert.rejects(failing, /boom/);
    assert.equal(await third, 1);
    assert.deepEqual(order, ['first:start', 'first:end', 'second', 'third']);
    await registry.close();
  });

  it('evicts beyond maxResident (LRU) and idle actors, and a re-hydration sees the flushed state', async () => {
    let clock = 0;
    const stored = new Map([
      ['a', 1],
      ['b', 2],
      ['c', 3],
    ]);
    const { registry, table, stops } = setup(stored, { now: () => clock });
    const a = await table.get('a');
    await table.get('b');
    await table.get('a');
    await table.get('c');
    assert.deepEqual(stops, ['b'], 'the least recently used went');
    a.value = 10;
    clock += 5_000;
    registry.sweep();
    assert.equal(table.residentCount, 0);
    assert.equal(a.stopped, true);
    assert.equal((await table.get('a')).value, 10, 'hydrated from what stop() flushed');
    await registry.close();
  });

  it('refuses a second kind of the same name and new hydrations after close', async () => {
    const { registry, table } = setup(new Map([['a', 1]]));
    assert.throws(() => registry.register({ ...({} as ActorKind<Counter>), kind: 'counter' }), /registered twice/);
    await registry.close();
    await assert.rejects(table.get('a'), (err) => isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE');
  });
});
