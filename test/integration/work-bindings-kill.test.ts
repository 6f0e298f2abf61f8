// Work execution bindings across kill -9: a real server process is stopped for good right after a
// binding commits a phase (the test-only fault hook WARREN_TEST_BINDING_HALT_AT), killed with SIGKILL,
// and restarted on the same realm. Recovery follows the phase rules: begun without a run is an
// uncertain launch, abandonable only with the binding revision (then a superseding retry completes);
// realizing without a run is quarantined; a running binding reattaches to its run and completes with
// evidence; a completed run whose evidence never committed (halt in projecting) is run_lost, no closure;
// evidence committed but not yet recorded by the binding (halt after the write) is found and closure goes on.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { call } from '../helpers/app.ts';
import { createItem, createMob, mcpClient, type Mcp } from '../helpers/binding-driver.ts';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const ENTRY = fileURLToPath(new URL('../helpers/bindings-server.ts', import.meta.url));

function boot(t: TestContext, stateRoot: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  return startServerProcess({
    stateRoot,
    realm: 'kill',
    t,
    entry: ENTRY,
    ipc: true,
    logLevel: 'info',
    startTimeoutMs: 60_000,
    env: { ...process.env, WARREN_TEST_BINDING_HALT_AT: '', WARREN_TEST_HANG_TEXT: '', ...env },
  });
}

/** First life: a mob and an item, a launch halted at `phase`, then SIGKILL. Returns the binding id and item. */
async function haltAndKill(t: TestContext, dir: string, phase: string, input: string): Promise<{ bindingId: string; itemId: string }> {
  const a = await boot(t, dir, { WARREN_TEST_BINDING_HALT_AT: phase, WARREN_TEST_HANG_TEXT: 'HANG' });
  await createMob(a.url);
  const item = await createItem(a.url, `halt at ${phase}`);
  const mcp = await mcpClient({ after: () => undefined }, a.url);
  const halted = a.request({ await_halt: true }) as Promise<{ binding_halted: string; binding_id: string }>;
  const pending = mcp
    .tool('warren_workgraph_flow_launch', {
      item_id: item.id,
      expected_item_revision: item.revision,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: `k-${phase}`,
      activation: { input },
    })
    .catch(() => undefined);
  const report = await halted;
  assert.equal(report.binding_halted, phase);
  const exit = await a.kill('SIGKILL');
  assert.equal(exit.signal, 'SIGKILL');
  await pending;
  return { bindingId: report.binding_id, itemId: item.id };
}

async function second(t: TestContext, dir: string): Promise<{ b: ServerProcess; mcp: Mcp }> {
  const b = await boot(t, dir);
  return { b, mcp: await mcpClient(t, b.url) };
}

async function retryCompletes(mcp: Mcp, url: string, itemId: string, supersedes: string): Promise<void> {
  const item = (await call(url, 'GET', `/workgraph/items/${itemId}`)).body;
  const retry = (
    await mcp.ok('warren_workgraph_flow_launch', {
      item_id: itemId,
      expected_item_revision: item.revision,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: 'retry',
      supersedes,
      activation: { input: 'again' },
    })
  ).binding;
  assert.equal(retry.supersedes, supersedes);
  assert.equal((await mcp.settle(retry.binding_id)).machine_state, 'completed');
  assert.equal((await call(url, 'GET', `/workgraph/items/${itemId}`)).body.status, 'completed');
}

describe('work bindings across kill -9', { timeout: 240_000 }, () => {
  it('begun: an uncertain launch, abandonable only by binding-revision CAS with the run absent; a retry supersedes it', async (t) => {
    const dir = await tmpDir('warren-wb-kill-');
    t.after(() => dir.cleanup());
    const { bindingId, itemId } = await haltAndKill(t, dir.path, 'begun', 'first');
    const { b, mcp } = await second(t, dir.path);
    const got = (await mcp.ok('warren_workgraph_flow_binding_get', { binding_id: bindingId })).binding;
    assert.equal(got.machine_state, 'begun');
    assert.equal(got.uncertain, true);
    assert.equal((await mcp.tool('warren_mob_flow_status', { mob_id: 'crew', run_id: got.target.run_id })).structured.code, 'NOT_FOUND');
    // The item's chain head is live: no new binding until it is abandoned.
    const item = (await call(b.url, 'GET', `/workgraph/items/${itemId}`)).body;
    const blocked = await mcp.tool('warren_workgraph_flow_launch', {
      item_id: itemId,
      expected_item_revision: item.revision,
      mob_id: 'crew',
      flow_id: 'review',
      idempotency_key: 'early',
    });
    assert.equal(blocked.structured.details.reason, 'binding_active');
    const stale = await mcp.tool('warren_workgraph_flow_abandon_uncertain', {
      binding_id: bindingId,
      expected_binding_revision: got.binding_revision - 1,
    });
    assert.equal(stale.structured.code, 'CONFLICT');
    const abandoned = (
      await mcp.ok('warren_workgraph_flow_abandon_uncertain', { binding_id: bindingId, expected_binding_revision: got.binding_revision })
    ).binding;
    assert.equal(abandoned.machine_state, 'abandoned');
    await retryCompletes(mcp, b.url, itemId, bindingId);
  });

  it('realizing: quarantined (fails closed), then a superseding retry completes', async (t) => {
    const dir = await tmpDir('warren-wb-kill-');
    t.after(() => dir.cleanup());
    const { bindingId, itemId } = await haltAndKill(t, dir.path, 'realizing', 'first');
    const { b, mcp } = await second(t, dir.path);
    const got = (await mcp.ok('warren_workgraph_flow_binding_get', { binding_id: bindingId })).binding;
    assert.equal(got.machine_state, 'quarantined');
    assert.equal(got.terminal, true);
    assert.equal((await call(b.url, 'GET', `/workgraph/items/${itemId}`)).body.evidence_refs.length, 0);
    await retryCompletes(mcp, b.url, itemId, bindingId);
  });

  it('running: the binding reattaches to its resumed run and completes with evidence', async (t) => {
    const dir = await tmpDir('warren-wb-kill-');
    t.after(() => dir.cleanup());
    const { bindingId, itemId } = await haltAndKill(t, dir.path, 'running', 'HANG here');
    const { b, mcp } = await second(t, dir.path);
    const done = await mcp.settle(bindingId);
    assert.equal(done.machine_state, 'completed', JSON.stringify(done));
    const item = (await call(b.url, 'GET', `/workgraph/items/${itemId}`)).body;
    assert.equal(item.status, 'completed');
    assert.deepEqual(
      item.evidence_refs.map((e: { id: string; kind: string }) => [e.id, e.kind]),
      [[`work_execution:${bindingId}`, 'mob_flow_run_completed']],
    );
  });

  it('projecting: a completed run whose evidence never committed is run_lost, never a closure', async (t) => {
    const dir = await tmpDir('warren-wb-kill-');
    t.after(() => dir.cleanup());
    const { bindingId, itemId } = await haltAndKill(t, dir.path, 'projecting', 'quick');
    const { b, mcp } = await second(t, dir.path);
    const got = await mcp.settle(bindingId);
    assert.equal(got.machine_state, 'run_lost');
    assert.equal(got.run_status, 'completed');
    const item = (await call(b.url, 'GET', `/workgraph/items/${itemId}`)).body;
    assert.equal(item.status, 'open');
    assert.equal(item.evidence_refs.length, 0);
    await retryCompletes(mcp, b.url, itemId, bindingId);
  });

  it('evidence written, binding not yet updated: the identical evidence is found and the closure goes on', async (t) => {
    const dir = await tmpDir('warren-wb-kill-');
    t.after(() => dir.cleanup());
    const { bindingId, itemId } = await haltAndKill(t, dir.path, 'evidence', 'quick');
    const { b, mcp } = await second(t, dir.path);
    const got = await mcp.settle(bindingId);
    assert.equal(got.machine_state, 'completed', JSON.stringify(got));
    assert.equal(got.evidence_id, `work_execution:${bindingId}`);
    const item = (await call(b.url, 'GET', `/workgraph/items/${itemId}`)).body;
    assert.equal(item.status, 'completed');
    assert.deepEqual(
      item.evidence_refs.map((e: { kind: string }) => e.kind),
      ['mob_flow_run_completed'],
    );
  });
});
