// test/integration/mob-flow-cancel.test.ts: a running mob flow ended from outside, on the real server
// (scripted provider, a step turn held open by a gate): `mob/cancel_flow` ends the run as `canceled` with
// `flow_canceled` in the structural ledger and the held step's turn interrupted (the member works again),
// and `mob/destroy` while a flow runs cancels that run too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ProviderRequest } from '../../providers/provider.ts';
import { echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { SseClient } from '../helpers/sse-client.ts';

const DEF = {
  members: [{ agent_identity: 'a' }, { agent_identity: 'b' }],
  flows: [
    {
      flow_id: 'f',
      steps: [
        { step_id: 's1', member: 'a', prompt: 'hold {{input}}' },
        { step_id: 's2', member: 'b', prompt: 'after {{input}}' },
      ],
    },
  ],
};

function lastUser(req: Pick<ProviderRequest, 'messages'>): string {
  const u = [...req.messages].reverse().find((m) => m.role === 'user');
  return u && u.role === 'user' ? plainText(u.content) : '';
}

/** A provider whose step-1 turn ('hold …') waits on a gate that never opens; everything else echoes. */
function heldProvider() {
  const entered = deferred();
  const never = deferred();
  const script = (req: ProviderRequest): ScriptedReply => {
    if (lastUser(req).startsWith('hold')) {
      entered.resolve();
      return { text: 'never', waitFor: never.promise };
    }
    return echoReply(req);
  };
  return { entered, script };
}

describe('mob flows ended from outside', () => {
  it('mob/cancel_flow ends a running flow as canceled, once, and later steps never run', async (t) => {
    const held = heldProvider();
    const app = await startApp(t, held.script);
    const events = await SseClient.open(app.url, '/toolkit/mob_events/stream?mob_id=m1');
    t.after(() => events.close());
    await rpcOk(app.url, 'mob/create', { mob_id: 'm1', definition: DEF });
    await rpcOk(app.url, 'mob/start_flow', { mob_id: 'm1', flow_id: 'f', run_id: 'r1', activation: { input: 'x' } });
    await held.entered.promise;
    await events.untilEvent('step_dispatched');

    const cancelled = await rpcOk(app.url, 'mob/cancel_flow', { mob_id: 'm1', run_id: 'r1' });
    assert.equal(cancelled.run_id, 'r1');
    await events.untilEvent('flow_canceled');
    const status = await rpcOk(app.url, 'mob/flow_status', { mob_id: 'm1', run_id: 'r1' });
    assert.equal(status.status, 'canceled');
    const kinds = (await rpcOk(app.url, 'toolkit/mob_events/query', { filter: { mob_id: 'm1', run_id: 'r1' }, limit: 100 })).events.map(
      (e: { kind: string }) => e.kind,
    );
    assert.equal(kinds.filter((k: string) => k === 'flow_canceled').length, 1, kinds.join(','));
    assert.ok(!kinds.includes('flow_completed') && !kinds.includes('flow_failed'), kinds.join(','));
    assert.equal(
      app.provider.requests.some((r) => lastUser(r).startsWith('after')),
      false,
      'step 2 never ran',
    );
    // Cancelling again is answered with the same terminal run.
    assert.equal((await rpcOk(app.url, 'mob/cancel_flow', { mob_id: 'm1', run_id: 'r1' })).status, 'canceled');
    // The held step's turn was interrupted with the run: the member works again (its lane is free).
    const after = await rpcOk(app.url, 'mob/send_message', { mob_id: 'm1', agent_identity: 'a', prompt: 'ping' });
    assert.equal(after.text, 'echo: ping');
    assert.equal((await call(app.url, 'GET', '/mob/m1/members/a/status')).body.state, 'active');
  });

  it('mob/destroy while a flow runs cancels the run and ends the mob', async (t) => {
    const held = heldProvider();
    const app = await startApp(t, held.script);
    const events = await SseClient.open(app.url, '/toolkit/mob_events/stream?mob_id=m2');
    t.after(() => events.close());
    await rpcOk(app.url, 'mob/create', { mob_id: 'm2', definition: DEF });
    await rpcOk(app.url, 'mob/start_flow', { mob_id: 'm2', flow_id: 'f', run_id: 'r2', activation: { input: 'y' } });
    await held.entered.promise;
    await events.untilEvent('step_dispatched');

    await rpcOk(app.url, 'mob/destroy', { mob_id: 'm2' });
    await events.untilEvent('flow_canceled');
    await events.untilEvent('mob_destroyed');
    const status = await rpcOk(app.url, 'mob/flow_status', { mob_id: 'm2', run_id: 'r2' });
    assert.equal(status.status, 'canceled');
    assert.deepEqual(status.outputs, [], 'the held step produced no output');
    assert.equal(
      app.provider.requests.some((r) => lastUser(r).startsWith('after')),
      false,
      'step 2 never ran',
    );
  });
});
