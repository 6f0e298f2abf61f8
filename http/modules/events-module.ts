// http/modules/events-module.ts: a session's event stream (SSE, with Last-Event-ID replay) and its
// structural ledger read, as a module unit.
import { SESSION_ROUTES } from '../../contracts/routes-sessions.ts';
import { eventHandlers } from '../handlers/events.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

/** The SESSION_ROUTES entries this module serves. */
export const EVENT_ROUTE_IDS: ReadonlySet<string> = new Set(['sessions.events', 'sessions.ledger']);

export function eventsModule(ctx: ModuleContext): ModuleUnit {
  return {
    name: 'events',
    routes: SESSION_ROUTES.filter((r) => EVENT_ROUTE_IDS.has(r.id)),
    handlers: eventHandlers(ctx.sessions(), ctx.realm.realmId, {
      sse: { onTruncated: (dropped) => ctx.supervisor.deps.observer?.sseTruncated?.('session', dropped) },
    }),
    capabilities: [{ id: 'streaming' }, { id: 'event_replay' }],
    configKeys: ['ledger'],
  };
}
