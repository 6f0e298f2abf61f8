// actors/mob/mob-tool-port.ts: binds the mob tools (tools/mob-tools.ts) to one member session, so the
// module unit hands out tools without importing tools/. `delegate` to another member runs a turn on it
// only when it is idle (active): a busy target is refused, so two members delegating to each other
// never wait on one another.
import { randomUUID } from 'node:crypto';
import { ServiceError } from '../../contracts/errors.ts';
import { createMobTools } from '../../tools/mob-tools.ts';
import type { Tool } from '../../tools/tool.ts';
import { boundText, spawnHelper } from './mob-helpers.ts';
import type { MobRuntime } from './mob-runtime.ts';

const DEFAULT_BYTES = 8000;

export function mobToolsFor(rt: MobRuntime, mobId: string, self: string): Tool[] {
  const { host } = rt;
  return createMobTools({
    async delegate({ to, prompt, max_text_bytes: max = DEFAULT_BYTES }) {
      if (to === undefined) {
        const r = await spawnHelper(host, mobId, {
          prompt,
          result_label: 'delegate',
          max_text_bytes: max,
          agent_identity: `${self}-helper-${randomUUID().slice(0, 8)}`,
        });
        return { from: r.agent_identity, output: r.output, truncated: r.bounded_result.truncated };
      }
      if (to === self) throw new ServiceError('BAD_REQUEST', 'a member does not delegate to itself');
      const mob = await host.live(mobId);
      const target = host.member(mob, to);
      if (target.state !== 'active') throw new ServiceError('SESSION_BUSY', `member ${to} is ${target.state}; delegate to an idle member`);
      const reply = await host.turns.dispatch(mob, to, prompt);
      const b = boundText(reply.text, max);
      return { from: to, output: b.text, truncated: b.truncated };
    },
    async members() {
      const mob = await host.get(mobId);
      return { mob_id: mobId, you: self, members: Object.values(mob.record.members).map((m) => rt.memberSnapshot(mob, m)) };
    },
    async spawn(a) {
      const mob = await host.live(mobId);
      const { member } = await host.spawn(
        mob,
        {
          agent_identity: a.agent_identity,
          ...(a.role ? { role: a.role } : {}),
          ...(a.instructions ? { instructions: a.instructions } : {}),
          ...(a.initial_message ? { initial_message: a.initial_message } : {}),
        },
        false,
      );
      return rt.memberSnapshot(mob, member.record);
    },
    async retire({ agent_identity }) {
      if (agent_identity === self) throw new ServiceError('BAD_REQUEST', 'a member does not retire itself');
      await host.retire(await host.live(mobId), agent_identity);
      return { retired: true };
    },
    wire: async ({ a, b }) => host.wiring.wire(await host.live(mobId), [{ a, b }]),
    startFlow: ({ flow_id, input }) =>
      rt.flows.startFlowRun({ mobId, flowId: flow_id, runId: randomUUID(), activation: input !== undefined ? { input } : null }),
    async flowStatus({ run_id }) {
      const run = await rt.flows.getFlowRun(mobId, run_id);
      if (!run) throw new ServiceError('NOT_FOUND', `no run ${run_id}`);
      return run;
    },
  });
}
