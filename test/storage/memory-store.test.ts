// test/storage/memory-store.test.ts: the memory backend passes the store conformance suite and persists nothing.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { createMemoryStore } from '../../storage/memory-store.ts';
import { storeConformance } from '../conformance/store.suite.ts';

storeConformance('memory', {
  async open() {
    return createMemoryStore();
  },
  async cleanup() {},
});

it('memory store reports backend memory and persistent false', async () => {
  const store = createMemoryStore();
  assert.equal(store.backend, 'memory');
  assert.equal(store.persistent, false);
  await store.close();
  await assert.rejects(store.getSession('x'));
});
