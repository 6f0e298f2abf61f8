// test/storage/open-store.test.ts: openStore opens each supported backend and refuses unknown names.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isServiceError } from '../../contracts/errors.ts';
import { openStore } from '../../storage/open-store.ts';
import { SUPPORTED_BACKENDS } from '../../storage/store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

describe('openStore', () => {
  for (const backend of SUPPORTED_BACKENDS) {
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
    await assert.rejects(openStore('postgres', '/nonexistent'), (err) => {
      assert.ok(isServiceError(err));
      assert.equal(err.code, 'BAD_REQUEST');
      assert.equal(err.status, 400);
      assert.equal(
        err.message,
        "realm backend 'postgres' is not supported by this build; supported backends: lmdb, sqlite, jsonl, memory",
      );
      assert.deepEqual(err.details, { backend: 'postgres', supported: ['lmdb', 'sqlite', 'jsonl', 'memory'] });
      return true;
    });
  });
});
