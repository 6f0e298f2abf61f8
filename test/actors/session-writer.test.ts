import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { SessionWriter } from '../../actors/session/session-writer.ts';
import type { HubEntry } from '../../actors/event-hub.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { Store } from '../../storage/store.ts';
import { entries, sessionRecord, userRow } from '../helpers/store-builders.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const SID = 'sess-w';

async function withStore(t: { after(fn: () => Promise<void>): void }): Promise<Store> {
  const dir = await tmpDir('warren-writer-');
  const store = await openLmdbStore(dir.path);
  t.after(async () => {
    await store.close();
    await dir.cleanup();
  });
  return store;
}

function writer(store: Store) {
  const delivered: number[] = [];
  const w = new SessionWriter(store, SID, (es) => delivered.push(...es.map((e) => e.seq)), pino({ level: 'silent' }));
  return { w, delivered };
}

const ev = (seq: number): HubEntry => entries(seq)[0];

describe('session writer (real lmdb)', () => {
  it('group-commits state and ledger entries queued in one tick into one durable write, then delivers', async (t) => {
    const store = await withStore(t);
    const { w, delivered } = writer(store);
    w.appendEvent(ev(1));
    w.appendEvent(ev(2));
    const done = w.commit([
      { op: 'putSession', session: sessionRecord(SID, 1) },
      { op: 'putRows', sessionId: SID, fromIndex: 0, rows: [userRow('a')] },
    ]);
    assert.deepEqual(delivered, [], 'nothing is live before it is durable');
    await done;
    assert.deepEqual(delivered, [1, 2]);
    assert.deepEqual(
      (await store.readLedger(SID, 0)).map((e) => e.seq),
      [1, 2],
    );
    assert.equal((await store.readRows(SID)).total, 1);
    assert.equal(w.halted, false);
  });

  it('halts the ledger on a ledger fault but still commits the state ops it rode with', async (t) => {
    const store = await withStore(t);
    const { w } = writer(store);
    w.appendEvent(ev(1));
    await w.commit([{ op: 'putSession', session: sessionRecord(SID, 1) }]);
    // seq 1 again: the store refuses a ledger seq that is not above the last one.
    w.appendEvent(ev(1));
    await w.commit([{ op: 'putRows', sessionId: SID, fromIndex: 0, rows: [userRow('kept')] }]);
    assert.equal(w.halted, true);
    assert.equal((await store.readRows(SID)).total, 1, 'the state write landed');
    w.appendEvent(ev(2));
    await w.flushed();
    assert.equal(await store.lastLedgerSeq(SID), 1, 'later appends are halted');
  });

  it('rejects a failing state write without blaming (halting) the ledger', async (t) => {
    const store = await withStore(t);
    const { w, delivered } = writer(store);
    w.appendEvent(ev(1));
    const bad = sessionRecord(SID, 1, { total_tokens: Number.NaN });
    await assert.rejects(w.commit([{ op: 'putSession', session: bad }]));
    assert.equal(w.halted, false);
    assert.deepEqual(delivered, [1], 'the live stream is best-effort: the event is still delivered');
    w.appendEvent(ev(2));
    await w.commit([{ op: 'putSession', session: sessionRecord(SID, 1) }]);
    assert.equal(await store.lastLedgerSeq(SID), 2);
  });

  it('flushed() waits only for writes queued before it, not for a stream that keeps going', async (t) => {
    const store = await withStore(t);
    const { w } = writer(store);
    await w.commit([{ op: 'putSession', session: sessionRecord(SID, 1) }]);
    let seq = 0;
    let streaming = true;
    const pump = (): void => {
      if (!streaming) return;
      w.appendEvent(ev(++seq));
      setImmediate(pump);
    };
    pump();
    await w.flushed();
    streaming = false;
    assert.ok(seq > 0);
    await w.flushed();
    assert.equal(await store.lastLedgerSeq(SID), seq);
  });
  it('a deferred write waits for the next commit and shares its one store commit; flushed() releases it', async (t) => {
    const store = await withStore(t);
    let commits = 0;
    const counted: Store = Object.create(store, {
      commit: {
        value: (ops: Parameters<Store['commit']>[0]) => {
          commits++;
          return store.commit(ops);
        },
      },
    });
    const { w, delivered } = writer(counted);
    const pending = w.commitDeferred([{ op: 'putSession', session: sessionRecord(SID, 0) }], 60_000);
    w.appendEvent(ev(1));
    await Promise.resolve();
    await Promise.resolve();
    assert.equal(commits, 0, 'nothing issued while deferred');
    assert.deepEqual(delivered, []);
    const done = w.commit([
      { op: 'putSession', session: sessionRecord(SID, 0, { message_count: 1 }) },
      { op: 'putRows', sessionId: SID, fromIndex: 0, rows: [userRow('a')] },
    ]);
    await Promise.all([pending, done]);
    assert.equal(commits, 1, 'one transaction for both writes');
    assert.deepEqual(delivered, [1]);
    assert.equal((await store.getSession(SID))?.message_count, 1, 'the later record won');
    const again = w.commitDeferred([{ op: 'putSession', session: sessionRecord(SID, 0, { message_count: 1 }) }], 60_000);
    await w.flushed();
    await again;
    assert.equal(commits, 2, 'flushed() issued the deferred write');
  });

  it('entries a batch drops itself are delivered live but never written; older ones in the range still go', async (t) => {
    const store = await withStore(t);
    const { w, delivered } = writer(store);
    w.appendEvent(ev(1));
    w.appendEvent(ev(2));
    await w.commit([{ op: 'putSession', session: sessionRecord(SID, 0) }]);
    for (const seq of [3, 4, 5]) w.appendEvent(ev(seq));
    await w.commit([
      { op: 'putSession', session: sessionRecord(SID, 0) },
      { op: 'dropLedger', sessionId: SID, ranges: [[2, 4]] },
    ]);
    assert.deepEqual(delivered, [1, 2, 3, 4, 5]);
    assert.deepEqual(
      (await store.readLedger(SID, 0)).map((e) => e.seq),
      [1, 5],
    );
    assert.equal(await store.lastLedgerSeq(SID), 5);
  });
});
