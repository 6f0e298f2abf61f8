// test/storage/lmdb-store.test.ts: the lmdb backend passes the store conformance suite, pages a large index,
// works from two OS processes on one realm at the same time, and reads realms written without its last-seq table.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { isServiceError } from '../../contracts/errors.ts';
import { open } from 'lmdb';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { StoreOp } from '../../storage/store.ts';
import { storeConformance } from '../conformance/store.suite.ts';
import { dirStoreFactory, entries, sessionRecord, userRow } from '../helpers/store-builders.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { twoProcessContention } from '../helpers/two-process-store.ts';

storeConformance('lmdb', dirStoreFactory('warren-lmdb-', openLmdbStore));

describe('lmdb store', () => {
  it('reports backend lmdb and persistent true', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    assert.equal(store.backend, 'lmdb');
    assert.equal(store.persistent, true);
  });

  it('counts and pages 20,000 sessions from the created-order index', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    const n = 20_000;
    const ops: StoreOp[] = [];
    // Inserted newest first, so the listing order comes from the index, not from insertion order.
    for (let i = n - 1; i >= 0; i--) {
      ops.push({ op: 'putSession', session: sessionRecord(`s${i}`, 1_000 + i, { archived: i % 10 === 9 }) });
    }
    await store.commit(ops);
    assert.equal(await store.countSessions(), n);
    const page = await store.listSessions({ includeArchived: true, offset: 15_000, limit: 3 });
    assert.deepEqual(
      page.map((s) => s.session_id),
      ['s15000', 's15001', 's15002'],
    );
    const active = await store.listSessions({ offset: 9, limit: 2 });
    assert.deepEqual(
      active.map((s) => s.session_id),
      ['s10', 's11'],
    );
    const tail = await store.listSessions({ offset: n - 2 });
    assert.deepEqual(
      tail.map((s) => s.session_id),
      [],
    );
    assert.equal((await store.listSessions({ includeArchived: true, offset: n - 2 })).length, 2);
  });

  /** Writes ledger entries the way a build without the `ledger-last-seq` table did: straight into `ledger`. */
  async function appendRaw(dir: string, sessionId: string, seqs: number[]): Promise<void> {
    const env = open({ path: join(dir, 'warren.lmdb'), maxDbs: 32 });
    const ledger = env.openDB({ name: 'ledger' });
    for (const e of entries(...seqs)) await ledger.put([sessionId, e.seq], e);
    await env.close();
  }

  const conflict = (err: unknown): boolean => isServiceError(err) && err.code === 'CONFLICT';

  it('finds the last seq of a ledger written without the last-seq table, and keeps enforcing it', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    await appendRaw(dir.path, 'old', [1, 2, 3, 7]);
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    assert.equal(await store.lastLedgerSeq('old'), 7);
    await assert.rejects(store.commit([{ op: 'appendLedger', sessionId: 'old', entries: entries(7) }]), conflict);
    await store.commit([{ op: 'appendLedger', sessionId: 'old', entries: entries(8) }]);
    assert.equal(await store.lastLedgerSeq('old'), 8);
    assert.deepEqual(
      (await store.readLedger('old', 0)).map((e) => e.seq),
      [1, 2, 3, 7, 8],
    );
  });

  it('notices appends made by a writer that did not update the last-seq table', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const first = await openLmdbStore(dir.path);
    await first.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2) }]);
    await first.close();
    await appendRaw(dir.path, 's', [3, 4]);
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    assert.equal(await store.lastLedgerSeq('s'), 4);
    await assert.rejects(store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(3) }]), conflict);
    await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(5) }]);
    assert.deepEqual(
      (await store.readLedger('s', 0)).map((e) => e.seq),
      [1, 2, 3, 4, 5],
    );
  });

  it('counts rows right for appends, overwrites and truncations in one batch', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    const rows = (...texts: string[]) => texts.map(userRow);
    await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 0, rows: rows('a', 'b', 'c', 'd') }]);
    // Starts inside the stored rows, so the count cannot be read off the batch.
    await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 1, rows: rows('B') }]);
    await assert.rejects(store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 5, rows: rows('x') }]), conflict);
    await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 4, rows: rows('e') }]);
    await store.commit([
      { op: 'truncateRows', sessionId: 's', length: 3 },
      { op: 'putRows', sessionId: 's', fromIndex: 3, rows: rows('D') },
    ]);
    await assert.rejects(
      store.commit([
        { op: 'truncateRows', sessionId: 's', length: 2 },
        { op: 'putRows', sessionId: 's', fromIndex: 3, rows: rows('x') },
      ]),
      conflict,
    );
    assert.deepEqual(await store.readRows('s'), { rows: rows('a', 'B', 'c', 'D'), total: 4 });
    assert.deepEqual(await store.readRows('s', 3), { rows: rows('D'), total: 4 });
    assert.deepEqual(await store.readRows('s', 1, 3), { rows: rows('B', 'c', 'D'), total: 4 });
    assert.deepEqual(await store.readRows('s', 9), { rows: [], total: 4 });
  });

  it('checks a record condition against the stored record each time, whoever changed it since the last check', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const a = await openLmdbStore(dir.path);
    t.after(() => a.close());
    const b = await openLmdbStore(dir.path);
    t.after(() => b.close());
    const lease = (rev: number, node: string): StoreOp => ({
      op: 'putRecord',
      ns: 'lease',
      key: 'session:s',
      value: { rev, node_id: node },
    });
    const fenced = (rev: number | null, n: number): StoreOp[] => [
      { op: 'checkRecord', ns: 'lease', key: 'session:s', rev },
      { op: 'putRecord', ns: 'data', key: `k${n}`, value: n },
    ];
    const conflict = (err: unknown) => isServiceError(err) && err.code === 'CONFLICT';
    await a.commit([lease(1, 'n1')]);
    await a.commit(fenced(1, 1));
    await a.commit(fenced(1, 2));
    // Same length, other bytes, written through another store handle on the realm.
    await b.commit([lease(2, 'n2')]);
    await assert.rejects(a.commit(fenced(1, 3)), conflict);
    await a.commit(fenced(2, 4));
    await b.commit([{ op: 'deleteRecord', ns: 'lease', key: 'session:s' }]);
    await assert.rejects(a.commit(fenced(2, 5)), conflict);
    await a.commit(fenced(null, 6));
    await b.commit([lease(1, 'n1')]);
    await assert.rejects(a.commit(fenced(null, 7)), conflict);
    await a.commit(fenced(1, 8));
    assert.deepEqual(
      (await a.listRecords('data')).map((r) => r.value),
      [1, 2, 4, 6, 8],
    );
  });

  it('lets two processes read and write one realm at the same time', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    await twoProcessContention(t, 'lmdb', dir.path, store);
  });
});
