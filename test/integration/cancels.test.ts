// test/integration/cancels.test.ts: cancels are cancels. An interrupt and a request cancel each end the turn
// with run_failed whose error_report.class says which ("interrupted" / "cancelled") and whose
// terminal_cause_kind stays within the reference's enumeration; /metrics counts both as
// outcome="cancelled"; a cancelled detached request answers status "cancelled".
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';
import { parseProm, sumOf } from '../helpers/prom-text.ts';
import { WAIT_MS, within } from '../helpers/wait.ts';

const KINDS = [
  'unknown',
  'hook_denied',
  'hook_failure',
  'llm_failure',
  'tool_failure',
  'structured_output_validation_failed',
  'budget_exhausted',
  'time_budget_exceeded',
  'retry_exhausted',
  'turn_limit_reached',
  'runtime_apply_failure',
  'fatal_failure',
];

type Payload = { type: string; [k: string]: unknown };

async function runFailed(base: string, id: string): Promise<Payload[]> {
  const res = await call(base, 'GET', `/sessions/${id}/ledger`);
  return (res.body.events as { payload: Payload }[]).map((e) => e.payload).filter((p) => p.type === 'run_failed');
}

/** Polls GET /requests/{id} until it leaves queued/running, within WAIT_MS. */
async function terminal(base: string, rid: string): Promise<Record<string, unknown>> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const r = await call(base, 'GET', `/requests/${rid}`);
    if (r.status !== 200 || !['queued', 'running'].includes(r.body.status)) return r.body;
    if (Date.now() > deadline) assert.fail(`timed out waiting for request ${rid} to settle (last status ${r.body.status})`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function turns(base: string, outcome: string): Promise<number> {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  return sumOf(parseProm(await res.text()), 'warren_turns_total', { outcome });
}

describe('cancels are cancels', () => {
  it('an interrupt ends the turn as interrupted, counted as cancelled', async (t) => {
    const gate = gatedAt(1);
    const app = await startApp(t, gate.script);
    const sid = await createSession(app.url);
    const turn = call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'p' });
    await gate.entered.promise;
    const stop = await call(app.url, 'POST', `/sessions/${sid}/interrupt`);
    assert.equal(stop.body.interrupted, true);
    // An interrupt ends the turn at once: a turn still running seconds later is the failure, named.
    const res = await within('the interrupted turn to answer', turn, 5_000);
    assert.equal(res.status, 499, JSON.stringify(res.body));
    assert.equal(res.body.code, 'REQUEST_CANCELLED');
    const failed = (await runFailed(app.url, sid)).at(-1);
    assert.ok(failed, 'a run_failed event in the ledger');
    assert.equal((failed.error_report as { class: string }).class, 'interrupted');
    assert.ok(KINDS.includes(String(failed.terminal_cause_kind)), `kind ${String(failed.terminal_cause_kind)} within the enumeration`);
    assert.equal(await turns(app.url, 'cancelled'), 1);
    assert.equal(await turns(app.url, 'failed'), 0);
  });

  it('a detached request cancelled answers status cancelled, its run_failed says cancelled, counted as cancelled', async (t) => {
    const gate = gatedAt(1);
    const app = await startApp(t, gate.script);
    const sid = await createSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'p' }, { prefer: 'respond-async' });
    assert.equal(res.status, 202);
    await gate.entered.promise;
    const cancel = await call(app.url, 'POST', `/requests/${res.body.request_id}/cancel`);
    assert.equal(cancel.body.cancelled, true);
    const body = await terminal(app.url, res.body.request_id);
    assert.equal(body.status, 'cancelled', JSON.stringify(body));
    assert.equal(body.http_status, 499);
    assert.equal((body.error as { code: string }).code, 'REQUEST_CANCELLED');
    const failed = (await runFailed(app.url, sid)).at(-1);
    assert.ok(failed, 'a run_failed event in the ledger');
    assert.equal((failed.error_report as { class: string }).class, 'cancelled');
    assert.ok(KINDS.includes(String(failed.terminal_cause_kind)), `kind ${String(failed.terminal_cause_kind)} within the enumeration`);
    assert.equal(await turns(app.url, 'cancelled'), 1);
    assert.equal(await turns(app.url, 'failed'), 0);
  });
});
