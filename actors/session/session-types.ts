// actors/session/session-types.ts: the persisted session state (SessionRecord.state) and the dependencies a
// session actor is built with. Shared by the session files (session-host.ts, -core, -actor, -commands).
import type { PendingInput, PersistedState, SessionSettings } from '../../contracts/records.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { StoreOp } from '../../storage/store.ts';
import type { RuntimeDeps } from '../supervisor.ts';
import type { TurnToolset } from './turn-runner.ts';

/** The session's persisted state (SessionRecord.state) and its parts are schemas in contracts/records.ts. */
export type { PersistedState, SessionSettings };

/** The session kind's name in the actor registry (and in observation). */
export const SESSION_KIND = 'session';

/** What a session actor is built with: the runtime's dependencies plus its tool set factory. */
export interface SessionDeps extends RuntimeDeps {
  buildToolset(sessionId: string, settings: SessionSettings): TurnToolset | null;
}

/**
 * What another module attaches to one turn (the comms inbox): injected context taken from the session's
 * inbox, steering input pulled at each later model call, and store ops committed atomically with the
 * turn. `settle` is called once when the turn is over (committed: its commit is durable).
 */
export interface TurnInputClaim {
  context: ContentInput[];
  pullSteer(): ContentInput[];
  commitOps(): StoreOp[];
  settle(committed: boolean): void;
}

/** A module that feeds session turns and follows their settings (registered on the SessionHost). */
export interface SessionExtension {
  /** Claims the pending inbox inputs of a turn about to run; `wakeKey` names the input that woke it. */
  claim(sessionId: string, opts: { wakeKey?: string }): Promise<TurnInputClaim>;
  /** Store ops to commit with a session's creation or an accepted change of its comms settings. */
  settingsOps(sessionId: string, settings: SessionSettings): StoreOp[];
}
