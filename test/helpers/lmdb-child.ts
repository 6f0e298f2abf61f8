// test/helpers/lmdb-child.ts: a second OS process on one lmdb realm, for test/storage/lmdb-store.test.ts.
// Run as `node --import tsx test/helpers/lmdb-child.ts <dir> <count>`; it reports JSON lines on stdout.
import { pathToFileURL } from 'node:url';
import { isServiceError } from '../../contracts/errors.ts';
import { openLmdbStore } from '../../storage/lmdb-store.ts';
import type { Store } from '../../storage/store.ts';

/**
 * Appends `count` entries by `writer` to one session's ledger at lastLedgerSeq + 1, retrying on CONFLICT
 * when another writer (another process) took that seq first.
 */
export async function appendContended(store: Store, sessionId: string, writer: string, count: number): Promise<number> {
  let conflicts = 0;
  for (let done = 0; done < count; ) {
    const seq = (await store.lastLedgerSeq(sessionId)) + 1;
    try {
      await store.commit([
        { op: 'appendLedger', sessionId, entries: [{ seq, kind: 'write', timestamp_ms: seq, payload: { writer } }] },
      ]);
      done++;
    } catch (err) {
      if (!isServiceError(err) || err.code !== 'CONFLICT') throw err;
      conflicts++;
    }
  }
  return conflicts;
}

function report(line: object): void {
  process.stdout.write(`${JSON.stringify(line)}\n`);
}

async function main(dir: string, count: number): Promise<void> {
  const store = await openLmdbStore(dir);
  const parent = await store.getSession('parent');
  report({ ready: true, sawParent: parent?.session_id === 'parent' });
  await store.commit([
    {
      op: 'putSession',
      session: {
        v: 1,
        session_id: 'child',
        created_at_ms: 2,
        updated_at_ms: 2,
        archived: false,
        labels: { pid: String(process.pid) },
        message_count: 0,
        total_tokens: 0,
        state: null,
      },
    },
  ]);
  const conflicts = await appendContended(store, 'shared', 'child', count);
  await store.close();
  report({ done: true, conflicts });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const [dir, count] = process.argv.slice(2);
  main(dir, Number(count)).catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  });
}
