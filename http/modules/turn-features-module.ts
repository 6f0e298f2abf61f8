// http/modules/turn-features-module.ts: what shapes a run beyond its prompt, as a module unit:
// structured output, budgets (`[budget]`) and hooks (`[hooks]`) for every session turn, and POST /help.
// Sessions reach the service through the runtime deps (RuntimeDeps.turnFeatures).
import { helpSessionRequest } from '../../actors/turn-features/help.ts';
import { TurnFeatureService } from '../../actors/turn-features/run-features.ts';
import { HELP_ROUTE, HELP_ROUTES } from '../../contracts/routes-help.ts';
import { on } from '../handler.ts';
import { sessionHandlers } from '../handlers/sessions.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function turnFeaturesModule(ctx: ModuleContext): ModuleUnit {
  const service = new TurnFeatureService(ctx.supervisor.deps.config, ctx.clock('budget'), ctx.env);
  ctx.supervisor.deps.turnFeatures = service;
  // A help question is a session create with a fixed body; the create handler answers it.
  const create = sessionHandlers(ctx.sessions(), ctx.realm.realmId, { tools_off: true })['sessions.create'];
  return {
    name: 'turn_features',
    routes: HELP_ROUTES,
    handlers: on(HELP_ROUTE.ask, async (hctx) => {
      const body = hctx.body;
      const reply = await create({ ...hctx, body: helpSessionRequest(body, ctx.routes()) });
      if (!('body' in reply)) return reply;
      return { ...reply, body: { ...(reply.body as object), execution_mode: body.execution_mode ?? 'explain_only' } };
    }),
    configKeys: ['budget', 'hooks'],
    capabilities: [
      { id: 'structured_output', gate: null },
      { id: 'hooks', gate: null },
      { id: 'help', gate: null },
    ],
    close: () => service.slots.drained(),
  };
}
