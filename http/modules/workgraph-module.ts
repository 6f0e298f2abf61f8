// http/modules/workgraph-module.ts: the WorkGraph module unit: its read-only routes, the
// `workgraph_namespace` actor kind (registered by WorkGraphHost), the workgraph_* tools for sessions
// that asked for them (enable_workgraph, else `[tools] workgraph_enabled`), and the `work_graph`
// capability (standard gate: tools.workgraph_enabled). Mob-flow execution bindings
// (work-bindings-module.ts) reach the host through actors/work-bindings/ports.ts.
import { WORKGRAPH_KIND, WorkGraphHost } from '../../actors/workgraph/wg-host.ts';
import { workGraphTools } from '../../actors/workgraph/wg-tool-port.ts';
import { provideWorkGraph } from '../../actors/work-bindings/ports.ts';
import { WORKGRAPH_ROUTES } from '../../contracts/workgraph.ts';
import { workGraphHandlers } from '../handlers/workgraph.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function workgraphModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const host = new WorkGraphHost(
    { store: deps.store, realmId: ctx.realm.realmId, now: deps.now, log: ctx.log.child({ component: 'workgraph' }) },
    ctx.supervisor.registry,
  );
  provideWorkGraph(ctx.supervisor, host);
  const tools = workGraphTools(host);
  host.resumeLeases().catch((err: unknown) => deps.log.error({ err }, 'workgraph lease resume failed'));
  // On a cluster any node may have written a namespace's item leases (and died since): every node re-checks
  // once per ownership lease term, so some live node's timer observes each expiry (the head check makes the
  // nodes racing for one expiry commit it once).
  let sweep: NodeJS.Timeout | undefined;
  if (deps.cluster) {
    sweep = setInterval(
      () => {
        host.resumeLeases().catch((err: unknown) => deps.log.warn({ err }, 'workgraph lease resume failed'));
      },
      Math.max(1_000, deps.cluster.report().lease_ms),
    );
    sweep.unref();
  }
  return {
    name: 'workgraph',
    routes: WORKGRAPH_ROUTES,
    handlers: workGraphHandlers(host),
    actorKinds: [WORKGRAPH_KIND],
    tools: { flag: 'workgraph', tools },
    capabilities: [{ id: 'work_graph' }],
    close: async () => clearInterval(sweep),
  };
}
