// actors/session-types.ts: the persisted session state (SessionRecord.state) and the dependencies a
// session actor is built with. Shared by the session files (session-host.ts, -core, -actor, -commands).
import type { PendingInput, PersistedState, SessionSettings } from '../contracts/records.ts';
import type { RuntimeDeps } from './supervisor.ts';
import type { TurnToolset } from './turn-runner.ts';

/** The session's persisted state (SessionRecord.state) and its parts are schemas in contracts/records.ts. */
export type { PendingInput, PersistedState, SessionSettings };

/** The session kind's name in the actor registry (and in observation). */
export const SESSION_KIND = 'session';

/** What a session actor is built with: the runtime's dependencies plus its tool set factory. */
export interface SessionDeps extends RuntimeDeps {
  buildToolset(sessionId: string, settings: SessionSettings): TurnToolset | null;
}
