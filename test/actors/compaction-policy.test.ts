// The compaction trigger and split rules (SPEC.md "Limits"), as pure functions.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  compactionThreshold,
  estimateHistoryTokens,
  estimateTokens,
  extendHistory,
  historyStats,
  jsonSize,
  requestJsonBytes,
  shouldCompact,
  splitForCompaction,
  type TriggerInputs,
} from '../../actors/compaction-policy.ts';
import type { Message } from '../../contracts/transcript.ts';

const at = '2024-01-01T00:00:00.000Z';
const user = (text: string, role?: 'injected_context' | 'compaction_summary'): Message => ({
  role: 'user',
  content: text,
  created_at: at,
  ...(role ? { transcript_role: role } : {}),
});
const reply = (text: string): Message => ({
  role: 'block_assistant',
  blocks: [{ block_type: 'text', data: { text } }],
  stop_reason: 'end_turn',
  created_at: at,
});
const system = (text: string): Message => ({ role: 'system', content: text, created_at: at });

function turns(n: number, size = 10): Message[] {
  return Array.from({ length: n }, (_, i) => [user(`u${i} ${'x'.repeat(size)}`), reply(`a${i}`)]).flat();
}

function inputs(history: Message[], over: Partial<TriggerInputs> = {}): TriggerInputs {
  return { history, threshold: 1_000_000, requestBytes: 0, toolTokens: 0, outputReserve: 0, minTurnsBetween: 3, ...over };
}

describe('compaction threshold', () => {
  it('is the configured value, else 4/5 of the context window, else 100,000', () => {
    assert.equal(compactionThreshold(1234, 200_000), 1234);
    assert.equal(compactionThreshold(undefined, 200_000), 160_000);
    assert.equal(compactionThreshold(undefined, undefined), 100_000);
  });
});

describe('compaction trigger', () => {
  it('never fires on the first turn, whatever the sizes', () => {
    const d = shouldCompact(
      inputs([system('s'.repeat(10_000))], { threshold: 1, lastInputTokens: 10, requestBytes: 10, maxRequestBytes: 1 }),
    );
    assert.equal(d.compact, false);
  });

  it('fires when estimated history tokens reach the threshold, bypassing the turn guard', () => {
    const history = [user('old', 'compaction_summary'), ...turns(1)];
    const t = estimateTokens(history);
    assert.deepEqual(shouldCompact(inputs(history, { threshold: t })).reason, 'history_tokens');
    assert.equal(shouldCompact(inputs(history, { threshold: t + 1 })).compact, false);
  });

  it('fires on a provider-byte crossing (4/5 of max_request_bytes), bypassing the turn guard', () => {
    const history = [user('old', 'compaction_summary'), ...turns(1)];
    assert.equal(shouldCompact(inputs(history, { requestBytes: 80, maxRequestBytes: 100 })).reason, 'provider_bytes');
    assert.equal(shouldCompact(inputs(history, { requestBytes: 79, maxRequestBytes: 100 })).compact, false);
  });

  it('holds last-input-token and request-budget crossings until 3 turns after the last compaction', () => {
    for (const over of [{ lastInputTokens: 500 }, { outputReserve: 600 }] as Array<Partial<TriggerInputs>>) {
      const two = [...turns(5), user('sum', 'compaction_summary'), ...turns(2)];
      const three = [...turns(5), user('sum', 'compaction_summary'), ...turns(3)];
      assert.equal(shouldCompact(inputs(two, { threshold: 500, ...over })).compact, false, JSON.stringify(over));
      assert.equal(shouldCompact(inputs(three, { threshold: 500, ...over })).compact, true, JSON.stringify(over));
      // Before any compaction, the guard does not apply (only "never on the first turn" does).
      assert.equal(shouldCompact(inputs(turns(1), { threshold: 500, ...over })).compact, true);
    }
  });
});

describe('compaction split', () => {
  it('keeps the last recent turns with their injected context, and the system rows in order', () => {
    const history = [system('s0'), ...turns(3), system('s1'), user('ctx', 'injected_context'), user('u3'), reply('a3'), ...turns(3)];
    const split = splitForCompaction(history, 4)!;
    assert.deepEqual(
      split.systemRows.map((r) => (r as { content: string }).content),
      ['s0', 's1'],
    );
    assert.equal(split.recent[0].role, 'user');
    assert.equal((split.recent[0] as { transcript_role?: string }).transcript_role, 'injected_context');
    assert.equal(split.recent.length, 3 + 6);
    assert.equal(split.discarded.length, 6);
    assert.equal(splitForCompaction(turns(4), 4), undefined, 'nothing older than the recent turns');
  });
});

describe('remembered JSON sizes', () => {
  it('estimateTokens and requestJsonBytes equal what serialising the whole request gives', () => {
    const rows = [
      { role: 'user', content: 'héllo ✓ "quoted"', created_at: '2026-01-01T00:00:00.000Z' },
      {
        role: 'block_assistant',
        blocks: [{ block_type: 'text', data: { text: 'ok' } }],
        stop_reason: 'end_turn',
        created_at: '2026-01-01T00:00:00.000Z',
      },
      { role: 'user', content: [{ type: 'text', text: 'x' }], created_at: '2026-01-01T00:00:00.000Z', transcript_role: undefined },
    ];
    const tools = [{ name: 't', description: 'ünïcode', input_schema: { type: 'object' } }];
    for (const n of [0, 1, 3]) {
      const h = rows.slice(0, n);
      assert.equal(estimateTokens(h), Math.ceil(JSON.stringify(h).length / 4));
      assert.equal(estimateTokens(h), estimateTokens(h), 'the remembered size is the same the second time');
      for (const system of [undefined, 'sys ✓']) {
        for (const t of [undefined, [], tools]) {
          assert.equal(requestJsonBytes(system, h, t), Buffer.byteLength(JSON.stringify({ system, messages: h, tools: t })));
        }
      }
    }
  });
});

describe('history stats carried across commits', () => {
  it('a history extended turn by turn has the stats of the same rows measured afresh', () => {
    let h: Message[] = turns(2);
    historyStats(h); // measured once, then only extended
    const steps: Message[][] = [
      [user('next ✓')],
      [reply('r')],
      [user('summary', 'compaction_summary')],
      [user('ctx', 'injected_context'), user('after')],
      turns(3),
    ];
    for (const rows of steps) {
      h = extendHistory(h, rows);
      const fresh = [...h];
      assert.deepEqual(historyStats(h), historyStats(fresh));
      assert.equal(estimateHistoryTokens(h), estimateTokens(fresh));
      assert.equal(estimateHistoryTokens(h), Math.ceil(JSON.stringify(fresh).length / 4));
    }
    assert.deepEqual(historyStats(h), {
      length: h.length,
      rowChars: historyStats([...h]).rowChars,
      since: 4,
      total: 7,
      compactedBefore: true,
    });
  });

  it('an array that grew in place is measured again', () => {
    const h = turns(1);
    const first = historyStats(h);
    h.push(user('more'));
    assert.equal(historyStats(h).length, first.length + 1);
    assert.equal(historyStats(h).total, first.total + 1);
  });
});

describe('jsonSize', () => {
  it('matches JSON.stringify on nested values, unicode, escapes, undefined members and shared parts', () => {
    const schema = { type: 'object', properties: { a: { type: 'string', enum: ['x', 'ÿ'] } }, required: ['a'] };
    const values: unknown[] = [
      {},
      [],
      [1, 'two', null, true, undefined],
      { a: undefined, b: 1.5, c: 'q"\\\n\u2028', d: [{ e: '✓' }] },
      { name: 't', description: undefined, input_schema: schema },
      { name: 'u', input_schema: schema },
      { at: new Date(0) },
      [{ block_type: 'text', data: { text: '\ud83d\ude00 emoji' } }],
      { n: -0, big: 1e21, nan: NaN },
    ];
    for (const v of values) {
      const text = JSON.stringify(v);
      assert.deepEqual(jsonSize(v), { chars: text.length, bytes: Buffer.byteLength(text) }, text);
    }
  });
});
