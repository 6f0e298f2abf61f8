// test/actors/mob-envelope.test.ts: the unified envelope of the mob toolkit layer: merge order (by
// timestamp, agent first on ties, stable) and normalization of module event lines (rejects malformed
// lines naming them, returns valid lines exactly as parsed); and UTF-8-safe result bounding.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mergeEvents, normalizeModuleLines, NormalizationError } from '../../actors/mob/envelope.ts';
import { boundText } from '../../actors/mob/mob-helpers.ts';
import type { UnifiedEnvelope } from '../../contracts/mob.ts';

const agent = (id: string, ts: number): UnifiedEnvelope => ({
  event_id: id,
  source: 'agent',
  timestamp_ms: ts,
  event: { agent_id: 'a', event_type: 'run_started' },
});
const mod = (id: string, ts: number): UnifiedEnvelope => ({
  event_id: id,
  source: 'module',
  timestamp_ms: ts,
  event: { module: 'router', event_type: 'route_resolved', payload: {} },
});

describe('mob envelope', () => {
  it('merges by timestamp with agent events first on ties, keeping input order otherwise', () => {
    const merged = mergeEvents([agent('a1', 5), agent('a2', 10), agent('a3', 10)], [mod('m1', 1), mod('m2', 10), mod('m3', 12)]);
    assert.deepEqual(
      merged.map((e) => e.event_id),
      ['m1', 'a1', 'a2', 'a3', 'm2', 'm3'],
    );
  });

  it('normalizes valid module lines without altering them', () => {
    const lines = [
      JSON.stringify({
        event_id: 'e1',
        source: 'module',
        timestamp_ms: 1,
        event: { module: 'delivery', event_type: 'delivery_sent', payload: { x: 1 } },
        extra: 'kept',
      }),
      JSON.stringify({
        event_id: 'e2',
        source: 'module',
        timestamp_ms: 1,
        event: { module: 'gating', event_type: 'gate_evaluated', payload: null },
      }),
    ];
    const out = normalizeModuleLines(lines);
    assert.deepEqual(
      out,
      lines.map((l) => JSON.parse(l)),
    );
  });

  it('rejects malformed lines, naming the line', () => {
    const ok = (id: string, ts: number) =>
      JSON.stringify({ event_id: id, source: 'module', timestamp_ms: ts, event: { module: 'm', event_type: 't', payload: {} } });
    const cases: Array<[string[], number, RegExp]> = [
      [['not json'], 0, /not JSON/],
      [[ok('a', 1), JSON.stringify({ source: 'module', timestamp_ms: 2, event: { module: 'm', event_type: 't' } })], 1, /event_id missing/],
      [[ok('a', 1), ok('a', 2)], 1, /duplicate event_id/],
      [[ok('a', 5), ok('b', 4)], 1, /goes backwards/],
      [
        [JSON.stringify({ event_id: 'a', source: 'agent', timestamp_ms: 1, event: { module: 'm', event_type: 't' } })],
        0,
        /source must be 'module'/,
      ],
      [
        [JSON.stringify({ event_id: 'a', source: 'module', timestamp_ms: 1.5, event: { module: 'm', event_type: 't' } })],
        0,
        /timestamp_ms/,
      ],
      [[JSON.stringify({ event_id: 'a', source: 'module', timestamp_ms: 1, event: { module: 'm' } })], 0, /module and event_type/],
    ];
    for (const [lines, line, reason] of cases) {
      assert.throws(
        () => normalizeModuleLines(lines),
        (err: unknown) => err instanceof NormalizationError && err.line === line && reason.test(err.message),
      );
    }
  });

  it('bounds text at a UTF-8 character boundary', () => {
    assert.deepEqual(boundText('héllo', 100), { text: 'héllo', truncated: false, bytes: 6 });
    assert.deepEqual(boundText('héllo', 2), { text: 'h', truncated: true, bytes: 6 });
    assert.deepEqual(boundText('héllo', 3), { text: 'hé', truncated: true, bytes: 6 });
    assert.deepEqual(boundText('🦦🦦', 5), { text: '🦦', truncated: true, bytes: 8 });
  });
});
