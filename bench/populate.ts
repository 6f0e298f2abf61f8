// bench/populate.ts: fills a realm's LMDB store with many stored sessions without going through HTTP.
// The records are copies of a real session the server wrote (captureTemplate), with a new id and creation
// time each, written through storage/lmdb-store.ts (openLmdbStore + commit of putSession/putRows) in big
// batches, then compacted into the realm's store (see populate). The ledger is not copied (a stored
// session then starts its event seq at 1).
import { randomUUID } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { open } from 'lmdb';
import { performance } from 'node:perf_hooks';
import { openLmdbStore } from '../storage/lmdb-store.ts';
import type { Message } from '../contracts/transcript.ts';
import type { SessionRecord, StoreOp } from '../storage/store.ts';

/** One stored session as the server wrote it: its record and transcript rows, as JSON text. */
export interface SessionTemplate {
  sessionId: string;
  json: string;
}

/** Reads session `sessionId` back from a (closed) realm store to use as the template. */
export async function captureTemplate(realmDir: string, sessionId: string): Promise<SessionTemplate> {
  const store = await openLmdbStore(join(realmDir, 'store'));
  try {
    const session = await store.getSession(sessionId);
    if (!session) throw new Error(`template session ${sessionId} not found`);
    const { rows } = await store.readRows(sessionId);
    if (rows.length !== session.message_count) throw new Error('template session rows disagree with its record');
    return { sessionId, json: JSON.stringify({ session, rows }) };
  } finally {
    await store.close();
  }
}

export interface PopulateResult {
  sessions: number;
  elapsedMs: number;
  /** Of elapsedMs, the compacting copy. */
  compactMs: number;
  perSec: number;
  /** Ids of a sample of the written sessions (for turns against stored sessions). */
  sampleIds: string[];
}

/**
 * Writes `count` sessions shaped like `template` into `<realmDir>/store` (creating it). Batches of
 * `batch` sessions are one commit each; up to `inFlight` commits are issued before awaiting the oldest.
 *
 * The bulk load goes to a scratch environment that is then copied with compaction (lmdb backup) into the
 * realm's store. Loaded in place, the store would keep a large LMDB free-page list from the bulk
 * transactions, and every commit of the server would pay for it (tens of ms per turn, for seconds after
 * 100k sessions) until the pages are reused: a realm grown turn by turn does not look like that.
 */
export async function populate(
  realmDir: string,
  template: SessionTemplate,
  count: number,
  opts: { batch?: number; inFlight?: number; sample?: number; progress?: (done: number) => void } = {},
): Promise<PopulateResult> {
  const batch = opts.batch ?? 2000;
  const inFlight = opts.inFlight ?? 4;
  const sampleEvery = Math.max(1, Math.floor(count / (opts.sample ?? 2000)));
  const parts = template.json.split(template.sessionId);
  const scratch = join(realmDir, 'populate-scratch');
  const store = await openLmdbStore(scratch);
  const sampleIds: string[] = [];
  const pending: Promise<void>[] = [];
  const t0 = performance.now();
  const base = Date.now() - count;
  try {
    for (let done = 0; done < count;) {
      const n = Math.min(batch, count - done);
      const ops: StoreOp[] = [];
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        const { session, rows } = JSON.parse(parts.join(id)) as { session: SessionRecord; rows: Message[] };
        const at = base + done + i;
        ops.push({ op: 'putSession', session: { ...session, created_at_ms: at, updated_at_ms: at } });
        if (rows.length) ops.push({ op: 'putRows', sessionId: id, fromIndex: 0, rows });
        if ((done + i) % sampleEvery === 0) sampleIds.push(id);
      }
      pending.push(store.commit(ops));
      if (pending.length >= inFlight) await pending.shift();
      done += n;
      if (opts.progress && done % (batch * 50) === 0) opts.progress(done);
    }
    await Promise.all(pending);
  } finally {
    await store.close();
  }
  const c0 = performance.now();
  const env = open({ path: join(scratch, 'warren.lmdb'), maxDbs: 32 });
  try {
    await mkdir(join(realmDir, 'store'), { recursive: true });
    await env.backup(join(realmDir, 'store', 'warren.lmdb'), true);
  } finally {
    await env.close();
  }
  await rm(scratch, { recursive: true, force: true });
  const elapsedMs = performance.now() - t0;
  return { sessions: count, elapsedMs, compactMs: performance.now() - c0, perSec: (count * 1000) / elapsedMs, sampleIds };
}
