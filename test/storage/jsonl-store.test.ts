// test/storage/jsonl-store.test.ts: the jsonl backend passes the store conformance suite, keeps its inspectable
// layout, replays a journal left by a crash, and refuses a second opener while the first holds the realm.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFile, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isServiceError } from '../../contracts/errors.ts';
import { openJsonlStore } from '../../storage/jsonl-store.ts';
import { writeJournal } from '../../storage/jsonl-journal.ts';
import { storeConformance } from '../conformance/store.suite.ts';
import { dirStoreFactory, entries, sessionRecord, userRow } from '../helpers/store-builders.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

storeConformance('jsonl', dirStoreFactory('warren-jsonl-', openJsonlStore));

const lines = async (file: string): Promise<unknown[]> =>
  (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as unknown);

describe('jsonl store', () => {
  it('writes one folder per session and one file per record', async (t) => {
    const dir = await tmpDir('warren-jsonl-');
    t.after(() => dir.cleanup());
    const store = await openJsonlStore(dir.path);
    t.after(() => store.close());
    assert.equal(store.backend, 'jsonl');
    assert.equal(store.persistent, true);
    await store.commit([
      { op: 'putSession', session: sessionRecord('s-1', 5) },
      { op: 'putRows', sessionId: 's-1', fromIndex: 0, rows: [userRow('hi'), userRow('there')] },
      { op: 'appendLedger', sessionId: 's-1', entries: entries(1, 2) },
      { op: 'putRecord', ns: 'schedules', key: 'daily', value: { cron: '0 9 * * *' } },
    ]);
    const session = join(dir.path, 'sessions', 's-1');
    assert.deepEqual(JSON.parse(await readFile(join(session, 'session.json'), 'utf8')), sessionRecord('s-1', 5));
    assert.deepEqual(await lines(join(session, 'transcript.jsonl')), [userRow('hi'), userRow('there')]);
    assert.deepEqual(await lines(join(session, 'ledger.jsonl')), entries(1, 2));
    const record = JSON.parse(await readFile(join(dir.path, 'records', 'schedules', 'daily.json'), 'utf8'));
    assert.deepEqual(record, { key: 'daily', value: { cron: '0 9 * * *' } });
    assert.deepEqual((await readdir(dir.path)).sort(), ['LOCK', 'records', 'sessions']);
  });

  it('replays a journal left by a crash in the middle of applying it', async (t) => {
    const dir = await tmpDir('warren-jsonl-');
    t.after(() => dir.cleanup());
    const first = await openJsonlStore(dir.path);
    await first.commit([
      { op: 'putSession', session: sessionRecord('s', 1) },
      { op: 'putRows', sessionId: 's', fromIndex: 0, rows: [userRow('a'), userRow('b')] },
      { op: 'putRecord', ns: 'ns', key: 'old', value: 1 },
    ]);
    await first.close();

    // The crash: the journal for the next batch is durable, the transcript append got half-way, nothing else ran.
    const transcript = join(dir.path, 'sessions', 's', 'transcript.jsonl');
    const baseSize = (await stat(transcript)).size;
    const rowLine = `${JSON.stringify(userRow('c'))}\n`;
    await writeJournal(dir.path, [
      { type: 'append', path: 'sessions/s/transcript.jsonl', base_size: baseSize, data: rowLine },
      { type: 'write', path: 'sessions/s/session.json', data: JSON.stringify(sessionRecord('s', 1, { message_count: 3 })) },
      { type: 'append', path: 'sessions/s/ledger.jsonl', base_size: 0, data: `${JSON.stringify(entries(1)[0])}\n` },
      { type: 'delete', path: 'records/ns/old.json' },
      { type: 'write', path: 'records/ns/new.json', data: JSON.stringify({ key: 'new', value: 2 }) },
    ]);
    await appendFile(transcript, rowLine.slice(0, 7));

    const second = await openJsonlStore(dir.path);
    t.after(() => second.close());
    assert.deepEqual(await second.readRows('s'), { rows: ['a', 'b', 'c'].map(userRow), total: 3 });
    assert.equal((await second.getSession('s'))?.message_count, 3);
    assert.deepEqual(await second.readLedger('s', 0), entries(1));
    assert.deepEqual(await second.listRecords('ns'), [{ key: 'new', value: 2 }]);
    assert.deepEqual((await readdir(dir.path)).sort(), ['LOCK', 'records', 'sessions']);
    // Later commits build on the replayed state.
    await second.commit([{ op: 'putRows', sessionId: 's', fromIndex: 3, rows: [userRow('d')] }]);
    assert.equal((await second.readRows('s')).total, 4);
  });

  it('ignores a journal that never finished being written', async (t) => {
    const dir = await tmpDir('warren-jsonl-');
    t.after(() => dir.cleanup());
    const first = await openJsonlStore(dir.path);
    await first.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
    await first.close();
    await writeFile(join(dir.path, 'journal.json.tmp'), '{"v":1,"actions":[{"type":"wri');
    const second = await openJsonlStore(dir.path);
    t.after(() => second.close());
    assert.equal(await second.countSessions(), 1);
    assert.deepEqual((await readdir(dir.path)).sort(), ['LOCK', 'records', 'sessions']);
  });

  it('refuses a second opener while the realm is open, and takes over a stale lock', async (t) => {
    const dir = await tmpDir('warren-jsonl-');
    t.after(() => dir.cleanup());
    const first = await openJsonlStore(dir.path);
    await assert.rejects(openJsonlStore(dir.path), (err) => isServiceError(err) && err.code === 'SESSION_STORE_ERROR');
    await first.close();

    // A lock left by a process that has exited.
    const gone = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await once(gone, 'exit');
    await writeFile(join(dir.path, 'LOCK'), String(gone.pid));
    const second = await openJsonlStore(dir.path);
    t.after(() => second.close());
    assert.equal(await readFile(join(dir.path, 'LOCK'), 'utf8'), String(process.pid));
  });
});
