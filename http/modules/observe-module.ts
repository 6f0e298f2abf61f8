// http/modules/observe-module.ts: observation as a module unit: GET /metrics, the actor viewer (/ui and
// its assets) and the inspection routes it reads. The Observability object is made by app.ts before
// the store and supervisor (it times the store and hooks the runtime), so this factory closes over it.
import type { AnyStateMachine } from 'xstate';
import { OBSERVE_ROUTES } from '../../contracts/routes-observe.ts';
import { registryDirectory } from '../../actors/observe/actor-directory.ts';
import type { Observability } from '../../actors/observe/observability.ts';
import { SESSION_KIND } from '../../actors/session-host.ts';
import { sessionMachine } from '../../machines/session-machine.ts';
import { inspectHandlers } from '../handlers/inspect.ts';
import { observeHandlers } from '../handlers/observe.ts';
import type { ModuleFactory } from '../module-unit.ts';

/** Machines the viewer can draw, by actor kind (other kinds add theirs here as they land). */
const MACHINES: ReadonlyMap<string, AnyStateMachine> = new Map([[SESSION_KIND, sessionMachine as AnyStateMachine]]);

export function observeModule(obs: Observability): ModuleFactory {
  return (ctx) => {
    obs.attach(registryDirectory(ctx.supervisor, ctx.sessions, MACHINES));
    return {
      name: 'observe',
      routes: OBSERVE_ROUTES,
      handlers: { ...observeHandlers(obs.metrics), ...inspectHandlers(obs, ctx.realm.realmId) },
      configKeys: ['telemetry'],
      close: () => obs.close(),
    };
  };
}
