// http/modules/system-module.ts: the observation and system routes (health, OpenAPI, config, realms,
// capabilities, runtime host reads, model catalog) as a module unit.
import { storeHealthOf } from '../../actors/store-health.ts';
import { SYSTEM_ROUTES } from '../../contracts/routes-system.ts';
import { systemHandlers } from '../handlers/system.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function systemModule(ctx: ModuleContext): ModuleUnit {
  return {
    name: 'system',
    routes: SYSTEM_ROUTES,
    configKeys: ['rest', 'limits', 'providers', 'retry'],
    handlers: systemHandlers({
      config: ctx.config,
      realm: ctx.realm,
      catalog: ctx.modelCatalog,
      sessionHealth: () => ctx.health(),
      storeHealth: () => storeHealthOf(ctx.supervisor.deps.store),
      cluster: () => ctx.supervisor.deps.cluster?.report(),
      baseUrl: ctx.baseUrl,
      routes: ctx.routes,
      openapi: ctx.openapi,
      capabilities: ctx.supervisor.capabilities,
    }),
  };
}
