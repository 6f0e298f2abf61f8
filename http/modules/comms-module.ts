// http/modules/comms-module.ts: comms and ingress as a module unit: the routes (send, peers, external
// events, terminal peer responses), the comms agent actor kind (keep-alive sessions), the comms tools,
// the [comms] config section and the `comms` capability.
import { ACCEPT_CALL, CommsHost } from '../../actors/comms/comms-host.ts';
import { commsToolSource } from '../../actors/comms/comms-tool-port.ts';
import { COMMS_AGENT_KIND } from '../../actors/comms/keep-alive.ts';
import { COMMS_ROUTES } from '../../contracts/routes-comms.ts';
import { commsHandlers } from '../handlers/comms.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function commsModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const host = new CommsHost({
    sessions: ctx.sessions(),
    config: ctx.supervisor.deps.config,
    log: ctx.log.child({ component: 'comms' }),
    now: deps.now,
  });
  // An empty variable disables the check, like an unset one (wire-notes §11 item 15).
  const secret = ctx.env.WARREN_WEBHOOK_SECRET || undefined;
  // Cluster: a peer envelope for a session another node hosts is admitted there (CommsHost.acceptInRealm).
  deps.ownerCalls?.handle(ACCEPT_CALL, (body) => host.acceptCall(body));
  return {
    name: 'comms',
    routes: COMMS_ROUTES,
    handlers: commsHandlers(host, ctx.realm.realmId, secret),
    actorKinds: [COMMS_AGENT_KIND],
    tools: { flag: 'comms_name', tools: commsToolSource(host) },
    configKeys: ['comms'],
    // SPEC: comms is "compiled in"; no config gate.
    capabilities: [{ id: 'comms', gate: null }],
    start: () => host.start(),
    close: () => host.close(),
  };
}
