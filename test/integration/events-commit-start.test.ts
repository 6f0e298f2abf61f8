// test/integration/events-commit-start.test.ts: a stream starts where the commit ended (issue 32 §2).
// A turn of 400 text deltas commits its events in large batches, which the event hub paces out to
// subscribers 32 per event-loop turn; a `GET /sessions/{id}/events` opened right after that turn's 200
// must not receive any of it. Without Last-Event-ID: session_loaded's last_seq is the last committed seq
// (the ledger's head) and the next turn's events follow it with no gap; with Last-Event-ID: exactly the
// events after that id, no duplicate. On every backend (lmdb, sqlite, jsonl, memory, postgres) and on a
// cluster node that does not own the session (its ledger tail already running and lagging the commit).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { call, createSession, startApp, startClusterNode, type TestApp } from '../helpers/app.ts';
import { kindsOf, openEvents, seqsOf, type Envelope, type SseClient } from '../helpers/sse-client.ts';
import { testPostgres } from '../helpers/postgres.ts';
import type { Script } from '../../providers/scripted.ts';

const DELTAS = 400;
/** Every reply streams DELTAS one-character deltas: each turn commits hundreds of events at once. */
const script: Script = () => ({ chunks: Array.from({ length: DELTAS }, (_, i) => String.fromCharCode(97 + (i % 26))) });

const completed = (c: SseClient): number => kindsOf(c.envelopes()).filter((k) => k === 'run_completed').length;

function loadedOf(c: SseClient): { last_seq: number } {
  assert.equal(c.frames[0]?.event, 'session_loaded', 'the stream starts with session_loaded');
  return JSON.parse(c.frames[0].data);
}

/** Strictly increasing seqs: no duplicate. */
function assertIncreasing(envs: Envelope[]): void {
  const seqs = seqsOf(envs);
  for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i] > seqs[i - 1], `seq ${seqs[i]} after ${seqs[i - 1]}: duplicate or reorder`);
}

/** The last committed seq as the store sees it (the ledger's head), or null on the memory realm. */
async function ledgerHead(base: string, id: string): Promise<number | null> {
  const r = await call(base, 'GET', `/sessions/${id}/ledger?limit=1`);
  if (r.status === 409 || r.body?.code === 'SESSION_PERSISTENCE_DISABLED') return null;
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.last_seq;
}

/**
 * Runs a turn on `owner`, opens a stream on `reader` right after its 200, runs the next turn and checks
 * that the stream holds exactly the second turn, starting right after session_loaded's last_seq; then a
 * Last-Event-ID reconnect gets exactly what followed the id.
 */
async function startsWhereTheCommitEnded(owner: TestApp, reader: TestApp, id: string, t: TestContext): Promise<void> {
  const turn1 = await call(owner.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'one' });
  assert.equal(turn1.status, 200, JSON.stringify(turn1.body));
  const sse = await openEvents(reader.url, id);
  t.after(() => sse.close());
  assert.equal(sse.status, 200);
  await sse.until((c) => c.frames.length >= 1, 'session_loaded');
  const loaded = loadedOf(sse);
  const head = await ledgerHead(owner.url, id);
  if (head !== null) assert.equal(loaded.last_seq, head, 'session_loaded.last_seq is the last committed seq');

  const turn2 = await call(owner.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
  assert.equal(turn2.status, 200, JSON.stringify(turn2.body));
  await sse.until((c) => completed(c) >= 1, 'run_completed of the second turn');
  const envs = sse.envelopes();
  assert.equal(completed(sse), 1, 'exactly one run_completed: the first turn is not replayed');
  assert.equal(envs[0].seq, loaded.last_seq + 1, 'the first event follows session_loaded.last_seq');
  assert.equal(envs[0].payload.type, 'run_started');
  assert.equal((envs[0].payload.input as { content?: string } | undefined)?.content, 'two');
  assertIncreasing(envs);
  const last = envs.at(-1)!;
  assert.equal(last.payload.type, 'run_completed');
  if (head !== null) assert.equal(last.seq, await ledgerHead(owner.url, id), 'run_completed is the new ledger head');
  sse.close();

  // Last-Event-ID in the middle of the second turn: exactly the committed events after it.
  const from = envs[Math.floor(envs.length / 2)].seq;
  const again = await openEvents(reader.url, id, { 'Last-Event-ID': String(from) });
  t.after(() => again.close());
  await again.until((c) => completed(c) >= 1, 'run_completed in the replay');
  const replayed = again.envelopes();
  assertIncreasing(replayed);
  assert.ok(replayed.length > 0 && replayed[0].seq > from, 'nothing at or before Last-Event-ID');
  assert.equal(replayed.at(-1)!.seq, last.seq);
  assert.equal(completed(again), 1);
  if (head !== null) {
    // Persistent realms replay the ledger: exactly its entries after `from`.
    const ledger = await call(owner.url, 'GET', `/sessions/${id}/ledger?after_seq=${from}&limit=1000`);
    assert.deepEqual(
      seqsOf(replayed),
      (ledger.body.events as Envelope[]).map((e) => e.seq),
    );
  } else {
    assert.deepEqual(
      seqsOf(replayed),
      seqsOf(envs).filter((s) => s > from),
    );
  }
}

const pg = await testPostgres();

describe('a stream opened after a commit starts where the commit ended', () => {
  for (const backend of ['lmdb', 'sqlite', 'jsonl', 'memory'] as const) {
    it(`on the ${backend} backend`, async (t) => {
      const app = await startApp(t, script, { realmBackend: backend });
      const id = await createSession(app.url, { prompt: 'zero' });
      await startsWhereTheCommitEnded(app, app, id, t);
    });
  }

  it('on the postgres backend', { skip: pg.ok ? false : `postgres: ${!pg.ok && pg.reason}` }, async (t) => {
    if (!pg.ok) return;
    const url = await pg.server.createDatabase();
    const app = await startClusterNode(t, url, { script });
    const id = await createSession(app.url, { prompt: 'zero' });
    await startsWhereTheCommitEnded(app, app, id, t);
  });

  it(
    'through a cluster node that does not own the session (a running ledger tail)',
    { skip: pg.ok ? false : `postgres: ${!pg.ok && pg.reason}` },
    async (t) => {
      if (!pg.ok) return;
      const url = await pg.server.createDatabase();
      // A slow tail poll: the tail lags the owner's commit when the stream opens.
      const a = await startClusterNode(t, url, { script, cluster: { tail_poll_ms: 400 } });
      const b = await startClusterNode(t, url, { cluster: { tail_poll_ms: 400 } });
      const id = await createSession(a.url, { prompt: 'zero' });
      // An earlier subscriber on b keeps b's tail of the session running.
      const early = await openEvents(b.url, id);
      t.after(() => early.close());
      await early.until((c) => c.frames.length >= 1, 'session_loaded on the early stream');
      await startsWhereTheCommitEnded(a, b, id, t);
      await early.until((c) => completed(c) >= 2, 'both turns on the early stream');
      assertIncreasing(early.envelopes());
    },
  );
});
