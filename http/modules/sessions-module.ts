// http/modules/sessions-module.ts: the session lifecycle routes (create, continue, read, list, archive,
// system context and prompt, interrupt, request cancel), the session actor kind, and the capabilities
// they build. The event stream and ledger are the events module (events-module.ts).
import { SESSION_KIND } from '../../actors/session/session-host.ts';
import { SESSION_ROUTES } from '../../contracts/routes-sessions.ts';
import { sessionHandlers } from '../handlers/sessions.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';
import { EVENT_ROUTE_IDS } from './events-module.ts';

export function sessionsModule(ctx: ModuleContext): ModuleUnit {
  const sessions = ctx.sessions();
  return {
    name: 'sessions',
    routes: SESSION_ROUTES.filter((r) => !EVENT_ROUTE_IDS.has(r.id)),
    handlers: sessionHandlers(sessions, ctx.realm.realmId),
    actorKinds: [SESSION_KIND],
    configKeys: ['agent', 'shell', 'max_tokens'],
    // builtins and shell carry their standard config gates (tools.*_enabled).
    capabilities: [{ id: 'sessions' }, { id: 'builtins' }, { id: 'shell' }, { id: 'session_store' }],
    health: () => sessions.health(),
  };
}
