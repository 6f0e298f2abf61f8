// The in-memory namespace graph (actors/workgraph/wg-graph.ts): edge rules, readiness and ordering, and
// hydration of a large namespace (no argument-spread limits).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { NamespaceGraph } from '../../actors/workgraph/wg-graph.ts';
import { applyToItem, newItemRecord } from '../../actors/workgraph/wg-namespace.ts';
import { HOST_CALLER } from '../../actors/workgraph/wg-host.ts';
import type { StoredWorkItem } from '../../contracts/stored-records.ts';
import type { WorkEvent } from '../../contracts/workgraph.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
function item(id: string, extra: Partial<StoredWorkItem['fields']> = {}): StoredWorkItem {
  const at = new Date(T0).toISOString();
  return newItemRecord(
    { id, title: id, priority: 'medium', labels: [], created_at: at, updated_at: at, external_refs: [], ...extra },
    { kind: 'self_attest' },
  );
}
const edge = (from_id: string, to_id: string, kind: 'blocks' | 'parent' | 'related') => ({
  realm_id: 'r',
  namespace: 'n',
  from_id,
  to_id,
  kind,
  created_at: '',
});
const code = (fn: () => void): unknown => {
  try {
    fn();
  } catch (err) {
    return (err as { details?: { reason?: string } }).details?.reason;
  }
  return 'ok';
};

describe('namespace graph', () => {
  it('checks edges: endpoints, self, duplicates, and cycles only for blocks and parent', () => {
    const g = new NamespaceGraph('r', 'n');
    for (const id of ['a', 'b', 'c']) g.putItem(item(id));
    assert.equal(
      code(() => g.checkEdge('a', 'zz', 'blocks')),
      'invalid_endpoint',
    );
    assert.equal(
      code(() => g.checkEdge('a', 'a', 'related')),
      'self_edge',
    );
    g.putEdge(edge('a', 'b', 'blocks'));
    g.putEdge(edge('b', 'c', 'blocks'));
    assert.equal(
      code(() => g.checkEdge('a', 'b', 'blocks')),
      'duplicate_edge',
    );
    assert.equal(
      code(() => g.checkEdge('c', 'a', 'blocks')),
      'cycle',
    );
    assert.equal(
      code(() => g.checkEdge('c', 'a', 'parent')),
      'ok',
    );
    assert.equal(
      code(() => g.checkEdge('c', 'a', 'related')),
      'ok',
    );
  });

  it('orders ready items by priority, due time, creation and id, and re-evaluates after changes', () => {
    const g = new NamespaceGraph('r', 'n');
    g.putItem(item('low', { priority: 'low' }));
    g.putItem(item('due-late', { due_at: '2030-02-01T00:00:00Z' }));
    g.putItem(item('due-soon', { due_at: '2030-01-05T00:00:00Z' }));
    g.putItem(item('high', { priority: 'high' }));
    g.putItem(item('gated', { not_before: '2030-01-02T00:00:00Z' }));
    assert.deepEqual(
      g.ready(T0).map((r) => r.fields.id),
      ['high', 'due-soon', 'due-late', 'low'],
    );
    assert.deepEqual(
      g.ready(T0, [], 2).map((r) => r.fields.id),
      ['high', 'due-soon'],
    );
    assert.ok(g.ready(Date.parse('2030-01-03T00:00:00Z')).some((r) => r.fields.id === 'gated'));
    g.putEdge(edge('low', 'high', 'blocks'));
    assert.deepEqual(
      g.ready(T0).map((r) => r.fields.id),
      ['due-soon', 'due-late', 'low'],
    );
    g.putItem(
      applyToItem(g.require('low'), { type: 'item.close', outcome: 'completed', expectedRevision: 1, by: HOST_CALLER, now: T0 }).rec,
    );
    assert.deepEqual(
      g.ready(T0).map((r) => r.fields.id),
      ['high', 'due-soon', 'due-late'],
    );
  });

  it('hydrates a namespace with 200,000 events', () => {
    const events: WorkEvent[] = Array.from({ length: 200_000 }, (_, i) => ({
      seq: i + 1,
      realm_id: 'r',
      namespace: 'n',
      kind: 'updated',
      at: '',
    }));
    const g = new NamespaceGraph('r', 'n', { seq: 200_000, items: [item('a')], edges: [], events, attention: [] });
    assert.equal(g.events.length, 200_000);
  });
});
