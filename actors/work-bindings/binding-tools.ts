// actors/work-bindings/binding-tools.ts: the MCP execution tools on Warren's own MCP endpoint:
// warren_workgraph_flow_launch, _flow_reconcile, _flow_abandon_uncertain, _flow_binding_get,
// _flow_binding_list and warren_mob_flow_status. Every answer is a public read: activation parameters,
// idempotency keys, correlation ids and principals are never in it.
import { ServiceError } from '../../contracts/errors.ts';
import type { FlowRunRecord } from '../../contracts/mob.ts';
import { AbandonArgs, BindingIdArgs, BindingListArgs, FlowLaunchArgs, FlowStatusArgs } from '../../contracts/work-binding.ts';
import type { ExposedResult, ExposedTool } from '../mcp-exposed.ts';
import type { BindingHost } from './binding-host.ts';
import { BINDING_KIND } from './binding-actor.ts';
import { MOB_KIND } from '../mob/mob-actor.ts';

/** On a cluster: a launch and a run's status run on the node hosting the mob, a binding's commands on the node hosting the binding. */
const onMob = (args: unknown) => ({ kind: MOB_KIND, id: (args as { mob_id: string }).mob_id });
const onBinding = (args: unknown) => ({ kind: BINDING_KIND, id: (args as { binding_id: string }).binding_id });

function structured(value: Record<string, unknown>): ExposedResult {
  return { text: JSON.stringify(value), structured: value };
}

/** A flow run without its activation parameters (public read). */
function publicRun(run: FlowRunRecord): Record<string, unknown> {
  const { activation: _a, v: _v, ...rest } = run;
  return rest;
}

export function bindingTools(host: BindingHost): ExposedTool[] {
  return [
    {
      name: 'warren_workgraph_flow_launch',
      description:
        'Bind a WorkGraph item to one mob-flow run and start it. Needs expected_item_revision (compare-and-set) and an idempotency_key; the same key with the same request answers the existing binding.',
      input_schema: FlowLaunchArgs,
      owner: onMob,
      async call(args) {
        return structured({ binding: await host.launch(args as FlowLaunchArgs) });
      },
    },
    {
      name: 'warren_workgraph_flow_reconcile',
      description:
        'Re-apply the binding rules: a running binding whose run ended writes its evidence and requests closure; answers the binding.',
      input_schema: BindingIdArgs,
      owner: onBinding,
      async call(args) {
        return structured({ binding: await host.reconcile((args as BindingIdArgs).binding_id) });
      },
    },
    {
      name: 'warren_workgraph_flow_abandon_uncertain',
      description:
        'Abandon an uncertain launch (a binding left in begun by a restart): needs expected_binding_revision, and only while its deterministic run is absent. A superseding launch is then required.',
      input_schema: AbandonArgs,
      owner: onBinding,
      async call(args) {
        return structured({ binding: await host.abandon(args as AbandonArgs) });
      },
    },
    {
      name: 'warren_workgraph_flow_binding_get',
      description: 'One work execution binding (redacted public view).',
      input_schema: BindingIdArgs,
      async call(args) {
        return structured({ binding: await host.get((args as BindingIdArgs).binding_id) });
      },
    },
    {
      name: 'warren_workgraph_flow_binding_list',
      description: 'Work execution bindings, oldest first, filtered by namespace, item and machine state (redacted public views).',
      input_schema: BindingListArgs,
      async call(args) {
        return structured({ bindings: await host.list(args as BindingListArgs) });
      },
    },
    {
      name: 'warren_mob_flow_status',
      description: 'The status of one mob flow run (without its activation parameters).',
      input_schema: FlowStatusArgs,
      owner: onMob,
      async call(args) {
        const a = args as FlowStatusArgs;
        await host.ports.mobs.host.get(a.mob_id);
        const run = await host.ports.mobs.flows.getFlowRun(a.mob_id, a.run_id);
        if (!run) throw new ServiceError('NOT_FOUND', `no run ${a.run_id} in mob ${a.mob_id}`, { mob_id: a.mob_id, run_id: a.run_id });
        return structured({ run: publicRun(run) });
      },
    },
  ];
}
