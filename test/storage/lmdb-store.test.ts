// test/storage/lmdb-store.test.ts: the lmdb backend passes the store conformance suite, pages a large index,
// and works from two OS processes on one realm at the same time.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { StoreOp } from '../../storage/store.ts';
import { dirStoreFactory, sessionRecord, storeConformance } from '../conformance/store.suite.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { appendContended } from '../helpers/lmdb-child.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const childScript = fileURLToPath(new URL('../helpers/lmdb-child.ts', import.meta.url));

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
    assert.deepEqual(page.map((s) => s.session_id), ['s15000', 's15001', 's15002']);
    const active = await store.listSessions({ offset: 9, limit: 2 });
    assert.deepEqual(active.map((s) => s.session_id), ['s10', 's11']);
    const tail = await store.listSessions({ offset: n - 2 });
    assert.deepEqual(tail.map((s) => s.session_id), []);
    assert.equal((await store.listSessions({ includeArchived: true, offset: n - 2 })).length, 2);
  });

  it('lets two processes read and write one realm at the same time', async (t) => {
    const dir = await tmpDir('warren-lmdb-');
    t.after(() => dir.cleanup());
    const store = await openLmdbStore(dir.path);
    t.after(() => store.close());
    await store.commit([{ op: 'putSession', session: sessionRecord('parent', 1) }]);

    const perWriter = 30;
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, dir.path, String(perWriter)], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.after(() => {
      if (child.exitCode === null) child.kill();
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = once(child, 'exit');
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();

    const ready = await lines.next();
    assert.equal(ready.done, false, `child ended early: ${stderr}`);
    assert.deepEqual(JSON.parse(ready.value as string), { ready: true, sawParent: true });

    // Both processes now race for the same session's next ledger seq.
    await appendContended(store, 'shared', 'parent', perWriter);
    const [code] = await exited;
    assert.equal(code, 0, stderr);
    const done = await lines.next();
    assert.equal(JSON.parse(done.value as string).done, true);

    const child2 = await store.getSession('child');
    assert.equal(child2?.labels.pid, String(child.pid));
    assert.equal(await store.countSessions(), 2);
    const ledger = await store.readLedger('shared', 0);
    assert.deepEqual(ledger.map((e) => e.seq), Array.from({ length: 2 * perWriter }, (_, i) => i + 1));
    const writers = ledger.map((e) => (e.payload as { writer: string }).writer);
    assert.equal(writers.filter((w) => w === 'parent').length, perWriter);
    assert.equal(writers.filter((w) => w === 'child').length, perWriter);
  });
});
