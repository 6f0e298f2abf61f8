// actors/mob/mob-schedule-port.ts: how schedules deliver to mobs (the MobTargetPort of
// contracts/schedule.ts, installed as RuntimeDeps.mobTargets by the mob module). `member` runs the
// action on the member, `flow` starts a run with id `schedule-<occurrence_id>` (once, however often the
// occurrence is delivered), `spawn_helper` / `fork_helper` run the action's prompt on a helper.
import type { MobTarget, MobTargetPort, TargetAction } from '../../contracts/schedule.ts';
import { plainText } from '../../providers/transcript-map.ts';
import { forkHelper, spawnHelper } from './mob-helpers.ts';
import type { MobRuntime } from './mob-runtime.ts';

function textOf(action: TargetAction | undefined): string {
  if (!action) return '';
  if (action.type === 'prompt') return plainText(action.prompt);
  return `Scheduled event '${action.event_type}':\n${JSON.stringify(action.payload ?? null)}`;
}

export function mobSchedulePort(rt: MobRuntime): MobTargetPort {
  return {
    async fire(target: MobTarget, occurrenceId: string) {
      const { host } = rt;
      switch (target.type) {
        case 'member': {
          const mob = await host.live(target.mob_id);
          const reply = await host.turns.dispatch(mob, target.agent_identity!, textOf(target.action));
          return {
            agent_identity: target.agent_identity,
            session_id: reply.sessionId,
            turns: reply.turns,
            tool_calls: reply.toolCalls,
            usage: reply.usage,
          };
        }
        case 'flow': {
          const run = await rt.flows.startFlowRun({
            mobId: target.mob_id,
            flowId: target.flow_id!,
            runId: `schedule-${occurrenceId}`,
            activation: target.activation ?? null,
          });
          return { flow_id: run.flow_id, run_id: run.run_id };
        }
        case 'spawn_helper':
        case 'fork_helper': {
          const req = {
            prompt: textOf(target.action),
            result_label: target.result_label ?? 'schedule',
            max_text_bytes: target.max_text_bytes ?? 8000,
            agent_identity: target.agent_identity ?? `sched-${occurrenceId.slice(0, 8)}`,
          };
          const r =
            target.type === 'spawn_helper'
              ? await spawnHelper(host, target.mob_id, req)
              : await forkHelper(host, target.mob_id, { ...req, source_member_id: target.source_member_id! });
          return {
            agent_identity: r.agent_identity,
            session_id: r.session_id,
            bounded_result: r.bounded_result,
            ...(r.retirement_error ? { retirement_error: r.retirement_error } : {}),
          };
        }
      }
    },
  };
}
