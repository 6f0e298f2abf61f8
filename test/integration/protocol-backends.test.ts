// The four foreign protocols on every backend, each driven by its official client package: one server per
// backend (lmdb, sqlite, jsonl, postgres), one session continued by the openai, @langchain/langgraph-sdk,
// @ag-ui/client and @a2a-js/sdk clients in turn (a plain and a streamed turn each, reads, a cancel:
// test/helpers/protocol-clients.ts), then one transcript in Warren's REST history. The deeper scenarios
// (resume after a dropped stream, tool calls, the 0.3 wire) run on the default backend in protocol-*.test.ts.
// Postgres skips, saying why, where it cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApp } from '../helpers/app.ts';
import { skipUnlessRequired } from '../helpers/absent.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { allRoundTrips, echoScript } from '../helpers/protocol-clients.ts';

const BACKENDS = ['lmdb', 'sqlite', 'jsonl', 'postgres'] as const;

for (const backend of BACKENDS) {
  const pg = backend === 'postgres' ? await testPostgres() : undefined;
  const skip = pg && !pg.ok ? skipUnlessRequired('postgres', `postgres tests skipped: ${pg.reason}`) : false;
  describe(`foreign protocol clients on ${backend}`, () => {
    it('openai, langgraph-sdk, ag-ui and a2a clients continue one session; one transcript', { skip }, async (t) => {
      const env = pg?.ok ? { ...process.env, WARREN_DATABASE_URL: await pg.server.createDatabase() } : undefined;
      const app = await startApp(t, echoScript, { realmBackend: backend, ...(env ? { env } : {}) });
      assert.equal(app.backend, backend);
      await allRoundTrips(t, app.url);
    });
  });
}
