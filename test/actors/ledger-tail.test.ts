// test/actors/ledger-tail.test.ts: the ledger tails a cluster node streams remote sessions from
// (actors/cluster/ledger-tail.ts), on a real (memory) store. One tail per session, shared by its
// subscribers; entries committed after it started reach every subscriber once, in seq order, also when a
// backlog larger than a page arrives at once; a reconnect newer than what the tail read makes it read at
// once; a tail without subscribers stops after its idle time; an archived session ends its streams
// ('archived'), close() ends them all ('shutdown') and refuses new ones. With shared heads (the postgres
// path) one heads read per period covers every tailed session, and only a session whose head moved has
// its ledger read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { LedgerTails } from '../../actors/cluster/ledger-tail.ts';
import type { EventSubscriber, HubEntry } from '../../actors/event-hub.ts';
import { isServiceError } from '../../contracts/errors.ts';
import { createMemoryStore } from '../../storage/memory-store.ts';
import type { Store } from '../../storage/store.ts';
import { entries, sessionRecord } from '../helpers/store-builders.ts';

const ID = '11111111-1111-4111-8111-111111111111';

class Collector implements EventSubscriber {
  readonly seqs: number[] = [];
  closed: 'archived' | 'shutdown' | undefined;
  push(e: HubEntry): void {
    this.seqs.push(e.seq);
  }
  close(reason: 'archived' | 'shutdown'): void {
    this.closed = reason;
  }
}

async function until(pred: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const seqRange = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

async function setup(pollMs: number, idleMs = 60_000): Promise<{ store: Store; tails: LedgerTails }> {
  const store = createMemoryStore();
  await store.commit([
    { op: 'putSession', session: sessionRecord(ID, 1000) },
    { op: 'appendLedger', sessionId: ID, entries: entries(1, 2, 3) },
  ]);
  const tails = new LedgerTails({
    store,
    log: pino({ level: 'silent' }),
    pollMs: () => pollMs,
    idleMs,
    hostsHere: () => false,
    now: Date.now,
  });
  return { store, tails };
}

describe('ledger tails', () => {
  it('share one tail per session and hand every later entry to each subscriber once, in order', async (t) => {
    const { store, tails } = await setup(10);
    t.after(() => tails.close());
    const [one, two] = await Promise.all([tails.open(ID), tails.open(ID)]);
    assert.equal(one, two);
    assert.equal(tails.size, 1);
    assert.equal(one.hub.deliveredSeq, 3);
    const a = new Collector();
    const b = new Collector();
    one.subscribe(a);
    one.subscribe(b);
    await store.commit([{ op: 'appendLedger', sessionId: ID, entries: entries(4, 5) }]);
    // A backlog of several pages at once.
    await store.commit([{ op: 'appendLedger', sessionId: ID, entries: entries(...seqRange(6, 1000)) }]);
    await until(() => a.seqs.length >= 997 && b.seqs.length >= 997, 'entries 4..1000');
    assert.deepEqual(a.seqs, seqRange(4, 1000));
    assert.deepEqual(b.seqs, seqRange(4, 1000));
    assert.equal(one.hub.deliveredSeq, 1000);
  });

  it('reads at once for a subscriber that has seen more than the tail, and stops when idle', async (t) => {
    const { store, tails } = await setup(600_000, 50);
    t.after(() => tails.close());
    const tail = await tails.open(ID);
    await store.commit([{ op: 'appendLedger', sessionId: ID, entries: entries(4, 5, 6) }]);
    // The poll period is ten minutes: only settle() can have read seq 6.
    const again = await tails.open(ID, 6);
    assert.equal(again, tail);
    assert.equal(tail.hub.deliveredSeq, 6);
    const off = tail.subscribe(new Collector());
    off();
    await until(() => tail.stopped, 'the idle tail to stop');
    assert.equal(tails.size, 0);
    const fresh = await tails.open(ID);
    assert.notEqual(fresh, tail);
    assert.equal(fresh.hub.deliveredSeq, 6);
  });

  it('ends the streams of an archived session, and every stream at close', async (t) => {
    const { store, tails } = await setup(10);
    t.after(() => tails.close());
    const tail = await tails.open(ID);
    const watcher = new Collector();
    tail.subscribe(watcher);
    await store.commit([{ op: 'putSession', session: sessionRecord(ID, 1000, { archived: true }) }]);
    await until(() => watcher.closed !== undefined, 'the archived stream to end');
    assert.equal(watcher.closed, 'archived');
    assert.equal(tails.size, 0);

    const other = '22222222-2222-4222-8222-222222222222';
    await store.commit([{ op: 'putSession', session: sessionRecord(other, 1000) }]);
    const live = new Collector();
    (await tails.open(other)).subscribe(live);
    tails.close();
    assert.equal(live.closed, 'shutdown');
    await assert.rejects(tails.open(other), (err) => isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE');
  });

  it('with shared heads: one read per period for every tailed session, ledger reads only where the head moved', async (t) => {
    const base = createMemoryStore();
    let ledgerReads = 0;
    // The real store, counting ledger reads.
    const store: Store = new Proxy(base, {
      get(target, prop) {
        if (prop === 'readLedger') {
          return (...args: Parameters<Store['readLedger']>) => {
            ledgerReads++;
            return target.readLedger(...args);
          };
        }
        const value = Reflect.get(target, prop, target) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const other = '22222222-2222-4222-8222-222222222222';
    await base.commit([
      { op: 'putSession', session: sessionRecord(ID, 1000) },
      { op: 'putSession', session: sessionRecord(other, 1000) },
    ]);
    const headCalls: string[][] = [];
    const tails = new LedgerTails({
      store,
      log: pino({ level: 'silent' }),
      pollMs: () => 10,
      idleMs: 60_000,
      hostsHere: () => false,
      now: Date.now,
      async heads(ids) {
        headCalls.push([...ids]);
        const out = new Map<string, { head: number; archived: boolean | null }>();
        for (const id of ids) {
          const rec = await base.getSession(id);
          out.set(id, { head: await base.lastLedgerSeq(id), archived: rec ? rec.archived : null });
        }
        return out;
      },
    });
    t.after(() => tails.close());
    const busy = new Collector();
    const quiet = new Collector();
    (await tails.open(ID)).subscribe(busy);
    (await tails.open(other)).subscribe(quiet);
    await until(() => headCalls.filter((ids) => ids.length === 2).length >= 3, 'three heads reads of both sessions');
    assert.equal(ledgerReads, 0, 'nothing moved: no ledger read');
    await base.commit([{ op: 'appendLedger', sessionId: ID, entries: entries(1, 2, 3) }]);
    await until(() => busy.seqs.length === 3, "the busy session's entries");
    assert.deepEqual(busy.seqs, [1, 2, 3]);
    assert.deepEqual(quiet.seqs, []);
    assert.equal(ledgerReads, 1, 'one ledger read, for the session whose head moved');
    await base.commit([{ op: 'putSession', session: sessionRecord(other, 1000, { archived: true }) }]);
    await until(() => quiet.closed !== undefined, "the archived session's stream to end");
    assert.equal(quiet.closed, 'archived');
    assert.equal(busy.closed, undefined);
    assert.ok(headCalls.every((ids) => ids.length <= 2));
  });
});
