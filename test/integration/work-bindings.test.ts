// Work execution bindings on a real server: a WorkGraph item bound to a mob flow run by member sessions
// (scripted model) through Warren's MCP endpoint. Completion writes evidence work_execution:<id> and
// closes the item; a failed run writes failed evidence and closes nothing; a retry supersedes the
// terminal binding in one chain; replays, compare-and-set, errors and redaction of every public read.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { bindingScript, createItem, createMob, mcpClient, rpc } from '../helpers/binding-driver.ts';
import { deferred } from '../helpers/gates.ts';
import { agentOk } from '../helpers/workgraph-driver.ts';

const TOOLS = [
  'warren_mob_flow_status',
  'warren_workgraph_flow_abandon_uncertain',
  'warren_workgraph_flow_binding_get',
  'warren_workgraph_flow_binding_list',
  'warren_workgraph_flow_launch',
  'warren_workgraph_flow_reconcile',
];
const SECRET = 'activation-secret-7731';

describe('work execution bindings', () => {
  it('launches a binding on a mob flow, writes completed evidence and closes the item; replays and errors', async (t) => {
    const app = await startApp(t, bindingScript());
    await createMob(app.url);
    const item = await createItem(app.url, 'write the summary');
    const mcp = await mcpClient(t, app.url);
    const names = (await mcp.client.listTools()).tools.map((x) => x.name);
    for (const n of TOOLS) assert.ok(names.includes(n), n);

    const launch = {
      item_id: item.id,
      expected_item_revision: item.revision,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: 'key-1',
      activation: { input: `hello ${SECRET}` },
      principal: 'ops-bot',
    };
    const first = (await mcp.ok('warren_workgraph_flow_launch', launch)).binding;
    assert.match(first.binding_id, /^wbind_/);
    assert.equal(first.target.run_id, first.binding_id.replace('wbind_', 'wexec_'));
    assert.equal(first.machine_state, 'running');
    assert.equal(first.supersedes, null);

    const done = await mcp.settle(first.binding_id);
    assert.equal(done.machine_state, 'completed', JSON.stringify(done));
    assert.equal(done.run_status, 'completed');
    assert.equal(done.evidence_id, `work_execution:${first.binding_id}`);

    // The evidence and the closure are in the WorkGraph.
    const after = (await call(app.url, 'GET', `/workgraph/items/${item.id}`)).body;
    assert.equal(after.status, 'completed');
    const ev = after.evidence_refs.find((e: { id: string }) => e.id === done.evidence_id);
    assert.equal(ev.kind, 'mob_flow_run_completed');
    assert.equal(ev.execution_binding_id, first.binding_id);
    assert.match(ev.summary, /^echo: Check: echo: Draft: hello/);
    const kinds = (await call(app.url, 'GET', '/workgraph/events')).body.events.map((e: { kind: string }) => e.kind);
    assert.ok(
      kinds.includes('execution_bound') &&
        kinds.includes('execution_transitioned') &&
        kinds.includes('evidence_added') &&
        kinds.includes('closed'),
      kinds.join(','),
    );

    // The flow run itself, without its activation.
    const run = (await mcp.ok('warren_mob_flow_status', { mob_id: 'crew', run_id: first.target.run_id })).run;
    assert.equal(run.status, 'completed');
    assert.equal(run.activation, undefined);
    assert.equal(run.outputs.length, 2);

    // Exact replay selects the same binding; the same key with another request is refused.
    const replay = (await mcp.ok('warren_workgraph_flow_launch', launch)).binding;
    assert.equal(replay.binding_id, first.binding_id);
    const other = await mcp.tool('warren_workgraph_flow_launch', { ...launch, activation: { input: 'different' } });
    assert.equal(other.isError, true);
    assert.equal(other.structured.code, 'CONFLICT');
    assert.equal(other.structured.details.reason, 'idempotency_mismatch');

    // Public reads are redacted.
    const listed = (await mcp.ok('warren_workgraph_flow_binding_list', {})).bindings;
    assert.equal(listed.length, 1);
    for (const text of [JSON.stringify(listed), JSON.stringify(done), JSON.stringify(first), JSON.stringify(replay)]) {
      for (const hidden of [SECRET, 'key-1', 'ops-bot', 'correlation', 'idempotency', 'activation', 'principal'])
        assert.ok(!text.includes(hidden), `${hidden} leaked: ${text}`);
    }

    // Errors: terminal item, stale revision, unknown mob / flow / binding, bad arguments, abandon of a non-uncertain binding.
    const terminal = await mcp.tool('warren_workgraph_flow_launch', {
      ...launch,
      idempotency_key: 'key-2',
      expected_item_revision: after.revision,
    });
    assert.equal(terminal.structured.code, 'BAD_REQUEST');
    const item2 = await createItem(app.url, 'second');
    const stale = await mcp.tool('warren_workgraph_flow_launch', {
      ...launch,
      item_id: item2.id,
      idempotency_key: 'key-3',
      expected_item_revision: 7,
    });
    assert.equal(stale.structured.code, 'CONFLICT');
    assert.equal(stale.structured.details.reason, 'stale_revision');
    assert.equal(
      (await mcp.tool('warren_workgraph_flow_launch', { ...launch, item_id: item2.id, idempotency_key: 'key-4', mob_id: 'nope' }))
        .structured.code,
      'NOT_FOUND',
    );
    assert.equal(
      (await mcp.tool('warren_workgraph_flow_launch', { ...launch, item_id: item2.id, idempotency_key: 'key-5', flow_id: 'nope' }))
        .structured.code,
      'BAD_REQUEST',
    );
    assert.equal(
      (
        await mcp.tool('warren_workgraph_flow_launch', {
          ...launch,
          item_id: item2.id,
          idempotency_key: 'key-6',
          flow_digest: '0'.repeat(64),
        })
      ).structured.code,
      'CONFLICT',
    );
    assert.equal(
      (await mcp.tool('warren_workgraph_flow_launch', { ...launch, item_id: 'work_missing', idempotency_key: 'key-7' })).structured.code,
      'NOT_FOUND',
    );
    const noRev = await mcp.tool('warren_workgraph_flow_launch', {
      item_id: item2.id,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: 'key-8',
    });
    assert.equal(noRev.isError, true);
    assert.match(noRev.text, /invalid arguments/);
    assert.equal((await mcp.tool('warren_workgraph_flow_binding_get', { binding_id: 'wbind_nope' })).structured.code, 'NOT_FOUND');
    assert.equal((await mcp.tool('warren_workgraph_flow_reconcile', { binding_id: 'wbind_nope' })).structured.code, 'NOT_FOUND');
    assert.equal((await mcp.tool('warren_mob_flow_status', { mob_id: 'crew', run_id: 'nope' })).structured.code, 'NOT_FOUND');
    const abandon = await mcp.tool('warren_workgraph_flow_abandon_uncertain', {
      binding_id: first.binding_id,
      expected_binding_revision: done.binding_revision,
    });
    assert.equal(abandon.structured.code, 'CONFLICT');
    assert.equal((await mcp.ok('warren_workgraph_flow_reconcile', { binding_id: first.binding_id })).binding.machine_state, 'completed');
    assert.equal((await mcp.ok('warren_workgraph_flow_binding_list', { item_id: item2.id })).bindings.length, 0);

    // The viewer knows the kind: its machine graph and the live binding actor.
    const graph = (await call(app.url, 'GET', '/inspect/machines/work_binding')).body;
    const states = graph.states.map((x: { key: string }) => x.key);
    for (const p of [
      'launch',
      'begun',
      'realizing',
      'running',
      'projecting',
      'closing',
      'completed',
      'quarantined',
      'run_lost',
      'abandoned',
    ])
      assert.ok(states.includes(p), p);
    // An lmdb realm is a cluster (of one, here): a terminal binding leaves memory at once (its lease released,
    // so a retry on any process can supersede it); a binding still listed is this one, completed.
    const actors = (await call(app.url, 'GET', '/inspect/actors?kind=work_binding')).body.actors as Array<{ id: string; state: string }>;
    for (const x of actors) assert.deepEqual([x.id, x.state], [first.binding_id, 'completed']);
  });

  it('a failed run writes failed evidence and closes nothing; a retry supersedes it in one chain and completes', async (t) => {
    const app = await startApp(t, bindingScript());
    await createMob(app.url);
    const item = await createItem(app.url, 'flaky');
    const mcp = await mcpClient(t, app.url);
    const base = { item_id: item.id, expected_item_revision: item.revision, mob_id: 'crew', flow_id: 'review' };
    const a = (await mcp.ok('warren_workgraph_flow_launch', { ...base, idempotency_key: 'a', activation: { input: 'FAIL please' } }))
      .binding;
    const failed = await mcp.settle(a.binding_id);
    assert.equal(failed.machine_state, 'failed');
    assert.equal(failed.run_status, 'failed');
    let now = (await call(app.url, 'GET', `/workgraph/items/${item.id}`)).body;
    assert.equal(now.status, 'open');
    assert.equal(now.evidence_refs[0].id, `work_execution:${a.binding_id}`);
    assert.equal(now.evidence_refs[0].kind, 'mob_flow_run_failed');

    // Naming a binding that is not the chain head is refused; the retry supersedes the failed head.
    const wrongHead = await mcp.tool('warren_workgraph_flow_launch', {
      ...base,
      expected_item_revision: now.revision,
      idempotency_key: 'b0',
      supersedes: 'wbind_other',
    });
    assert.equal(wrongHead.structured.details.reason, 'not_chain_head');
    const b = (
      await mcp.ok('warren_workgraph_flow_launch', {
        ...base,
        expected_item_revision: now.revision,
        idempotency_key: 'b',
        supersedes: a.binding_id,
        activation: { input: 'fine' },
      })
    ).binding;
    assert.equal(b.supersedes, a.binding_id);
    // While b is live no other binding may start on the item.
    const busy = await mcp.tool('warren_workgraph_flow_launch', { ...base, expected_item_revision: now.revision, idempotency_key: 'c' });
    if (busy.isError) assert.equal(busy.structured.details.reason, 'binding_active');
    const done = await mcp.settle(b.binding_id);
    assert.equal(done.machine_state, 'completed');
    const chain = (await mcp.ok('warren_workgraph_flow_binding_list', { item_id: item.id })).bindings;
    assert.deepEqual(chain.map((x: { binding_id: string }) => x.binding_id).slice(0, 2), [a.binding_id, b.binding_id]);
    assert.equal(chain[0].superseded_by, b.binding_id);
    now = (await call(app.url, 'GET', `/workgraph/items/${item.id}`)).body;
    assert.equal(now.status, 'completed');
    assert.deepEqual(
      now.evidence_refs.map((e: { kind: string }) => e.kind),
      ['mob_flow_run_failed', 'mob_flow_run_completed'],
    );
  });

  it('a completion policy that refuses the closure ends the binding in closure_refused with its evidence kept', async (t) => {
    const app = await startApp(t, bindingScript());
    await createMob(app.url);
    const item = await createItem(app.url, 'needs the host', { completion_policy: { kind: 'host_confirmed' } });
    const mcp = await mcpClient(t, app.url);
    const b = (
      await mcp.ok('warren_workgraph_flow_launch', {
        item_id: item.id,
        expected_item_revision: item.revision,
        mob_id: 'crew',
        flow_id: 'review',
        idempotency_key: 'p',
      })
    ).binding;
    const done = await mcp.settle(b.binding_id);
    assert.equal(done.machine_state, 'closure_refused');
    assert.match(done.reason, /host_confirmed/);
    const now = (await call(app.url, 'GET', `/workgraph/items/${item.id}`)).body;
    assert.equal(now.status, 'open');
    assert.equal(now.evidence_refs[0].kind, 'mob_flow_run_completed');
  });

  it("a canceled run writes canceled evidence; different evidence under the binding's id fails closed (run_lost)", async (t) => {
    const entered = deferred();
    const release = deferred();
    const app = await startApp(t, bindingScript({ text: 'HOLD', entered: () => entered.resolve(), release: release.promise }));
    await createMob(app.url);
    const mcp = await mcpClient(t, app.url);

    // Cancel: the run is held in its first step, then canceled through JSON-RPC.
    const one = await createItem(app.url, 'to cancel');
    const c = (
      await mcp.ok('warren_workgraph_flow_launch', {
        item_id: one.id,
        expected_item_revision: one.revision,
        mob_id: 'crew',
        flow_id: 'review',
        idempotency_key: 'c1',
        activation: { input: 'HOLD' },
      })
    ).binding;
    await entered.promise;
    const busy = await mcp.tool('warren_workgraph_flow_launch', {
      item_id: one.id,
      expected_item_revision: one.revision,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: 'c2',
    });
    assert.equal(busy.structured.details.reason, 'binding_active');
    assert.equal((await mcp.ok('warren_workgraph_flow_reconcile', { binding_id: c.binding_id })).binding.machine_state, 'running');
    await rpc(app.url, 'mob/cancel_flow', { mob_id: 'crew', run_id: c.target.run_id });
    const canceled = await mcp.settle(c.binding_id);
    assert.equal(canceled.machine_state, 'canceled');
    let item = (await call(app.url, 'GET', `/workgraph/items/${one.id}`)).body;
    assert.equal(item.status, 'open');
    assert.deepEqual(
      item.evidence_refs.map((e: { id: string; kind: string }) => [e.id, e.kind]),
      [[`work_execution:${c.binding_id}`, 'mob_flow_run_canceled']],
    );

    // Conflict: someone wrote other content under the binding's evidence id while the run was held.
    const two = await createItem(app.url, 'conflicting evidence');
    const b = (
      await mcp.ok('warren_workgraph_flow_launch', {
        item_id: two.id,
        expected_item_revision: two.revision,
        mob_id: 'crew',
        flow_id: 'review',
        idempotency_key: 'd1',
        activation: { input: 'HOLD again' },
      })
    ).binding;
    const current = (await call(app.url, 'GET', `/workgraph/items/${two.id}`)).body;
    await agentOk(app.url, 'workgraph_add_evidence', {
      item_id: two.id,
      expected_revision: current.revision,
      evidence: { id: `work_execution:${b.binding_id}`, kind: 'note', summary: 'not the run' },
    });
    release.resolve();
    const lost = await mcp.settle(b.binding_id);
    assert.equal(lost.machine_state, 'run_lost');
    assert.equal(lost.run_status, 'completed');
    assert.match(lost.reason, /evidence not committed/);
    item = (await call(app.url, 'GET', `/workgraph/items/${two.id}`)).body;
    assert.equal(item.status, 'open', 'a run-lost binding never closes the item');
    assert.deepEqual(
      item.evidence_refs.map((e: { kind: string }) => e.kind),
      ['note'],
    );
  });
});
