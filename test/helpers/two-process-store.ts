// test/helpers/two-process-store.ts: the two-process check shared by the lmdb and sqlite store tests. This
// process and a child process (test/helpers/store-child.ts) open one store directory at once, both read,
// and both race turn-like commits (a row plus a ledger entry) into one session.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TestContext } from 'node:test';
import type { Store } from '../../storage/store.ts';
import { appendContended } from './store-child.ts';
import { nodeEntry } from './child-entry.ts';
import { sessionRecord } from './store-builders.ts';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));
const childScript = fileURLToPath(new URL('./store-child.ts', import.meta.url));

/**
 * Runs the contention against `store` (opened on `dir` by the caller) and a child on the same `dir`: every
 * commit lands exactly once, the transcript and the ledger stay contiguous, and row i belongs to the
 * writer of ledger seq i + 1 (a stale batch never lands half).
 */
export async function twoProcessContention(t: TestContext, backend: string, dir: string, store: Store, perWriter = 30): Promise<void> {
  await store.commit([{ op: 'putSession', session: sessionRecord('parent', 1) }]);
  const child = spawn(process.execPath, [...nodeEntry(childScript), backend, dir, String(perWriter)], {
    cwd: repoRoot,
    stdio: ['pipe', 'pipe', 'pipe'],
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

  // Both processes now race for the same session's next row and ledger seq.
  child.stdin.end('go\n');
  assert.deepEqual(JSON.parse((await lines.next()).value as string), { going: true });
  const conflicts = await appendContended(store, 'shared', 'parent', perWriter);
  const [code] = await exited;
  assert.equal(code, 0, stderr);
  const done = await lines.next();
  const report = JSON.parse(done.value as string) as { done: boolean; conflicts: number };
  assert.equal(report.done, true);
  t.diagnostic(`${backend}: ${conflicts} parent and ${report.conflicts} child retries after CONFLICT`);

  const child2 = await store.getSession('child');
  assert.equal(child2?.labels.pid, String(child.pid));
  assert.equal(await store.countSessions(), 2);
  const ledger = await store.readLedger('shared', 0);
  assert.deepEqual(
    ledger.map((e) => e.seq),
    Array.from({ length: 2 * perWriter }, (_, i) => i + 1),
  );
  const writers = ledger.map((e) => (e.payload as { writer: string }).writer);
  assert.equal(writers.filter((w) => w === 'parent').length, perWriter);
  assert.equal(writers.filter((w) => w === 'child').length, perWriter);
  const { rows, total } = await store.readRows('shared');
  assert.equal(total, 2 * perWriter);
  assert.deepEqual(
    rows.map((r) => (r.role === 'user' ? r.content : r.role)),
    ledger.map((e) => `${writers[e.seq - 1]} ${e.seq}`),
  );
}
