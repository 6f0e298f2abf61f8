// test/storage/sqlite-store.test.ts: the sqlite backend passes the store conformance suite, opens its file in
// WAL mode with synchronous=FULL, records versioned migrations, group-commits one tick's commits with each
// one failing alone, pages a large index, and works from two OS processes on one realm at the same time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { isServiceError } from '../../contracts/errors.ts';
import { openSqliteStore, SQLITE_FILE, sqliteSettings } from '../../storage/sqlite-store.ts';
import { SCHEMA_VERSION } from '../../storage/sqlite-schema.ts';
import type { StoreOp } from '../../storage/store.ts';
import { storeConformance } from '../conformance/store.suite.ts';
import { dirStoreFactory, entries, sessionRecord, userRow } from '../helpers/store-builders.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { twoProcessContention } from '../helpers/two-process-store.ts';

storeConformance('sqlite', dirStoreFactory('warren-sqlite-', openSqliteStore));

const conflict = (err: unknown): boolean => isServiceError(err) && err.code === 'CONFLICT';

describe('sqlite store', () => {
  it('keeps one WAL-mode database file with synchronous=FULL and a recorded schema version', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    assert.equal(store.backend, 'sqlite');
    assert.equal(store.persistent, true);
    await store.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
    const file = join(dir.path, SQLITE_FILE);
    assert.ok(existsSync(file));
    // A second connection, as the sqlite3 CLI would open it.
    const peek = new BetterSqlite3(file, { readonly: true });
    t.after(() => peek.close());
    assert.equal(peek.pragma('journal_mode', { simple: true }), 'wal');
    assert.deepEqual(peek.prepare('SELECT version FROM schema_migrations ORDER BY version').pluck().all(), [1, 2]);
    assert.equal(SCHEMA_VERSION, 2);
    const row = peek.prepare("SELECT session_id, json_extract(record, '$.created_at_ms') AS at FROM sessions").get();
    assert.deepEqual(row, { session_id: 's', at: 1 });
  });

  it('runs its writing connection with synchronous=FULL (2) and busy timeouts', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    assert.deepEqual(await sqliteSettings(store), { journal_mode: 'wal', synchronous: 2, busy_timeout: 5000, reader_busy_timeout: 5000 });
  });

  it('reopens without re-running migrations, and refuses a file from a newer schema', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    await (await openSqliteStore(dir.path)).close();
    await (await openSqliteStore(dir.path)).close();
    const raw = new BetterSqlite3(join(dir.path, SQLITE_FILE));
    assert.equal(raw.prepare('SELECT COUNT(*) FROM schema_migrations').pluck().get(), 2);
    raw
      .prepare('INSERT INTO schema_migrations (version, name, applied_at_ms) VALUES (?, ?, ?)')
      .run(SCHEMA_VERSION + 1, 'from the future', 0);
    raw.close();
    await assert.rejects(openSqliteStore(dir.path), (err) => {
      assert.ok(isServiceError(err));
      assert.equal(err.code, 'SESSION_STORE_ERROR');
      assert.match(err.message, /newer than this build supports/);
      return true;
    });
  });

  it('lands the commits of one tick together, each failing alone', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    await store.commit([{ op: 'appendLedger', sessionId: 'b', entries: entries(1) }]);
    const a = store.commit([
      { op: 'appendLedger', sessionId: 'a', entries: entries(1) },
      { op: 'putRecord', ns: 'n', key: 'a', value: 1 },
    ]);
    // Stale: seq 1 is taken. Its record write must roll back with it.
    const b = store.commit([
      { op: 'putRecord', ns: 'n', key: 'b', value: 2 },
      { op: 'appendLedger', sessionId: 'b', entries: entries(1) },
    ]);
    const c = store.commit([
      { op: 'appendLedger', sessionId: 'a', entries: entries(2) },
      { op: 'putRows', sessionId: 'a', fromIndex: 0, rows: [userRow('x')] },
    ]);
    const results = await Promise.allSettled([a, b, c]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.ok(conflict((results[1] as PromiseRejectedResult).reason));
    assert.equal(results[2].status, 'fulfilled', 'a later commit of the same tick sees the earlier one');
    assert.deepEqual(await store.listRecords('n'), [{ key: 'a', value: 1 }]);
    assert.equal(await store.lastLedgerSeq('a'), 2);
    assert.equal(await store.lastLedgerSeq('b'), 1);
    assert.equal((await store.readRows('a')).total, 1);
  });

  it('lands commits accepted before close, and refuses new ones after', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    const landed = store.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
    await store.close();
    await landed;
    await assert.rejects(
      store.commit([{ op: 'putSession', session: sessionRecord('t', 1) }]),
      (err) => isServiceError(err) && err.code === 'SESSION_STORE_ERROR',
    );
    const again = await openSqliteStore(dir.path);
    t.after(() => again.close());
    assert.equal((await again.getSession('s'))?.session_id, 's');
  });

  it('counts and pages 20,000 sessions from the created-order indexes', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    const n = 20_000;
    const ops: StoreOp[] = [];
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
    assert.equal((await store.listSessions({ includeArchived: true, offset: n - 2 })).length, 2);
  });

  it('refuses a stale writer on another connection with CONFLICT, landing none of its batch', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const a = await openSqliteStore(dir.path);
    t.after(() => a.close());
    const b = await openSqliteStore(dir.path);
    t.after(() => b.close());
    await a.commit([
      { op: 'putRows', sessionId: 's', fromIndex: 0, rows: [userRow('a0')] },
      { op: 'appendLedger', sessionId: 's', entries: entries(1) },
    ]);
    // Both read the same head; b commits first.
    const [seqA, rowsA] = [await a.lastLedgerSeq('s'), (await a.readRows('s')).total];
    assert.deepEqual([await b.lastLedgerSeq('s'), (await b.readRows('s')).total], [seqA, rowsA]);
    await b.commit([
      { op: 'putRows', sessionId: 's', fromIndex: rowsA, rows: [userRow('b1')] },
      { op: 'appendLedger', sessionId: 's', entries: entries(seqA + 1) },
    ]);
    await assert.rejects(
      a.commit([
        { op: 'putSession', session: sessionRecord('s', 1, { message_count: 2 }) },
        { op: 'putRows', sessionId: 's', fromIndex: rowsA, rows: [userRow('a1')] },
        { op: 'appendLedger', sessionId: 's', entries: entries(seqA + 1) },
      ]),
      conflict,
    );
    for (const store of [a, b]) {
      assert.deepEqual(await store.readRows('s'), { rows: [userRow('a0'), userRow('b1')], total: 2 });
      assert.equal(await store.getSession('s'), undefined);
      assert.equal(await store.lastLedgerSeq('s'), 2);
    }
  });

  it('waits for a write lock held elsewhere without blocking the event loop, then lands', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    await store.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
    const other = new BetterSqlite3(join(dir.path, SQLITE_FILE));
    t.after(() => other.close());
    other.exec('BEGIN IMMEDIATE');
    let landed = false;
    const first = store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(1) }]).then(() => (landed = true));
    // The writer thread waits for the lock; this code runs, so the loop is free, and reads still work.
    for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
    assert.equal(landed, false);
    assert.equal((await store.getSession('s'))?.session_id, 's');
    const second = store.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2) }]);
    other.exec('COMMIT');
    await Promise.all([first, second]);
    assert.deepEqual(
      (await store.readLedger('s', 0)).map((e) => e.seq),
      [1, 2],
    );
  });

  it('lets two processes read and write one realm at the same time', async (t) => {
    const dir = await tmpDir('warren-sqlite-');
    t.after(() => dir.cleanup());
    const store = await openSqliteStore(dir.path);
    t.after(() => store.close());
    await twoProcessContention(t, 'sqlite', dir.path, store, 200);
  });
});
