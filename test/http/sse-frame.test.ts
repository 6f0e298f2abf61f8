// test/http/sse-frame.test.ts: the SSE frame's data line is built by concatenation (http/sse.ts envelopeJson);
// its bytes must equal JSON.stringify of the envelope (wire-notes §2.2) for every entry, the ones that take
// the concatenation path and the ones that fall back to the envelope.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { HubEntry } from '../../actors/event-hub.ts';
import { envelopeJson, envelopeOf, frameParts } from '../../http/sse.ts';

const sessions = ['0192f3a4-5b6c-7d8e-9fab-0123456789ab', 'sess_abc', 'x', '', 'a"b\\c\u2028d'];
const payloads: unknown[] = [
  { delta: ' tok' },
  { delta: 'quote " backslash \\ newline \n\r tab \t nul \u0000 emoji 😀 lone \ud800' },
  {},
  undefined,
  null,
  { content: 'done', usage: { input_tokens: 10, output_tokens: 20 }, nested: [1, 'two', { three: null }] },
  { type: 'overridden', delta: 'x' },
  { b: 1, 1: 'integer key sorts first in the copy', a: 2 },
  { '01': 'leading zero key', z: 1 },
  { skipped: undefined, fn: () => 1, kept: true },
  { toJSON: () => ({ replaced: true }) },
  { when: new Date(0) },
  new Date(0),
  Object.assign(Object.create(null) as object, { bare: 'null prototype' }),
  ['array', 'payload'],
  { __proto__: null, proto: 'x' },
  JSON.parse('{"__proto__": {"own": "key"}, "a": 1}') as unknown,
];
const stamps: Array<[number, number]> = [
  [1, 1_795_888_486_036],
  [2 ** 40 + 7, 1_795_888_486_036],
  [123_456, 0],
  [5, 2 ** 49],
  [9, 1_795_888_486_036.5],
  [0, -1],
  [Number.NaN, 10],
  [7, Number.POSITIVE_INFINITY],
];

describe('SSE frame data', () => {
  it('equals JSON.stringify(envelopeOf(...)) for every session, payload, seq and timestamp', () => {
    let checked = 0;
    for (const sid of sessions) {
      const parts = frameParts(sid);
      for (const [i, payload] of payloads.entries()) {
        for (const [seq, ts] of stamps) {
          for (const kind of ['text_delta', 'run_completed', 'custom "kind"']) {
            const e = { seq, kind, timestamp_ms: ts, payload } as unknown as HubEntry;
            assert.equal(envelopeJson(parts, e), JSON.stringify(envelopeOf(sid, e)), `${sid} ${kind} ${seq} ${ts} payload #${i}`);
            checked++;
          }
        }
      }
    }
    assert.equal(checked, sessions.length * payloads.length * stamps.length * 3);
  });
});
