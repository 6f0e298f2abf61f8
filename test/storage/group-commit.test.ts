// storage/group-commit.ts, the queue both SQL backends commit through: commits queued in one event-loop
// turn share a transaction, commits queued while one runs share the next, each promise settles with its
// own outcome only after its transaction returned, and drain waits for everything accepted.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCommitQueue } from '../../storage/group-commit.ts';

/** A runner whose transactions the test ends one by one. */
function gatedRunner() {
  const batches: string[][] = [];
  const ends: Array<(errors: unknown[]) => void> = [];
  let waiting: (() => void) | undefined;
  const run = (commits: string[]) =>
    new Promise<unknown[]>((resolve) => {
      batches.push(commits);
      ends.push(resolve);
      waiting?.();
    });
  const nextBatch = (n: number, what: string) =>
    new Promise<void>((resolve, reject) => {
      if (batches.length >= n) return resolve();
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), 5_000);
      waiting = () => {
        if (batches.length >= n) {
          clearTimeout(timer);
          waiting = undefined;
          resolve();
        }
      };
    });
  return { run, batches, ends, nextBatch };
}

describe('GroupCommitQueue', () => {
  it('one transaction for a turn of commits, the next for those queued while it ran, each acknowledged after its own', async () => {
    const r = gatedRunner();
    const q = new GroupCommitQueue<string>(r.run);
    const settled: string[] = [];
    const a = q.push('a').then(() => settled.push('a'));
    const b = q.push('b').then(() => settled.push('b'));
    await r.nextBatch(1, 'the first transaction');
    assert.deepEqual(r.batches, [['a', 'b']]);
    const c = q.push('c').then(() => settled.push('c'));
    const d = q.push('d').then(
      () => settled.push('d'),
      (err: Error) => settled.push(`d:${err.message}`),
    );
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(r.batches.length, 1, 'nothing starts while a transaction runs');
    assert.equal(settled.length, 0, 'nothing is acknowledged before its transaction returned');
    r.ends[0]!([null, null]);
    await Promise.all([a, b]);
    await r.nextBatch(2, 'the second transaction');
    assert.deepEqual(r.batches[1], ['c', 'd']);
    assert.deepEqual(settled, ['a', 'b']);
    const drained = q.drain().then(() => settled.push('drained'));
    r.ends[1]!([null, new Error('conflict')]);
    await Promise.all([c, d, drained]);
    assert.deepEqual(settled, ['a', 'b', 'c', 'd:conflict', 'drained']);
  });

  it('a runner that rejects fails every commit of its batch, and the queue keeps going', async () => {
    let calls = 0;
    const q = new GroupCommitQueue<string>(async (commits) => {
      calls++;
      if (calls === 1) throw new Error('connection lost');
      return commits.map(() => null);
    });
    const results = await Promise.allSettled([q.push('x'), q.push('y')]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['rejected', 'rejected'],
    );
    await q.push('z');
    assert.equal(calls, 2);
    await q.drain();
  });
});
