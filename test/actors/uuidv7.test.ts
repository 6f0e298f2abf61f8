// actors/uuidv7.ts: version and variant bits, the timestamp in the first 48 bits, and ids of later
// instants sorting after earlier ones (what keeps the store's key spaces growing at one end).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from '../../actors/uuidv7.ts';

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('uuidv7', () => {
  it('sets version 7 and the RFC 9562 variant, and carries the instant', () => {
    const at = Date.UTC(2026, 10, 28, 12, 0, 0, 123);
    const id = uuidv7(at);
    assert.match(id, V7);
    assert.equal(parseInt(id.replace(/-/g, '').slice(0, 12), 16), at);
  });

  it('sorts by instant and stays unique across pool refills', () => {
    const ids = Array.from({ length: 2000 }, (_, i) => uuidv7(1_700_000_000_000 + Math.floor(i / 4)));
    for (const id of ids) assert.match(id, V7);
    assert.equal(new Set(ids).size, ids.length);
    for (let i = 4; i < ids.length; i += 4) assert.ok(ids[i - 1] < ids[i], `${ids[i - 1]} sorts before ${ids[i]}`);
  });
});
