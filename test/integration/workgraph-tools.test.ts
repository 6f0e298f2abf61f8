// The WorkGraph through the real server: agents mutate it only through workgraph_* tool calls (scripted
// provider), REST reads it. Covers the tool gate and capability, revision compare-and-set, claims and
// leases, terminal items, edge rules, readiness gates, completion policies and evidence replay.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { agentOk, agentTool, workGraphDriver } from '../helpers/workgraph-driver.ts';
import type { TestContext } from 'node:test';

async function app(t: TestContext, opts = {}): Promise<TestApp> {
  return startApp(t, workGraphDriver, opts);
}

/** Polls the events read until `pred` holds (bounded); gates on an observed event, never on time. */
async function untilEvent(base: string, pred: (evs: any[]) => boolean, path = '/workgraph/events?limit=10000'): Promise<any[]> {
  for (let i = 0; i < 2000; i++) {
    const evs = (await call(base, 'GET', path)).body.events;
    if (pred(evs)) return evs;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error('event never observed');
}

describe('workgraph tools and capability', () => {
  it('offers the tools only with enable_workgraph or [tools] workgraph_enabled, which the capability follows', async (t) => {
    const a = await app(t);
    const caps = async () =>
      (await call(a.url, 'GET', '/capabilities')).body.capabilities.find((c: { id: string }) => c.id === 'work_graph').status;
    assert.deepEqual(await caps(), { DisabledByPolicy: { description: 'config.tools.workgraph_enabled is false' } });
    await call(a.url, 'POST', '/sessions', { prompt: JSON.stringify({ tool: 'workgraph_list' }) });
    assert.ok(!a.provider.requests.at(-2)!.tools.some((s) => s.name.startsWith('workgraph_')));
    const cfg = await call(a.url, 'PATCH', '/config', { patch: { tools: { workgraph_enabled: true } } });
    assert.equal(cfg.status, 200, JSON.stringify(cfg.body));
    assert.equal(await caps(), 'Available');
    const r = await call(a.url, 'POST', '/sessions', { prompt: JSON.stringify({ tool: 'workgraph_list' }) });
    assert.deepEqual(JSON.parse(r.body.text), { is_error: false, result: { items: [] } });
    const names = a.provider.requests
      .at(-1)!
      .tools.map((s) => s.name)
      .filter((n) => n.startsWith('workgraph_'))
      .sort();
    assert.deepEqual(
      names,
      ['add_evidence', 'block', 'claim', 'close', 'create', 'events', 'get', 'link', 'list', 'ready', 'release', 'snapshot', 'update'].map(
        (n) => `workgraph_${n}`,
      ),
    );
  });

  it('requires expected_revision on mutations and refuses a stale one with a clear tool error', async (t) => {
    const a = await app(t);
    const { result: item } = await agentOk(a.url, 'workgraph_create', { title: 'write docs', labels: ['docs'] });
    assert.match(item.id, /^work_[0-9a-f]{8}-[0-9a-f]{4}-7/);
    assert.equal(item.revision, 1);
    assert.equal(item.status, 'open');
    const missing = await agentTool(a.url, 'workgraph_claim', { item_id: item.id });
    assert.equal(missing.is_error, true);
    assert.match(JSON.stringify(missing.result), /expected_revision/);
    const upd = await agentOk(a.url, 'workgraph_update', { item_id: item.id, expected_revision: 1, title: 'write the docs' });
    assert.equal(upd.result.revision, 2);
    const stale = await agentTool(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 1 });
    assert.equal(stale.is_error, true);
    assert.equal(stale.result.code, 'stale_revision');
    assert.equal(stale.result.current_revision, 2);
    assert.equal(stale.result.error, 'stale revision: expected 1, current 2');
  });
});

describe('claims and leases', () => {
  it('lets one session claim, refuses others, releases, and refuses claims on terminal items', async (t) => {
    const a = await app(t);
    const { result: item } = await agentOk(a.url, 'workgraph_create', { title: 'x' });
    const mine = await agentOk(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 1 });
    assert.equal(mine.result.status, 'in_progress');
    assert.deepEqual(mine.result.claim.owner, { key: { kind: 'session', id: mine.sessionId } });
    assert.deepEqual((await call(a.url, 'GET', '/workgraph/ready')).body.items, []);
    const other = await agentTool(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 2 });
    assert.equal(other.result.code, 'already_claimed');
    const notMine = await agentTool(a.url, 'workgraph_release', { item_id: item.id, expected_revision: 2 });
    assert.equal(notMine.result.code, 'not_claimant');
    const rel = await agentOk(a.url, 'workgraph_release', { item_id: item.id, expected_revision: 2 }, mine.sessionId);
    assert.equal(rel.result.status, 'open');
    assert.equal(rel.result.claim, undefined);
    const closed = await agentOk(a.url, 'workgraph_close', { item_id: item.id, expected_revision: 3, status: 'cancelled' });
    assert.equal(closed.result.status, 'cancelled');
    assert.ok(closed.result.terminal_at);
    const late = await agentTool(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 4 });
    assert.equal(late.result.code, 'terminal');
  });

  it('expires a lease through the machine on its own and records a lease_expired fact', async (t) => {
    const a = await app(t);
    const { result: item } = await agentOk(a.url, 'workgraph_create', { title: 'leased' });
    const claimed = await agentOk(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 1, lease_ms: 30 });
    assert.ok(claimed.result.claim.lease_expires_at);
    const evs = await untilEvent(a.url, (e) => e.some((x: any) => x.facts?.some((f: any) => f.kind === 'lease_expired')));
    const ev = evs.find((x: any) => x.kind === 'released')!;
    assert.equal(ev.item_id, item.id);
    assert.equal(ev.payload.reason, 'lease_expired');
    const fact = ev.facts.find((f: any) => f.kind === 'lease_expired');
    assert.deepEqual(fact.owner_key, { kind: 'session', id: claimed.sessionId });
    assert.equal(fact.lease_expires_at, claimed.result.claim.lease_expires_at);
    assert.ok(ev.facts.some((f: any) => f.kind === 'item_ready' && f.item_id === item.id));
    const after = (await call(a.url, 'GET', `/workgraph/items/${item.id}`)).body;
    assert.equal(after.status, 'open');
    assert.equal(after.revision, 3);
    assert.equal(after.claim, undefined);
  });
});

describe('edges and readiness', () => {
  it('rejects invalid endpoints, self edges, duplicates and cycles for blocks and parent', async (t) => {
    const a = await app(t);
    const ids: string[] = [];
    for (const title of ['a', 'b', 'c']) ids.push((await agentOk(a.url, 'workgraph_create', { title })).result.id);
    const [A, B, C] = ids as [string, string, string];
    const rev = async (id: string) => (await call(a.url, 'GET', `/workgraph/items/${id}`)).body.revision;
    const link = (from: string, to: string, kind: string) =>
      rev(from).then((r) => agentTool(a.url, 'workgraph_link', { from_id: from, to_id: to, kind, expected_revision: r }));
    assert.equal((await link(A, 'work_nope', 'blocks')).result.code, 'invalid_endpoint');
    assert.equal((await link(A, A, 'related')).result.code, 'self_edge');
    for (const kind of ['blocks', 'parent']) {
      assert.equal((await link(A, B, kind)).is_error, false);
      assert.equal((await link(A, B, kind)).result.code, 'duplicate_edge');
      assert.equal((await link(B, C, kind)).is_error, false);
      assert.equal((await link(C, A, kind)).result.code, 'cycle', kind);
      assert.equal((await link(B, A, kind)).result.code, 'cycle', kind);
    }
    assert.equal((await link(B, A, 'related')).is_error, false, 'related edges may form cycles');
    const snap = (await call(a.url, 'GET', '/workgraph/snapshot')).body;
    assert.equal(snap.edges.length, 5);
    assert.deepEqual(snap.ready_item_ids, [A]);
    assert.equal(snap.namespace, 'default');
    assert.equal(snap.all_namespaces, false);
    assert.equal(typeof snap.event_high_water_mark, 'number');
  });

  it('makes an item ready once its blockers resolve and its not_before / snoozed_until gates pass', async (t) => {
    const a = await app(t);
    const blocker = (await agentOk(a.url, 'workgraph_create', { title: 'first', priority: 'low' })).result;
    const dep = (await agentOk(a.url, 'workgraph_create', { title: 'second', blocked_by: [blocker.id], priority: 'high' })).result;
    const future = new Date(Date.now() + 3_600_000).toISOString();
    const gated = (await agentOk(a.url, 'workgraph_create', { title: 'later', not_before: future })).result;
    const snoozed = (await agentOk(a.url, 'workgraph_create', { title: 'snoozed', snoozed_until: future })).result;
    const ready = async () => (await call(a.url, 'GET', '/workgraph/ready')).body.items.map((i: { id: string }) => i.id);
    assert.deepEqual(await ready(), [blocker.id]);
    assert.equal((await agentTool(a.url, 'workgraph_claim', { item_id: dep.id, expected_revision: 1 })).result.code, 'not_ready');
    assert.equal((await agentTool(a.url, 'workgraph_claim', { item_id: gated.id, expected_revision: 1 })).result.code, 'not_ready');
    const failed = await agentOk(a.url, 'workgraph_close', { item_id: blocker.id, expected_revision: 1, status: 'failed' });
    assert.equal(failed.result.status, 'failed');
    assert.deepEqual(await ready(), [], 'a failed blocker keeps blocking');
    const b2 = (await agentOk(a.url, 'workgraph_create', { title: 'redo' })).result;
    const dep2 = (await agentOk(a.url, 'workgraph_create', { title: 'after redo', blocked_by: [b2.id] })).result;
    await agentOk(a.url, 'workgraph_close', { item_id: b2.id, expected_revision: 1, status: 'completed' });
    const evs = (await call(a.url, 'GET', '/workgraph/events')).body.events;
    const closed = evs.findLast((e: any) => e.kind === 'closed');
    assert.deepEqual(closed.facts, [{ kind: 'item_ready', item_id: dep2.id, item_revision: 1 }]);
    assert.deepEqual(await ready(), [dep2.id]);
    await agentOk(a.url, 'workgraph_update', { item_id: gated.id, expected_revision: 1, not_before: null });
    await agentOk(a.url, 'workgraph_update', {
      item_id: snoozed.id,
      expected_revision: 1,
      snoozed_until: new Date(Date.now() - 1000).toISOString(),
    });
    assert.deepEqual(new Set(await ready()), new Set([dep2.id, gated.id, snoozed.id]));
    const bad = await agentTool(a.url, 'workgraph_update', { item_id: gated.id, expected_revision: 2, due_at: 'not a time' });
    assert.equal(bad.result.code, 'invalid_time');
  });

  it('blocks and unblocks an item through the machine', async (t) => {
    const a = await app(t);
    const item = (await agentOk(a.url, 'workgraph_create', { title: 'x' })).result;
    const claimed = await agentOk(a.url, 'workgraph_claim', { item_id: item.id, expected_revision: 1 });
    const blocked = await agentOk(
      a.url,
      'workgraph_block',
      { item_id: item.id, expected_revision: 2, reason: 'waiting on review' },
      claimed.sessionId,
    );
    assert.equal(blocked.result.status, 'blocked');
    assert.equal(blocked.result.blocked_reason, 'waiting on review');
    const unblocked = await agentOk(
      a.url,
      'workgraph_block',
      { item_id: item.id, expected_revision: 3, blocked: false },
      claimed.sessionId,
    );
    assert.equal(unblocked.result.status, 'in_progress');
    assert.equal(
      (await agentTool(a.url, 'workgraph_block', { item_id: item.id, expected_revision: 4, blocked: false })).result.code,
      'not_blocked',
    );
  });
});

describe('completion policies and evidence', () => {
  it('gates closure: host_confirmed refuses agents, supervisor and reviewer_quorum need their confirmations', async (t) => {
    const a = await app(t);
    const hostItem = (await agentOk(a.url, 'workgraph_create', { title: 'h', completion_policy: { kind: 'host_confirmed' } })).result;
    const refused = await agentTool(a.url, 'workgraph_close', { item_id: hostItem.id, expected_revision: 1, status: 'completed' });
    assert.equal(refused.result.code, 'policy_unsatisfied');
    const forged = await agentTool(a.url, 'workgraph_add_evidence', {
      item_id: hostItem.id,
      expected_revision: 1,
      evidence: { id: 'c', kind: 'summary', confirmation_kind: 'host' },
    });
    assert.equal(forged.result.code, 'forbidden_confirmation');

    const sup = (await agentOk(a.url, 'workgraph_list', {})).sessionId;
    const supItem = (
      await agentOk(a.url, 'workgraph_create', {
        title: 's',
        completion_policy: { kind: 'supervisor', owner_key: { kind: 'session', id: sup } },
      })
    ).result;
    assert.equal(
      (await agentTool(a.url, 'workgraph_close', { item_id: supItem.id, expected_revision: 1, status: 'completed' })).result.code,
      'policy_unsatisfied',
    );
    assert.equal(
      (await agentOk(a.url, 'workgraph_close', { item_id: supItem.id, expected_revision: 1, status: 'completed' }, sup)).result.status,
      'completed',
    );

    const q = (await agentOk(a.url, 'workgraph_create', { title: 'q', completion_policy: { kind: 'reviewer_quorum', threshold: 2 } }))
      .result;
    const worker = await agentOk(a.url, 'workgraph_claim', { item_id: q.id, expected_revision: 1 });
    let rev = 2;
    for (const who of [undefined, undefined]) {
      const r = await agentOk(
        a.url,
        'workgraph_add_evidence',
        { item_id: q.id, expected_revision: rev, evidence: { id: `review-${rev}`, kind: 'review', confirmation_kind: 'review' } },
        who,
      );
      rev = r.result.revision;
      if (rev === 3)
        assert.equal(
          (await agentTool(a.url, 'workgraph_close', { item_id: q.id, expected_revision: rev, status: 'completed' }, worker.sessionId))
            .result.code,
          'policy_unsatisfied',
        );
    }
    const done = await agentOk(a.url, 'workgraph_close', { item_id: q.id, expected_revision: rev, status: 'completed' }, worker.sessionId);
    assert.equal(done.result.status, 'completed');
    assert.equal(done.result.evidence_refs.length, 2);
  });

  it('replays identical evidence as a no-op and fails closed on different content under the same id', async (t) => {
    const a = await app(t);
    const item = (await agentOk(a.url, 'workgraph_create', { title: 'e' })).result;
    const s = (await agentOk(a.url, 'workgraph_list', {})).sessionId;
    const ev = { id: 'pr-1', kind: 'pr', label: 'PR #1' };
    const first = await agentOk(a.url, 'workgraph_add_evidence', { item_id: item.id, expected_revision: 1, evidence: ev }, s);
    const replay = await agentOk(a.url, 'workgraph_add_evidence', { item_id: item.id, expected_revision: 1, evidence: ev }, s);
    assert.equal(replay.result.revision, first.result.revision);
    const conflict = await agentTool(
      a.url,
      'workgraph_add_evidence',
      { item_id: item.id, expected_revision: 2, evidence: { ...ev, label: 'other' } },
      s,
    );
    assert.equal(conflict.result.code, 'evidence_conflict');
    const evs = (await call(a.url, 'GET', '/workgraph/events')).body.events;
    assert.equal(evs.filter((e: any) => e.kind === 'evidence_added').length, 1);
  });
});
