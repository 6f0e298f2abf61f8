// http/modules/observe-module.ts: observation as a module unit: GET /metrics, the actor viewer (/ui and
// its assets) and the inspection routes it reads. The Observability object is made by app.ts before
// the store and supervisor (it times the store and hooks the runtime), so this factory closes over it.
import { OBSERVE_ROUTES } from '../../contracts/routes-observe.ts';
import { registryDirectory } from '../../actors/observe/actor-directory.ts';
import type { Observability } from '../../actors/observe/observability.ts';
import { inspectHandlers } from '../handlers/inspect.ts';
import { observeHandlers } from '../handlers/observe.ts';
import type { ModuleFactory } from '../module-unit.ts';

export function observeModule(obs: Observability): ModuleFactory {
  return (ctx) => {
    // Machines the viewer can draw: every kind registers its machine with the actor registry (a live map).
    obs.attach(registryDirectory(ctx.supervisor, ctx.sessions, ctx.supervisor.registry.machines));
    return {
      name: 'observe',
      routes: OBSERVE_ROUTES,
      handlers: { ...observeHandlers(obs.metrics), ...inspectHandlers(obs, ctx.realm.realmId) },
      configKeys: ['telemetry'],
      close: () => obs.close(),
    };
  };
}
