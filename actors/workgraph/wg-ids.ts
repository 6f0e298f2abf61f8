// actors/workgraph/wg-ids.ts: time-ordered ids (UUIDv7, RFC 9562) for work items (`work_<uuidv7>`) and
// attention bindings. Node 20's crypto has no v7 generator; this builds one from the clock and random bytes.
import { randomBytes } from 'node:crypto';

/** A UUIDv7 string whose 48-bit timestamp is `nowMs`. */
export function uuidv7(nowMs: number): string {
  const b = randomBytes(16);
  let ts = Math.max(0, Math.floor(nowMs));
  for (let i = 5; i >= 0; i--) {
    b[i] = ts % 256;
    ts = Math.floor(ts / 256);
  }
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
