// test/actors/mob-flow-port.test.ts: the flow-run port (FlowRunPort, what work execution bindings
// call) on a real lmdb store and real member sessions: idempotent start by run id, terminal outcomes
// reported once. Failed and canceled runs are covered through the real server (test/integration/mobs.test.ts,
// mob-schedules.test.ts), where the whole module set is installed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { MobRuntime } from '../../actors/mob/mob-runtime.ts';
import type { FlowRunRecord } from '../../contracts/mob.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { createScriptedProvider, echoReply, type ScriptedReply } from '../../providers/scripted.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { deferred, type Deferred } from '../helpers/gates.ts';
import { openTestRuntime } from '../helpers/runtime.ts';

describe('mob flow-run port', () => {
  it('starts runs idempotently and reports each terminal outcome once', async (t) => {
    const entered = deferred();
    const never = deferred();
    const provider = createScriptedProvider((req: ProviderRequest): ScriptedReply => {
      const last = [...req.messages].reverse().find((m) => m.role === 'user');
      const text = last && last.role === 'user' ? plainText(last.content) : '';
      if (text.startsWith('break')) return { error: { code: 'PROVIDER_ERROR', message: 'vendor down' } };
      if (text.startsWith('hang')) {
        entered.resolve();
        return { text: 'x', waitFor: never.promise };
      }
      return echoReply(req);
    });
    const { runtime: sup, sessions } = await openTestRuntime(t, { provider });
    const rt = new MobRuntime({ supervisor: sup, sessions, now: () => Date.now(), baseUrl: () => 'http://x' });
    await rt.start();
    const mob = await rt.host.create({
      mob_id: 'p',
      definition: {
        members: [{ agent_identity: 'a' }],
        flows: [
          { flow_id: 'ok', steps: [{ step_id: 's', member: 'a', prompt: 'do {{input}}' }] },
          { flow_id: 'bad', steps: [{ step_id: 's', member: 'a', prompt: 'break' }] },
          {
            flow_id: 'slow',
            steps: [
              { step_id: 's', member: 'a', prompt: 'hang' },
              { step_id: 't', member: 'a', prompt: 'never reached' },
            ],
          },
        ],
      },
    });
    await rt.host.turns.waitKickoff(mob, undefined, undefined);
    const seen: FlowRunRecord[] = [];
    const done = new Map<string, Deferred>([['r-ok', deferred()]]);
    rt.flows.onTerminal((run) => {
      seen.push(run);
      done.get(run.run_id)?.resolve();
    });

    const first = await rt.flows.startFlowRun({ mobId: 'p', flowId: 'ok', runId: 'r-ok', activation: { input: 'it', opaque: [1] } });
    const again = await rt.flows.startFlowRun({ mobId: 'p', flowId: 'ok', runId: 'r-ok' });
    assert.equal(again.created_at_ms, first.created_at_ms);
    await assert.rejects(rt.flows.startFlowRun({ mobId: 'p', flowId: 'bad', runId: 'r-ok' }), { code: 'CONFLICT' });
    await done.get('r-ok')!.promise;
    const ok = await rt.flows.getFlowRun('p', 'r-ok');
    assert.equal(ok?.status, 'completed');
    assert.equal(ok?.output, 'echo: do it');
    assert.deepEqual(ok?.activation, { input: 'it', opaque: [1] });

    assert.deepEqual(
      seen.map((r) => [r.run_id, r.status]),
      [['r-ok', 'completed']],
    );
    assert.equal(await rt.flows.getFlowRun('p', 'nope'), undefined);
    await assert.rejects(rt.flows.startFlowRun({ mobId: 'p', flowId: 'missing', runId: 'r-x' }), { code: 'BAD_REQUEST' });
    await assert.rejects(rt.flows.startFlowRun({ mobId: 'nope', flowId: 'ok', runId: 'r-y' }), { code: 'NOT_FOUND' });
  });
});
