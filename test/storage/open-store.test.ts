// test/storage/open-store.test.ts: openStore opens each supported backend and refuses unknown names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError } from '../../contracts/errors.ts';
import { openStore } from '../../storage/open-store.ts';
import { SUPPORTED_BACKENDS } from '../../storage/store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

describe('openStore', () => {
  // postgres needs a server: test/storage/postgres-store.test.ts opens it; here only its missing URL.
  for (const backend of SUPPORTED_BACKENDS.filter((b) => b !== 'postgres')) {
    it(`opens the ${backend} backend`, async (t) => {
      const dir = await tmpDir(`warren-open-${backend}-`);
      t.after(() => dir.cleanup());
      const store = await openStore(backend, dir.path);
      t.after(() => store.close());
      assert.equal(store.backend, backend);
      assert.equal(store.persistent, backend !== 'memory');
    });
  }

  it('refuses an unknown backend with BAD_REQUEST, naming it and listing the supported backends', async () => {
    await assert.rejects(openStore('cassandra', '/nonexistent'), (err) => {
      assert.ok(isServiceError(err));
      assert.equal(err.code, 'BAD_REQUEST');
      assert.equal(err.status, 400);
      assert.equal(
        err.message,
        "realm backend 'cassandra' is not supported by this build; supported backends: lmdb, sqlite, postgres, jsonl, memory",
      );
      assert.deepEqual(err.details, { backend: 'cassandra', supported: ['lmdb', 'sqlite', 'postgres', 'jsonl', 'memory'] });
      return true;
    });
  });

  it('refuses the postgres backend without a database URL', async () => {
    await assert.rejects(openStore('postgres', '/nonexistent'), (err) => {
      assert.ok(isServiceError(err));
      assert.equal(err.code, 'BAD_REQUEST');
      assert.match(err.message, /WARREN_DATABASE_URL or \[storage\] postgres_url/);
      return true;
    });
  });
});
