// test/helpers/store-child.ts: a second OS process on one realm store (lmdb or sqlite), for the two-process
// tests in test/storage/. Run as `node --import tsx test/helpers/store-child.ts <backend> <dir> <count>`;
// it reports JSON lines on stdout and starts writing when a line arrives on stdin.
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { isServiceError } from '../../contracts/errors.ts';
import { openStore } from '../../storage/open-store.ts';
import type { Store } from '../../storage/store.ts';
import { isEntry } from './child-entry.ts';

/**
 * Commits `count` turn-like batches by `writer` to one session: a transcript row at the current row count and
 * a ledger entry at lastLedgerSeq + 1, in one commit. Both are read before the commit, so another writer
 * (another process) may get there first: the stale batch must fail whole with CONFLICT (its row would
 * overwrite, but its ledger seq is taken), and it is retried with fresh reads.
 */
export async function appendContended(store: Store, sessionId: string, writer: string, count: number): Promise<number> {
  let conflicts = 0;
  for (let done = 0; done < count;) {
    const seq = (await store.lastLedgerSeq(sessionId)) + 1;
    const { total } = await store.readRows(sessionId, 0, 0);
    try {
      await store.commit([
        {
          op: 'putRows',
          sessionId,
          fromIndex: total,
          rows: [{ role: 'user', content: `${writer} ${seq}`, created_at: '2026-01-01T00:00:00.000Z' }],
        },
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

async function main(backend: string, dir: string, count: number): Promise<void> {
  const store = await openStore(backend, dir);
  const parent = await store.getSession('parent');
  report({ ready: true, sawParent: parent?.session_id === 'parent' });
  // Both processes race at once: the parent sends a line, this process answers and starts, the parent
  // starts on the answer.
  await once(createInterface({ input: process.stdin }), 'line');
  report({ going: true });
  await store.commit([
    {
      op: 'putSession',
      session: {
        v: 2,
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

if (isEntry(import.meta.url)) {
  const [backend, dir, count] = process.argv.slice(2);
  main(backend, dir, Number(count)).catch((err: unknown) => {
    process.stderr.write(`${String(err)}\n`);
    process.exitCode = 1;
  });
}
