// test/conformance/store.suite.ts: the behaviour every Store backend must show (lmdb, jsonl, memory).
// Each backend's test file calls storeConformance with a factory that opens fresh stores.
import { after, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError, type ErrorCode } from '../../contracts/errors.ts';
import type { Message } from '../../contracts/transcript.ts';
import { MAX_STORED_DEPTH } from '../../storage/prepare-ops.ts';
import type { LedgerEntry, SessionRecord, Store, StoreOp } from '../../storage/store.ts';
import { entries, sessionRecord, userRow, type StoreFactory } from '../helpers/store-builders.ts';

const texts = (rows: Message[]): string[] => rows.map((r) => (r.role === 'user' ? String(r.content) : r.role));
const ids = (list: SessionRecord[]): string[] => list.map((s) => s.session_id);

function withCode(code: ErrorCode): (err: unknown) => boolean {
  return (err) => isServiceError(err) && err.code === code;
}

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
        const order: Array<[string, number]> = [['d', 30], ['b', 10], ['c', 20], ['a', 10], ['e', 5]];
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
        const put = (id: string, at: number, labels: Record<string, string>, archived = false): StoreOp =>
          ({ op: 'putSession', session: sessionRecord(id, at, { labels, archived }) });
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
        assert.deepEqual(await byLabels([['team', 'a'], ['env', 'prod']]), ['a', 'd']);
        assert.deepEqual(await byLabels([['env', 'prod'], ['team', 'a']], { offset: 1, limit: 5 }), ['d']);
        assert.deepEqual(await byLabels([['team', 'a']], { limit: 2 }), ['a', 'b']);
        assert.deepEqual(await byLabels([['team', 'c']]), []);
        assert.deepEqual(await byLabels([['team', 'a=b']]), []);
        assert.deepEqual(ids(await store.listSessions({ labels: [['team', 'a']], includeArchived: true })), ['x', 'a', 'b', 'd']);

        // Label changes, archive and a moved creation time keep the index exact.
        await store.commit([put('b', 20, { team: 'b' }), put('d', 40, { team: 'a', env: 'prod' }, true), put('a', 60, { team: 'a', env: 'prod' })]);
        assert.deepEqual(await byLabels([['team', 'a']]), ['a']);
        assert.deepEqual(await byLabels([['team', 'b']]), ['b', 'c']);
        await store.commit([put('d', 40, { team: 'a' })]);
        assert.deepEqual(await byLabels([['team', 'a']]), ['d', 'a']);
      });

      it('matches label keys and values exactly, whatever characters they hold', async (t) => {
        const store = await fresh(t);
        const odd = { 'k\u0000=': 'v\nw', constructor: 'c', '': 'empty' };
        await store.commit([{ op: 'putSession', session: sessionRecord('s', 1, { labels: odd }) }, { op: 'putSession', session: sessionRecord('t', 2) }]);
        assert.deepEqual(ids(await store.listSessions({ labels: [['k\u0000=', 'v\nw'], ['', 'empty']] })), ['s']);
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
        await assert.rejects(
          store.commit([{ op: 'putRows', sessionId: 's', fromIndex: 2, rows: [userRow('c')] }]),
          withCode('CONFLICT'),
        );
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

      it('drops ledger ranges after the batch\'s own appends; reads skip them and the seq goes on', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2, 3) }]);
        await store.commit([{ op: 'appendLedger', sessionId: 'other', entries: entries(1, 2) }]);
        // The drop is listed first but applies after the append of the same batch.
        await store.commit([
          { op: 'dropLedger', sessionId: 's', ranges: [[2, 2], [4, 5]] },
          { op: 'appendLedger', sessionId: 's', entries: entries(4, 5, 6) },
        ]);
        assert.deepEqual(await store.readLedger('s', 0), entries(1, 3, 6));
        assert.deepEqual(await store.readLedger('s', 1, 1), entries(3));
        assert.deepEqual(await store.readLedger('s', 3), entries(6));
        assert.equal(await store.lastLedgerSeq('s'), 6);
        await store.commit([{ op: 'dropLedger', sessionId: 's', ranges: [[1, 3]] }, { op: 'dropLedger', sessionId: 'none', ranges: [[1, 9]] }]);
        assert.deepEqual(await store.readLedger('s', 0), entries(6));
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(7) }]);
        assert.deepEqual(await store.readLedger('s', 0), entries(6, 7));
        assert.equal(await store.lastLedgerSeq('s'), 7);
        assert.deepEqual(await store.readLedger('other', 0), entries(1, 2), 'other sessions keep theirs');
        for (const ranges of [[[0, 1]], [[3, 2]], [[1]], 'x']) {
          await assert.rejects(store.commit([{ op: 'dropLedger', sessionId: 's', ranges } as unknown as StoreOp]), withCode('SESSION_STORE_ERROR'), JSON.stringify(ranges));
        }
      });

      it('refuses a seq at or below the last one, with CONFLICT', async (t) => {
        const store = await fresh(t);
        await store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1, 2) }]);
        await assert.rejects(
          store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2, 3) }]),
          withCode('CONFLICT'),
        );
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
        assert.deepEqual((await store.listRecords('ns')).map((r) => r.key), ['b', 'c']);
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
        await assert.rejects(store.commit([
          { op: 'checkRecord', ns: 'cas', key: 'k', rev: null },
          { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 1, owner: 'b' } },
          { op: 'putRecord', ns: 'cas', key: 'other', value: 'x' },
        ]), withCode('CONFLICT'));
        assert.deepEqual(await store.getRecord('cas', 'k'), { rev: 1, owner: 'a' });
        assert.equal(await store.getRecord('cas', 'other'), undefined);
        // A matching rev holds; a stale one fails even when the check comes after the writes in the batch.
        await store.commit([
          { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 2, owner: 'b' } },
          { op: 'checkRecord', ns: 'cas', key: 'k', rev: 1 },
        ]);
        await assert.rejects(store.commit([
          { op: 'putRecord', ns: 'cas', key: 'k', value: { rev: 3, owner: 'c' } },
          { op: 'checkRecord', ns: 'cas', key: 'k', rev: 1 },
        ]), withCode('CONFLICT'));
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
        const claim = (owner: string) => store.commit([
          { op: 'checkRecord', ns: 'cas', key: 'occ', rev: 1 },
          { op: 'putRecord', ns: 'cas', key: 'occ', value: { rev: 2, owner } },
        ]).then(() => owner, () => null);
        const results = await Promise.all(['a', 'b', 'c', 'd'].map(claim));
        const winners = results.filter((r) => r !== null);
        assert.equal(winners.length, 1);
        assert.deepEqual(await store.getRecord('cas', 'occ'), { rev: 2, owner: winners[0] });
      });

      it('checkRecord: rejects a malformed rev before writing', async (t) => {
        const store = await fresh(t);
        await assert.rejects(store.commit([
          { op: 'putRecord', ns: 'cas', key: 'x', value: 1 },
          { op: 'checkRecord', ns: 'cas', key: 'x', rev: 1.5 },
        ]), withCode('SESSION_STORE_ERROR'));
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
          await assert.rejects(store.commit(wholeBatch({ op: 'putRecord', ns: 'deep', key: 'no', value: nest(depth) })), withCode('SESSION_STORE_ERROR'));
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
        await assert.rejects(
          store.commit([{ op: 'putRecord', ns: 'ns', key: 'cyclic', value: cyclic }]),
          withCode('SESSION_STORE_ERROR'),
        );
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
          await assert.rejects(
            second.commit([{ op: 'appendLedger', sessionId: 's1', entries: entries(3) }]),
            withCode('CONFLICT'),
          );
          await second.commit([
            { op: 'appendLedger', sessionId: 's1', entries: entries(4) },
            { op: 'putRows', sessionId: 's1', fromIndex: 2, rows: [userRow('c')] },
          ]);
          assert.equal(await second.lastLedgerSeq('s1'), 4);
          assert.equal((await second.readRows('s1')).total, 3);
        });
      });
    }
  });
}
