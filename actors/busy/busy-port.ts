// actors/busy/busy-port.ts: where busy policies (actors/busy/follow-ups.ts) meet every running turn of a
// session, whoever started it: steering input taken at the turn's next model call, the store ops that
// consume it with the turn's commit, and the turn's end (steering callers are answered with its result).
import type { ContentInput } from '../../contracts/transcript.ts';
import type { TurnOutcome } from '../../machines/session-machine.ts';
import type { StoreOp } from '../../storage/store.ts';

export interface FollowUpPort {
  /** Steering inputs waiting for this session's running turn; taking them marks them injected. */
  pullSteer(sessionId: string): ContentInput[];
  /** Ops committed atomically with the running turn (the injected steering leaves the durable queue). */
  commitOps(sessionId: string, outcome: TurnOutcome): StoreOp[];
  /** The session is being archived: its waiting follow-ups and steering are dropped. */
  drop(sessionId: string): void;
  /** The session's running turn ended (its commit is durable, or it failed). */
  turnEnded(sessionId: string, result: { outcome: TurnOutcome } | { error: unknown }): void;
}
