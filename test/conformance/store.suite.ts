// test/conformance/store.suite.ts: the behaviour every Store backend must show (lmdb, jsonl, memory, sqlite).
// Each backend's test file calls storeConformance with a factory that opens fresh stores.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { LedgerEntry, SessionRecord, Store, StoreOp } from '../../storage/store.ts';
import { entries, ids, sessionRecord, texts, userRow, withCode, type StoreFactory } from '../helpers/store-builders.ts';
import { recordAndCommitConformance } from './store-commit.suite.ts';

/** Defines the conformance tests for one backend. */
export function storeConformance(name: string, factory: StoreFactory): void {
  async function fresh(t: TestContext): Promise<Store> {
    const store = await factory.open();
    t.after(() => store.close());
    return store;
  }

  describe(`store conformance: ${name}`, () => {
    after(() => factory.cleanup());

    describe('sessions', () => {
      it('returns undefined for an unknown session and round-trips a stored one', async (t) => {
        const store = await fresh(t);
        assert.equal(await store.getSession('nope'), undefined);
        const s = sessionRecord('s1', 10, { labels: { team: 'a' }, state: { deep: [1, { x: 'y' }] } });
        await store.commit([{ op: 'putSession', session: s }]);
        assert.deepEqual(await store.getSession('s1'), s);
        await store.commit([{ op: 'putSession', session: { ...s, updated_at_ms: 99, message_count: 3 } }]);
        assert.equal((await store.getSession('s1'))?.updated_at_ms, 99);
        assert.equal(await store.countSessions(), 1);
      });

      it('lists by creation time then id, with offset and limit', async (t) => {
        const store = await fresh(t);
        const order: Array<[string, number]> = [
          ['d', 30],
          ['b', 10],
          ['c', 20],
          ['a', 10],
          ['e', 5],
        ];
        await store.commit(order.map(([id, at]) => ({ op: 'putSession', session: sessionRecord(id, at) })));
        assert.deepEqual(ids(await store.listSessions()), ['e', 'a', 'b', 'c', 'd']);
        assert.deepEqual(ids(await store.listSessions({ offset: 1, limit: 2 })), ['a', 'b']);
        assert.deepEqual(ids(await store.listSessions({ offset: 4, limit: 10 })), ['d']);
        assert.deepEqual(ids(await store.listSessions({ offset: 5 })), []);
        assert.deepEqual(ids(await store.listSessions({ limit: 0 })), []);
        assert.equal(await store.countSessions(), 5);
      });

      it('leaves archived sessions out unless asked, and still counts them', async (t) => {
        const store = await fresh(t);
        const ops: StoreOp[] = [1, 2, 3, 4].map((n) => ({
          op: 'putSession',
          session: sessionRecord(`s${n}`, n, { archived: n % 2 === 0 }),
        }));
        await store.commit(ops);
        assert.deepEqual(ids(await store.listSessions()), ['s1', 's3']);
        assert.deepEqual(ids(await store.listSessions({ offset: 1 })), ['s3']);
        assert.deepEqual(ids(await store.listSessions({ includeArchived: true })), ['s1', 's2', 's3', 's4']);
        assert.deepEqual(ids(await store.listSessions({ includeArchived: true, offset: 1, limit: 2 })), ['s2', 's3']);
        assert.equal(await store.countSessions(), 4);
        await store.commit([{ op: 'putSession', session: sessionRecord('s1', 1, { archived: true }) }]);
        await store.commit([{ op: 'putSession', session: sessionRecord('s2', 2, { archived: false }) }]);
        assert.deepEqual(ids(await store.listSessions()), ['s2', 's3']);
        assert.equal(await store.countSessions(), 4);
      });

      it('moves a session in the order when its created_at_ms changes, without duplicating it', async (t) => {
        const store = await fresh(t);
        await store.commit([1, 2, 3].map((n) => ({ op: 'putSession', session: sessionRecord(`s${n}`, n) })));
        await store.commit([{ op: 'putSession', session: sessionRecord('s1', 9) }]);
        assert.deepEqual(ids(await store.listSessions({ includeArchived: true })), ['s2', 's3', 's1']);
        assert.deepEqual(ids(await store.listSessions()), ['s2', 's3', 's1']);
        assert.equal(await store.countSessions(), 3);
      });
    });

    describe('label index', () => {
      it('lists the sessions carrying every label (AND), in creation order, paged after the filter', async (t) => {
        const store = await fresh(t);
        const put = (id: string, at: number, labels: Record<string, string>, archived = false): StoreOp => ({
          op: 'putSession',
          session: sessionRecord(id, at, { labels, archived }),
        });
        await store.commit([
          put('d', 40, { team: 'a', env: 'prod' }),
          put('b', 20, { team: 'a' }),
          put('c', 30, { team: 'b', env: 'prod' }),
          put('a', 10, { team: 'a', env: 'prod' }),
          put('x', 5, { team: 'a', env: 'prod' }, true),
          put('e', 50, {}),
        ]);
        const byLabels = async (labels: Array<[string, string]>, page: { offset?: number; limit?: number } = {}) =>
          ids(await store.listSessions({ labels, ...page }));
        assert.deepEqual(await byLabels([['team', 'a']]), ['a', 'b', 'd']);
        assert.deepEqual(
          await byLabels([
            ['team', 'a'],
            ['env', 'prod'],
          ]),
          ['a', 'd'],
        );
        assert.deepEqual(
          await byLabels(
            [
              ['env', 'prod'],
              ['team', 'a'],
            ],
            { offset: 1, limit: 5 },
          ),
          ['d'],
        );
        assert.deepEqual(await byLabels([['team', 'a']], { limit: 2 }), ['a', 'b']);
        assert.deepEqual(await byLabels([['team', 'c']]), []);
        assert.deepEqual(await byLabels([['team', 'a=b']]), []);
        assert.deepEqual(ids(await store.listSessions({ labels: [['team', 'a']], includeArchived: true })), ['x', 'a', 'b', 'd']);

        // Label changes, archive and a moved creation time keep the index exact.
        await store.commit([
          put('b', 20, { team: 'b' }),
          put('d', 40, { team: 'a', env: 'prod' }, true),
          put('a', 60, { team: 'a', env: 'prod' }),
        ]);
        assert.deepEqual(await byLabels([['team', 'a']]), ['a']);
        assert.deepEqual(await byLabels([['team', 'b']]), ['b', 'c']);
        await store.commit([put('d', 40, { team: 'a' })]);
        assert.deepEqual(await byLabels([['team', 'a']]), ['d', 'a']);
      });

      it('matches label keys and values exactly, whatever characters they hold', async (t) => {
        const store = await fresh(t);
        const odd = { 'k\u0000=': 'v\nw', constructor: 'c', '': 'empty' };
        await store.commit([
          { op: 'putSession', session: sessionRecord('s', 1, { labels: odd }) },
          { op: 'putSession', session: sessionRecord('t', 2) },
        ]);
        assert.deepEqual(
          ids(
            await store.listSessions({
              labels: [
                ['k\u0000=', 'v\nw'],
                ['', 'empty'],
              ],
            }),
          ),
          ['s'],
        );
        assert.deepEqual(ids(await store.listSessions({ labels: [['constructor', 'c']] })), ['s']);
        assert.deepEqual(ids(await store.listSessions({ labels: [['k\u0000', '=v\nw']] })), []);
      });
    });

    describe('record versions', () => {
      it('migrates a version 1 session record written by an older caller to the current version', async (t) => {
        const store = await fresh(t);
        const { v: _v, ...current } = sessionRecord('old', 1, { archived: true, updated_at_ms: 7, labels: { team: 'a' } });
        const v1 = { ...current, v: 1 } as unknown as SessionRecord;
        await store.commit([{ op: 'putSession', session: v1 }]);
        assert.deepEqual(await store.getSession('old'), { ...current, v: 2, archived_at_ms: 7 });
        assert.deepEqual(ids(await store.listSessions({ labels: [['team', 'a']], includeArchived: true })), ['old']);
      });

      it('reads ledger entries of the current version (absent or v: 1) and refuses any other version', async (t) => {
        const store = await fresh(t);
        const entry = (seq: number, v?: number) =>
          ({ seq, kind: 'run_started', timestamp_ms: seq, payload: {}, ...(v === undefined ? {} : { v }) }) as LedgerEntry;
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: [entry(1), entry(2, 1)] }]);
        assert.deepEqual(
          (await store.readLedger('s', 0)).map((e) => [e.seq, e.v]),
          [
            [1, undefined],
            [2, 1],
          ],
        );
        await assert.rejects(
          store.commit([{ op: 'appendLedger', sessionId: 's', entries: [entry(3, 2)] }]),
          withCode('SESSION_STORE_ERROR'),
        );
        assert.equal((await store.readLedger('s', 0)).length, 2);
      });

      it('refuses a session record of an unknown version', async (t) => {
        const store = await fresh(t);
        const future = { ...sessionRecord('new', 1), v: 3 } as unknown as SessionRecord;
        await assert.rejects(store.commit([{ op: 'putSession', session: future }]), withCode('SESSION_STORE_ERROR'));
      });
    });

    describe('transcript rows', () => {
      it('reads nothing for a session without rows', async (t) => {
        const store = await fresh(t);
        assert.deepEqual(await store.readRows('none'), { rows: [], total: 0 });
      });

      it('appends, pages and reports the total', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 0, rows: ['r0', 'r1', 'r2'].map(userRow) }]);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 3, rows: ['r3', 'r4'].map(userRow) }]);
        const all = await store.readRows('s');
        assert.deepEqual(texts(all.rows), ['r0', 'r1', 'r2', 'r3', 'r4']);
        assert.equal(all.total, 5);
        assert.deepEqual(all.rows[0], userRow('r0'));
        const page = await store.readRows('s', 1, 2);
        assert.deepEqual(texts(page.rows), ['r1', 'r2']);
        assert.equal(page.total, 5);
        assert.deepEqual(texts((await store.readRows('s', 4, 10)).rows), ['r4']);
        assert.deepEqual(await store.readRows('s', 7, 2), { rows: [], total: 5 });
        assert.deepEqual((await store.readRows('s', 0, 0)).rows, []);
      });

      it('overwrites from an index, extending past the end', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 0, rows: ['a', 'b', 'c', 'd'].map(userRow) }]);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 2, rows: ['C', 'D', 'E'].map(userRow) }]);
        assert.deepEqual(await store.readRows('s'), { rows: ['a', 'b', 'C', 'D', 'E'].map(userRow), total: 5 });
      });

      it('truncates, and treats a truncate past the end as a no-op', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 0, rows: ['a', 'b', 'c', 'd'].map(userRow) }]);
        await store.commit([{ op: 'truncateRows', sessionId: 's', length: 9 }]);
        assert.equal((await store.readRows('s')).total, 4);
        await store.commit([{ op: 'truncateRows', sessionId: 's', length: 2 }]);
        assert.deepEqual(await store.readRows('s'), { rows: ['a', 'b'].map(userRow), total: 2 });
        await store.commit([
          { op: 'truncateRows', sessionId: 's', length: 0 },
          { op: 'putRows', sessionId: 's', fromIndex: 0, rows: [userRow('fresh')] },
        ]);
        assert.deepEqual(await store.readRows('s'), { rows: [userRow('fresh')], total: 1 });
      });

      it('applies several row ops of one batch in order', async (t) => {
        const store = await fresh(t);
        await store.commit([
          { op: 'putRows', sessionId: 's', fromIndex: 0, rows: ['a', 'b'].map(userRow) },
          { op: 'putRows', sessionId: 's', fromIndex: 2, rows: ['c'].map(userRow) },
          { op: 'truncateRows', sessionId: 's', length: 1 },
          { op: 'putRows', sessionId: 's', fromIndex: 1, rows: ['B'].map(userRow) },
        ]);
        assert.deepEqual(await store.readRows('s'), { rows: ['a', 'B'].map(userRow), total: 2 });
      });

      it('refuses a write that would leave a gap, with CONFLICT', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 0, rows: [userRow('a')] }]);
        await assert.rejects(store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 2, rows: [userRow('c')] }]), withCode('CONFLICT'));
        assert.equal((await store.readRows('s')).total, 1);
      });

      it("keeps session 'a' apart from session 'ab'", async (t) => {
        const store = await fresh(t);
        await store.commit([
          { op: 'putRows', sessionId: 'a', fromIndex: 0, rows: ['a0', 'a1'].map(userRow) },
          { op: 'putRows', sessionId: 'ab', fromIndex: 0, rows: ['ab0', 'ab1', 'ab2'].map(userRow) },
        ]);
        await store.commit([{ op: 'truncateRows', sessionId: 'a', length: 0 }]);
        assert.deepEqual(await store.readRows('a'), { rows: [], total: 0 });
        assert.deepEqual(texts((await store.readRows('ab')).rows), ['ab0', 'ab1', 'ab2']);
      });
    });

    describe('ledger', () => {
      it('is empty with last seq 0 for an unknown session', async (t) => {
        const store = await fresh(t);
        assert.deepEqual(await store.readLedger('s', 0), []);
        assert.equal(await store.lastLedgerSeq('s'), 0);
      });

      it('appends and reads after a seq, with a limit', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2, 3) }]);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(4, 5) }]);
        assert.deepEqual(await store.readLedger('s', 0), entries(1, 2, 3, 4, 5));
        assert.deepEqual(await store.readLedger('s', 2), entries(3, 4, 5));
        assert.deepEqual(await store.readLedger('s', 1, 2), entries(2, 3));
        assert.deepEqual(await store.readLedger('s', 5), []);
        assert.deepEqual(await store.readLedger('s', 0, 0), []);
        assert.equal(await store.lastLedgerSeq('s'), 5);
      });

      it("drops ledger ranges after the batch's own appends; reads skip them and the seq goes on", async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2, 3) }]);
        await store.commit([{ op: 'appendLedger', sessionId: 'other', entries: entries(1, 2) }]);
        // The drop is listed first but applies after the append of the same batch.
        await store.commit([
          {
            op: 'dropLedger',
            sessionId: 's',
            ranges: [
              [2, 2],
              [4, 5],
            ],
          },
          { op: 'appendLedger', sessionId: 's', entries: entries(4, 5, 6) },
        ]);
        assert.deepEqual(await store.readLedger('s', 0), entries(1, 3, 6));
        assert.deepEqual(await store.readLedger('s', 1, 1), entries(3));
        assert.deepEqual(await store.readLedger('s', 3), entries(6));
        assert.equal(await store.lastLedgerSeq('s'), 6);
        await store.commit([
          { op: 'dropLedger', sessionId: 's', ranges: [[1, 3]] },
          { op: 'dropLedger', sessionId: 'none', ranges: [[1, 9]] },
        ]);
        assert.deepEqual(await store.readLedger('s', 0), entries(6));
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(7) }]);
        assert.deepEqual(await store.readLedger('s', 0), entries(6, 7));
        assert.equal(await store.lastLedgerSeq('s'), 7);
        assert.deepEqual(await store.readLedger('other', 0), entries(1, 2), 'other sessions keep theirs');
        for (const ranges of [[[0, 1]], [[3, 2]], [[1]], 'x']) {
          await assert.rejects(
            store.commit([{ op: 'dropLedger', sessionId: 's', ranges } as unknown as StoreOp]),
            withCode('SESSION_STORE_ERROR'),
            JSON.stringify(ranges),
          );
        }
      });

      it('refuses a seq at or below the last one, with CONFLICT', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2) }]);
        await assert.rejects(store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2, 3) }]), withCode('CONFLICT'));
        await assert.rejects(
          store.commit([
            { op: 'appendLedger', sessionId: 's', entries: entries(3) },
            { op: 'appendLedger', sessionId: 's', entries: entries(3) },
          ]),
          withCode('CONFLICT'),
        );
        assert.deepEqual(await store.readLedger('s', 0), entries(1, 2));
        assert.equal(await store.lastLedgerSeq('s'), 2);
      });

      it("keeps session 'a' apart from session 'ab'", async (t) => {
        const store = await fresh(t);
        await store.commit([
          { op: 'appendLedger', sessionId: 'ab', entries: entries(1, 2, 3, 4) },
          { op: 'appendLedger', sessionId: 'a', entries: entries(1, 2) },
        ]);
        assert.deepEqual(await store.readLedger('a', 0), entries(1, 2));
        assert.equal(await store.lastLedgerSeq('a'), 2);
        assert.equal(await store.lastLedgerSeq('ab'), 4);
        assert.deepEqual(await store.readLedger('ab', 3), entries(4));
      });
    });

    recordAndCommitConformance(factory, fresh);
  });
}
