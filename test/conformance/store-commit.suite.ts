// test/conformance/store-commit.suite.ts: the records and atomic-commit half of the store conformance
// suite (store.suite.ts calls it inside its describe, so every backend runs both halves).
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_STORED_DEPTH } from '../../storage/prepare-ops.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { entries, ids, sessionRecord, texts, userRow, withCode, type StoreFactory } from '../helpers/store-builders.ts';

/** Record and commit cases for one backend; `fresh` opens a store closed after the test. */
export function recordAndCommitConformance(factory: StoreFactory, fresh: (t: TestContext) => Promise<Store>): void {
  describe('records', () => {
    it('puts, gets, overwrites, lists in key order and deletes', async (t) => {
      const store = await fresh(t);
      assert.equal(await store.getRecord('ns', 'k'), undefined);
      assert.deepEqual(await store.listRecords('ns'), []);
      await store.commit([
        { op: 'putRecord', ns: 'ns', key: 'b', value: { n: 2 } },
        { op: 'putRecord', ns: 'ns', key: 'a', value: [1, 'x', null] },
        { op: 'putRecord', ns: 'ns', key: 'c', value: 'plain' },
      ]);
      assert.deepEqual(await store.getRecord('ns', 'a'), [1, 'x', null]);
      await store.commit([{ op: 'putRecord', ns: 'ns', key: 'b', value: { n: 3 } }]);
      assert.deepEqual(await store.listRecords('ns'), [
        { key: 'a', value: [1, 'x', null] },
        { key: 'b', value: { n: 3 } },
        { key: 'c', value: 'plain' },
      ]);
      await store.commit([
        { op: 'deleteRecord', ns: 'ns', key: 'a' },
        { op: 'deleteRecord', ns: 'ns', key: 'never-there' },
      ]);
      assert.equal(await store.getRecord('ns', 'a'), undefined);
      assert.deepEqual(
        (await store.listRecords('ns')).map((r) => r.key),
        ['b', 'c'],
      );
    });

    it('keeps namespaces apart, including one that prefixes another', async (t) => {
      const store = await fresh(t);
      await store.commit([
        { op: 'putRecord', ns: 'ns', key: 'k', value: 1 },
        { op: 'putRecord', ns: 'ns2', key: 'k', value: 2 },
        { op: 'putRecord', ns: 'n', key: 'sk', value: 3 },
      ]);
      assert.equal(await store.getRecord('ns', 'k'), 1);
      assert.equal(await store.getRecord('ns2', 'k'), 2);
      assert.deepEqual(await store.listRecords('ns'), [{ key: 'k', value: 1 }]);
      assert.deepEqual(await store.listRecords('n'), [{ key: 'sk', value: 3 }]);
      await store.commit([{ op: 'deleteRecord', ns: 'ns', key: 'k' }]);
      assert.equal(await store.getRecord('ns2', 'k'), 2);
    });

    it('checkRecord: a batch lands only when every condition holds, else CONFLICT and nothing is written', async (t) => {
      const store = await fresh(t);
      // Absent (rev null) holds for a missing record: the create-if-absent form.
      await store.commit([
        { op: 'checkRecord', ns: 'cas', key: 'k', rev: null },
        { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 1, owner: 'a' } },
      ]);
      await assert.rejects(
        store.commit([
          { op: 'checkRecord', ns: 'cas', key: 'k', rev: null },
          { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 1, owner: 'b' } },
          { op: 'putRecord', ns: 'cas', key: 'other', value: 'x' },
        ]),
        withCode('CONFLICT'),
      );
      assert.deepEqual(await store.getRecord('cas', 'k'), { rev: 1, owner: 'a' });
      assert.equal(await store.getRecord('cas', 'other'), undefined);
      // A matching rev holds; a stale one fails even when the check comes after the writes in the batch.
      await store.commit([
        { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 2, owner: 'b' } },
        { op: 'checkRecord', ns: 'cas', key: 'k', rev: 1 },
      ]);
      await assert.rejects(
        store.commit([
          { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 3, owner: 'c' } },
          { op: 'checkRecord', ns: 'cas', key: 'k', rev: 1 },
        ]),
        withCode('CONFLICT'),
      );
      assert.deepEqual(await store.getRecord('cas', 'k'), { rev: 2, owner: 'b' });
      // A record without an integer rev matches no rev and is not absent.
      await store.commit([{ op: 'putRecord', ns: 'cas', key: 'plain', value: 'v' }]);
      await assert.rejects(store.commit([{ op: 'checkRecord', ns: 'cas', key: 'plain', rev: null }]), withCode('CONFLICT'));
      await assert.rejects(store.commit([{ op: 'checkRecord', ns: 'cas', key: 'plain', rev: 0 }]), withCode('CONFLICT'));
      await store.commit([{ op: 'deleteRecord', ns: 'cas', key: 'plain' }]);
      await store.commit([{ op: 'checkRecord', ns: 'cas', key: 'plain', rev: null }]);
    });

    it('checkRecord: of concurrent claims on one rev exactly one wins', async (t) => {
      const store = await fresh(t);
      await store.commit([{ op: 'putRecord', ns: 'cas', key: 'occ', value: { rev: 1, owner: null } }]);
      const claim = (owner: string) =>
        store
          .commit([
            { op: 'checkRecord', ns: 'cas', key: 'occ', rev: 1 },
            { op: 'putRecord', ns: 'cas', key: 'occ', value: { rev: 2, owner } },
          ])
          .then(
            () => owner,
            () => null,
          );
      const results = await Promise.all(['a', 'b', 'c', 'd'].map(claim));
      const winners = results.filter((r) => r !== null);
      assert.equal(winners.length, 1);
      assert.deepEqual(await store.getRecord('cas', 'occ'), { rev: 2, owner: winners[0] });
    });

    it('checkRecord: rejects a malformed rev before writing', async (t) => {
      const store = await fresh(t);
      await assert.rejects(
        store.commit([
          { op: 'putRecord', ns: 'cas', key: 'x', value: 1 },
          { op: 'checkRecord', ns: 'cas', key: 'x', rev: 1.5 },
        ]),
        withCode('SESSION_STORE_ERROR'),
      );
      assert.equal(await store.getRecord('cas', 'x'), undefined);
    });

    it('accepts keys with separators, dots, spaces, capitals, non-ASCII and great length', async (t) => {
      const store = await fresh(t);
      const keys = ['a/b', '..', '.', 'With Space', 'K', 'k', 'Äö✓', 'x'.repeat(400), 'a%2Fb'];
      await store.commit(keys.map((key, i) => ({ op: 'putRecord', ns: 'odd/ns', key, value: i })));
      for (const [i, key] of keys.entries()) assert.equal(await store.getRecord('odd/ns', key), i);
      assert.deepEqual(new Set((await store.listRecords('odd/ns')).map((r) => r.key)), new Set(keys));
    });
  });

  describe('commit', () => {
    it('resolves for an empty batch', async (t) => {
      const store = await fresh(t);
      await store.commit([]);
      assert.equal(await store.countSessions(), 0);
    });

    async function assertNothingLanded(store: Store): Promise<void> {
      assert.equal(await store.getSession('x'), undefined);
      assert.equal(await store.countSessions(), 0);
      assert.deepEqual(await store.readRows('x'), { rows: [], total: 0 });
      assert.deepEqual(await store.readLedger('x', 0), []);
      assert.equal(await store.lastLedgerSeq('x'), 0);
      assert.equal(await store.getRecord('ns', 'k'), undefined);
    }

    const wholeBatch = (bad: StoreOp): StoreOp[] => [
      { op: 'putSession', session: sessionRecord('x', 1) },
      { op: 'putRows', sessionId: 'x', fromIndex: 0, rows: [userRow('r')] },
      { op: 'appendLedger', sessionId: 'x', entries: entries(1) },
      { op: 'putRecord', ns: 'ns', key: 'k', value: 'v' },
      bad,
    ];

    it('writes nothing when one op holds a value JSON cannot carry (bigint, function)', async (t) => {
      const store = await fresh(t);
      const bigint: StoreOp = { op: 'putRecord', ns: 'ns', key: 'big', value: { n: 10n } };
      await assert.rejects(store.commit(wholeBatch(bigint)), withCode('SESSION_STORE_ERROR'));
      const fn: StoreOp = { op: 'putSession', session: sessionRecord('y', 2, { state: { cb: () => 1 } }) };
      await assert.rejects(store.commit(wholeBatch(fn)), withCode('SESSION_STORE_ERROR'));
      await assertNothingLanded(store);
      assert.equal(await store.getSession('y'), undefined);
    });

    it('stores values nested MAX_STORED_DEPTH deep, refuses deeper ones with SESSION_STORE_ERROR (no stack overflow)', async (t) => {
      const store = await fresh(t);
      const nest = (depth: number): unknown => {
        let v: unknown = 'core';
        for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { k: v };
        return v;
      };
      await store.commit([{ op: 'putRecord', ns: 'deep', key: 'ok', value: nest(MAX_STORED_DEPTH) }]);
      assert.deepEqual(await store.getRecord('deep', 'ok'), nest(MAX_STORED_DEPTH));
      for (const depth of [MAX_STORED_DEPTH + 1, 20_000]) {
        await assert.rejects(
          store.commit(wholeBatch({ op: 'putRecord', ns: 'deep', key: 'no', value: nest(depth) })),
          withCode('SESSION_STORE_ERROR'),
        );
        const deepSession = sessionRecord('y', 2, { state: { pending: { prompt: nest(depth) } } });
        await assert.rejects(store.commit([{ op: 'putSession', session: deepSession }]), withCode('SESSION_STORE_ERROR'));
      }
      await assertNothingLanded(store);
      assert.equal(await store.getSession('y'), undefined);
    });

    it('writes nothing when the last op conflicts with stored state', async (t) => {
      const store = await fresh(t);
      const gap: StoreOp = { op: 'putRows', sessionId: 'other', fromIndex: 5, rows: [userRow('late')] };
      await assert.rejects(store.commit(wholeBatch(gap)), withCode('CONFLICT'));
      await assertNothingLanded(store);
      // The store is still usable afterwards.
      await store.commit(wholeBatch({ op: 'deleteRecord', ns: 'ns', key: 'none' }));
      assert.equal(await store.countSessions(), 1);
    });

    it('refuses malformed ops: unknown op, empty ids, negative indexes, bad seqs', async (t) => {
      const store = await fresh(t);
      const bad: unknown[] = [
        { op: 'dropEverything' },
        { op: 'putRows', sessionId: '', fromIndex: 0, rows: [] },
        { op: 'putRows', sessionId: 's', fromIndex: -1, rows: [] },
        { op: 'truncateRows', sessionId: 's', length: 1.5 },
        { op: 'appendLedger', sessionId: 's', entries: entries(0) },
        { op: 'appendLedger', sessionId: 's', entries: entries(2, 1) },
        { op: 'putRecord', ns: 'ns', key: 'k', value: undefined },
        { op: 'putRecord', ns: 'ns', key: 'k', value: Number.NaN },
        { op: 'putRecord', ns: 'ns', key: 'k', value: new Date(0) },
        { op: 'putSession', session: { ...sessionRecord('s', 1), v: 3 } },
      ];
      for (const op of bad) {
        await assert.rejects(store.commit([op as StoreOp]), withCode('SESSION_STORE_ERROR'), JSON.stringify(op));
      }
      assert.deepEqual(await store.readRows('s'), { rows: [], total: 0 });
    });

    it('lands every commit issued by many sessions in the same tick', async (t) => {
      const store = await fresh(t);
      const n = 40;
      await Promise.all(
        Array.from({ length: n }, (_, i) =>
          store.commit([
            { op: 'putSession', session: sessionRecord(`c${i}`, i) },
            { op: 'putRows', sessionId: `c${i}`, fromIndex: 0, rows: [userRow(`row ${i}`)] },
            { op: 'appendLedger', sessionId: `c${i}`, entries: entries(1, 2) },
          ]),
        ),
      );
      assert.equal(await store.countSessions(), n);
      assert.equal((await store.listSessions()).length, n);
      for (let i = 0; i < n; i++) {
        assert.deepEqual(texts((await store.readRows(`c${i}`)).rows), [`row ${i}`]);
        assert.equal(await store.lastLedgerSeq(`c${i}`), 2);
      }
    });

    it('does not alias stored state to objects passed in or handed out', async (t) => {
      const store = await fresh(t);
      const s = sessionRecord('s', 1);
      const row = userRow('original');
      const value = { list: [1, 2] };
      const ledger = entries(1);
      await store.commit([
        { op: 'putSession', session: s },
        { op: 'putRows', sessionId: 's', fromIndex: 0, rows: [row] },
        { op: 'appendLedger', sessionId: 's', entries: ledger },
        { op: 'putRecord', ns: 'ns', key: 'k', value },
      ]);
      s.labels.changed = 'yes';
      (row as { content: string }).content = 'changed';
      value.list.push(3);
      ledger[0].kind = 'changed';
      const got = await store.getSession('s');
      assert.deepEqual(got, sessionRecord('s', 1));
      got!.labels.again = 'yes';
      (await store.listSessions())[0].labels.again = 'yes';
      assert.deepEqual(await store.getSession('s'), sessionRecord('s', 1));
      const rows = (await store.readRows('s')).rows;
      assert.deepEqual(texts(rows), ['original']);
      (rows[0] as { content: string }).content = 'changed';
      assert.deepEqual(texts((await store.readRows('s')).rows), ['original']);
      const readBack = await store.getRecord<{ list: number[] }>('ns', 'k');
      assert.deepEqual(readBack, { list: [1, 2] });
      readBack!.list.push(4);
      (await store.listRecords<{ list: number[] }>('ns'))[0].value.list.push(5);
      assert.deepEqual(await store.getRecord('ns', 'k'), { list: [1, 2] });
      const read = await store.readLedger('s', 0);
      read[0].kind = 'mutated';
      assert.deepEqual(await store.readLedger('s', 0), entries(1));
    });

    it('stores each value as it was when commit was called, even if the caller changes it before the commit lands', async (t) => {
      const store = await fresh(t);
      await store.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
      const s = sessionRecord('s', 1, { labels: { team: 'a' } });
      const rows = [userRow('r0'), userRow('r1')];
      const ledger = entries(1, 2);
      const value = { list: [1, 2] };
      const landed = store.commit([
        { op: 'putSession', session: s },
        { op: 'putRows', sessionId: 's', fromIndex: 0, rows },
        { op: 'appendLedger', sessionId: 's', entries: ledger },
        { op: 'putRecord', ns: 'ns', key: 'k', value },
      ]);
      // Changed synchronously, before the commit has had a chance to run its transaction.
      s.labels.team = 'changed';
      s.archived = true;
      s.created_at_ms = 99;
      (rows[0] as { content: string }).content = 'changed';
      rows.push(userRow('r2'));
      ledger[0].kind = 'changed';
      ledger[1].seq = 7;
      value.list.push(3);
      await landed;
      assert.deepEqual(await store.getSession('s'), sessionRecord('s', 1, { labels: { team: 'a' } }));
      assert.deepEqual(ids(await store.listSessions()), ['s']);
      assert.deepEqual(await store.readRows('s'), { rows: [userRow('r0'), userRow('r1')], total: 2 });
      assert.deepEqual(await store.readLedger('s', 0), entries(1, 2));
      assert.equal(await store.lastLedgerSeq('s'), 2);
      assert.deepEqual(await store.getRecord('ns', 'k'), { list: [1, 2] });
    });

    it('turns undefined array items into null the way JSON does', async (t) => {
      const store = await fresh(t);
      await store.commit([
        { op: 'putSession', session: sessionRecord('s', 1, { state: { list: [1, undefined, 2] } }) },
        { op: 'putRecord', ns: 'ns', key: 'k', value: [undefined, { a: undefined, b: 1 }] },
      ]);
      assert.deepEqual((await store.getSession('s'))?.state, { list: [1, null, 2] });
      assert.deepEqual(await store.getRecord('ns', 'k'), [null, { b: 1 }]);
    });

    it('refuses a cyclic value and accepts a deeply nested one', async (t) => {
      const store = await fresh(t);
      const cyclic: Record<string, unknown> = { a: 1 };
      cyclic.self = { back: cyclic };
      await assert.rejects(store.commit([{ op: 'putRecord', ns: 'ns', key: 'cyclic', value: cyclic }]), withCode('SESSION_STORE_ERROR'));
      let deep: unknown = 'bottom';
      for (let i = 0; i < 200; i++) deep = i % 2 ? { d: deep } : [deep];
      await store.commit([{ op: 'putRecord', ns: 'ns', key: 'deep', value: deep }]);
      assert.deepEqual(await store.getRecord('ns', 'deep'), deep);
      assert.equal(await store.getRecord('ns', 'cyclic'), undefined);
    });

    it('drops undefined object properties the way JSON does', async (t) => {
      const store = await fresh(t);
      const s = { ...sessionRecord('s', 1), state: { keep: 1, drop: undefined } };
      await store.commit([{ op: 'putSession', session: s }]);
      assert.deepEqual((await store.getSession('s'))?.state, { keep: 1 });
    });
  });

  if (factory.reopen) {
    const reopen = factory.reopen.bind(factory);
    describe('durability', () => {
      it('keeps sessions, rows, ledger and records across close and reopen', async (t) => {
        const first = await fresh(t);
        assert.equal(first.persistent, true);
        await first.commit([
          { op: 'putSession', session: sessionRecord('s2', 2) },
          { op: 'putSession', session: sessionRecord('s1', 1, { archived: true }) },
          { op: 'putRows', sessionId: 's1', fromIndex: 0, rows: ['a', 'b', 'c'].map(userRow) },
          { op: 'appendLedger', sessionId: 's1', entries: entries(1, 2, 3) },
          { op: 'putRecord', ns: 'ns', key: 'keep', value: { v: 1 } },
          { op: 'putRecord', ns: 'ns', key: 'gone', value: { v: 2 } },
        ]);
        await first.commit([
          { op: 'putRows', sessionId: 's1', fromIndex: 1, rows: ['B'].map(userRow) },
          { op: 'truncateRows', sessionId: 's1', length: 2 },
          { op: 'deleteRecord', ns: 'ns', key: 'gone' },
        ]);
        await first.close();

        const second = await reopen();
        t.after(() => second.close());
        assert.equal(await second.countSessions(), 2);
        assert.deepEqual(ids(await second.listSessions({ includeArchived: true })), ['s1', 's2']);
        assert.deepEqual(ids(await second.listSessions()), ['s2']);
        assert.deepEqual(await second.getSession('s1'), sessionRecord('s1', 1, { archived: true }));
        assert.deepEqual(await second.readRows('s1'), { rows: ['a', 'B'].map(userRow), total: 2 });
        assert.deepEqual(await second.readLedger('s1', 0), entries(1, 2, 3));
        assert.equal(await second.lastLedgerSeq('s1'), 3);
        assert.deepEqual(await second.listRecords('ns'), [{ key: 'keep', value: { v: 1 } }]);

        // The reopened store keeps enforcing the stored state.
        await assert.rejects(second.commit([{ op: 'appendLedger', sessionId: 's1', entries: entries(3) }]), withCode('CONFLICT'));
        await second.commit([
          { op: 'appendLedger', sessionId: 's1', entries: entries(4) },
          { op: 'putRows', sessionId: 's1', fromIndex: 2, rows: [userRow('c')] },
        ]);
        assert.equal(await second.lastLedgerSeq('s1'), 4);
        assert.equal((await second.readRows('s1')).total, 3);
      });
    });
  }
}
