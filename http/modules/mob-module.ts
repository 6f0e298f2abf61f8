// http/modules/mob-module.ts: mobs as a module unit: the mob runtime (actors/mob/: the `mob` and
// `mob_member` actor kinds, flows, the structural event ledger, operator scopes), JSON-RPC 2.0 at
// POST /rpc, the mob REST routes and the toolkit event stream, the mob agent tools, and the `mob`
// capability (feature flag `mobs`). See docs/mobs.md.
import { MEMBER_KIND, MOB_KIND } from '../../actors/mob/mob-actor.ts';
import { MobRuntime } from '../../actors/mob/mob-runtime.ts';
import { mobSchedulePort } from '../../actors/mob/mob-schedule-port.ts';
import { provideMobRuntime } from '../../actors/work-bindings/ports.ts';
import { MOB_ROUTES } from '../../contracts/routes-mob.ts';
import { hostIdentity } from '../../contracts/routes-system.ts';
import { mobHandlers } from '../handlers/mob.ts';
import { mobRpcHandlers, mobRpcSocket } from '../handlers/mob-rpc.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function mobModule(ctx: ModuleContext): ModuleUnit {
  const rt = new MobRuntime({
    supervisor: ctx.supervisor,
    sessions: ctx.sessions(),
    now: ctx.clock('mob'),
    baseUrl: ctx.baseUrl,
    eventRetention: ctx.config.current().mob?.event_retention,
    placement: {
      hostId: () => hostIdentity(ctx.realm).host_id,
      ...(ctx.supervisor.deps.cluster ? { cluster: ctx.supervisor.deps.cluster } : {}),
    },
  });
  ctx.supervisor.deps.mobTargets = mobSchedulePort(rt);
  ctx.supervisor.deps.mobFlows = rt.flows;
  provideMobRuntime(ctx.supervisor, rt);
  const limits = () => ({ maxDepth: ctx.config.current().limits.max_json_depth, maxBytes: ctx.config.current().limits.max_body_bytes });
  return {
    name: 'mobs',
    routes: MOB_ROUTES,
    handlers: { ...mobRpcHandlers(rt, limits), ...mobHandlers(rt) },
    websockets: [mobRpcSocket(rt, ctx.log.child({ component: 'mob-rpc' }), limits, ctx.supervisor.deps.ownerCalls)],
    actorKinds: [MOB_KIND, MEMBER_KIND],
    tools: { flag: 'mob_member', tools: rt },
    capabilities: [{ id: 'mob', gate: null }],
    start: () => rt.start(),
    close: () => rt.close(),
  };
}
