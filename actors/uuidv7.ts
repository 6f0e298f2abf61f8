// actors/uuidv7.ts: time-ordered ids (UUIDv7, RFC 9562) for sessions, schedules, occurrences and work
// items. Node 20's crypto has no v7 generator; this one puts `nowMs` in the first 48 bits and random bits
// in the rest. Ids made later sort later, so the store's key spaces grow at one end: a new session's
// record, rows and ledger share B-tree pages with the sessions made just before it instead of touching a
// random page in each (fewer pages written and kept mapped per session).
import { randomFillSync } from 'node:crypto';

const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Random bytes drawn in blocks (one fill per 409 ids, not one per id). */
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** A UUIDv7 string whose 48-bit timestamp is `nowMs`. */
export function uuidv7(nowMs: number = Date.now()): string {
  if (offset + 10 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const r = offset;
  offset += 10;
  let t = Math.max(0, Math.floor(nowMs));
  let ts = '';
  for (let i = 0; i < 6; i++) {
    ts = HEX[t % 256] + ts;
    t = Math.floor(t / 256);
  }
  const h = (i: number): string => HEX[pool[r + i]];
  const version = HEX[(pool[r] & 0x0f) | 0x70];
  const variant = HEX[(pool[r + 2] & 0x3f) | 0x80];
  return `${ts.slice(0, 8)}-${ts.slice(8)}-${version}${h(1)}-${variant}${h(3)}-${h(4)}${h(5)}${h(6)}${h(7)}${h(8)}${h(9)}`;
}
