// test/actors/mob-ledger.test.ts: the structural mob ledger on a real lmdb store: monotonic gapless
// cursors, range with filters, reopen (head and projected cursor restored), and two ledgers sharing one
// store (two processes on one realm) never overwriting each other's events.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MobLedger } from '../../actors/mob/mob-ledger.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

describe('mob ledger', () => {
  it('appends with gapless cursors, filters, reopens, and shares a store safely', async (t) => {
    const dir = await tmpDir('warren-mobledger-');
    const store = await openLmdbStore(dir.path);
    t.after(async () => {
      await store.close();
      await dir.cleanup();
    });
    const a = new MobLedger(store, () => 1000);
    await a.open();
    const live: number[] = [];
    a.subscribe((e) => live.push(e.cursor));
    await Promise.all([
      a.append({ mob_id: 'm1', kind: 'mob_created' }),
      a.append({ mob_id: 'm2', kind: 'mob_created' }),
      a.append({ mob_id: 'm1', kind: 'member_spawned', agent_identity: 'x' }),
    ]);
    assert.deepEqual(live, [1, 2, 3]);
    assert.deepEqual(
      (await a.range(0, 10, { mob_id: 'm1' })).map((e) => e.cursor),
      [1, 3],
    );
    assert.deepEqual(
      (await a.range(1, 10, { kinds: ['mob_created'] })).map((e) => e.cursor),
      [2],
    );
    assert.deepEqual(
      (await a.range(0, 10, { agent_identity: 'x' })).map((e) => e.kind),
      ['member_spawned'],
    );
    await a.flushed();

    // A second ledger on the same store (another process on the realm) starts after the head.
    const b = new MobLedger(store, () => 2000);
    await b.open();
    assert.equal(b.headCursor, 3);
    assert.equal(b.projected, 3);
    await b.append({ mob_id: 'm3', kind: 'mob_created' });
    // `a` does not know cursor 4 is taken: its append conflicts, catches up and takes 5.
    const e = await a.append({ mob_id: 'm1', kind: 'mob_destroyed' });
    assert.equal(e.cursor, 5);
    const all = await b.range(0, 100);
    assert.deepEqual(
      all.map((x) => [x.cursor, x.mob_id]),
      [
        [1, 'm1'],
        [2, 'm2'],
        [3, 'm1'],
        [4, 'm3'],
        [5, 'm1'],
      ],
    );
    assert.equal(new Set(all.map((x) => x.event_id)).size, 5);
  });
});
