// actors/mob/member-sessions.ts: how the mob runtime reaches its members' sessions. Every member is a
// real Warren session: its kickoff is a create turn, each dispatched prompt a continue turn, both through
// the session commands (actors/session/session-commands.ts), so turns run against the configured provider and
// the session machine applies its busy rule as for any caller. Wiring uses comms: members carry a comms
// name, so wired members find each other with the comms tools, and `mob.peer_added` / `mob.peer_retired`
// / `mob.peer_unwired` lifecycle notices reach their inboxes. The only mob file that knows sessions.
import { randomUUID } from 'node:crypto';
import type { ProviderName } from '../../contracts/session.ts';
import type { ContentInput, Message } from '../../contracts/transcript.ts';
import { CommsHost } from '../comms/comms-host.ts';
import { sendComms } from '../comms/comms-send.ts';
import { continueSession, createSession, CreatedWithTurnFailure, type TurnReply } from '../session/session-commands.ts';
import type { SessionHost } from '../session/session-host.ts';
import { historyPage } from '../session/session-queries.ts';

type MobLifecycleKind = 'mob.peer_added' | 'mob.peer_retired' | 'mob.peer_unwired';

interface KickoffRequest {
  sessionId: string;
  prompt: string;
  systemPrompt?: string;
  model?: string;
  provider?: ProviderName;
  commsName?: string;
  /** Recorded in the session's settings: the session gets the mob tools. */
  member?: { mob_id: string; agent_identity: string };
  injected?: ContentInput[];
  signal: AbortSignal;
}

export interface MemberSessions {
  /** Creates the member's session with this id and runs its first (kickoff) turn. */
  kickoff(req: KickoffRequest): Promise<TurnReply>;
  /** Runs one turn on the member's session. */
  prompt(sessionId: string, text: string, signal: AbortSignal): Promise<TurnReply>;
  /** Interrupts the session's running turn (no-op when idle). */
  interrupt(sessionId: string): void;
  exists(sessionId: string): Promise<boolean>;
  history(sessionId: string, offset: number, limit?: number): Promise<{ total: number; rows: Message[] }>;
  /** True when members get comms names (the comms module is built). */
  readonly comms: boolean;
  /** A lifecycle notice from one member session to another; false when it could not be delivered. */
  notify(from: string, to: string, kind: MobLifecycleKind, peer: string, role?: string): Promise<boolean>;
  /**
   * Archives a session the mob is done with (a retired helper's), unless work the mob did not start is on
   * it (a turn or queued follow-ups of another caller, a durable hold): then it is left open and the
   * reason returned. An archived or missing session is closed already.
   */
  close(sessionId: string): Promise<{ closed: true } | { closed: false; reason: string }>;
  /** Resolves once the session is idle (or archived, or not resident). */
  whenIdle(sessionId: string): Promise<void>;
}

export function memberSessions(sessions: SessionHost): MemberSessions {
  const comms = () => (sessions.extension instanceof CommsHost ? sessions.extension : null);
  return {
    get comms() {
      return comms() !== null;
    },
    async kickoff(req) {
      try {
        return await createSession(
          sessions,
          {
            prompt: req.prompt,
            ...(req.systemPrompt ? { system_prompt: req.systemPrompt } : {}),
            ...(req.model ? { model: req.model } : {}),
            ...(req.provider ? { provider: req.provider } : {}),
            ...(req.commsName && comms() ? { comms_name: req.commsName } : {}),
            ...(req.injected?.length ? { injected_context: req.injected } : {}),
            enable_schedule: false,
          },
          {
            requestId: `mob-${randomUUID()}`,
            signal: req.signal,
            ...(req.member ? { settings: { mob_member: req.member } } : {}),
            sessionId: req.sessionId,
          },
        );
      } catch (err) {
        // The session exists; the kickoff turn failed: the member fails with the turn's own error.
        throw err instanceof CreatedWithTurnFailure ? err.cause : err;
      }
    },
    prompt(sessionId, text, signal) {
      return continueSession(sessions, sessionId, { session_id: sessionId, prompt: text }, { requestId: `mob-${randomUUID()}`, signal });
    },
    interrupt(sessionId) {
      sessions.peek(sessionId)?.interrupt();
    },
    async exists(sessionId) {
      return sessions.peek(sessionId) !== undefined || (await sessions.deps.store.getSession(sessionId)) !== undefined;
    },
    history(sessionId, offset, limit) {
      // Mob-owned sessions: a retired helper's archived session keeps its history on the mob routes.
      return historyPage(sessions, sessionId, { offset, ...(limit !== undefined ? { limit } : {}) }, { includeArchived: true });
    },
    async close(sessionId) {
      const record = sessions.peek(sessionId)?.snapshotRecord ?? (await sessions.deps.store.getSession(sessionId));
      if (!record || record.archived) return { closed: true };
      const actor = await sessions.get(sessionId);
      const status = actor.status();
      if (status.state !== 'idle') {
        const queued = status.followUps ? `, ${status.followUps.queued} follow-ups queued` : '';
        return {
          closed: false,
          reason: `session ${sessionId} is ${status.state}${status.phase ? ` (${status.phase})` : ''}${queued}: work another caller started is on it, so it is left open and archived when that work ends`,
        };
      }
      await actor.archive();
      sessions.forget(sessionId);
      return { closed: true };
    },
    whenIdle(sessionId) {
      const actor = sessions.peek(sessionId);
      if (!actor || actor.snapshotRecord.archived || actor.status().state === 'idle') return Promise.resolve();
      return new Promise<void>((resolve) => {
        const sub = actor.machine.subscribe((snap) => {
          if (snap.value !== 'idle' && snap.value !== 'archived') return;
          queueMicrotask(() => sub.unsubscribe());
          resolve();
        });
      });
    },
    async notify(from, to, kind, peer, role) {
      const host = comms();
      if (!host) return false;
      try {
        await sendComms(host, {
          kind: 'peer_lifecycle',
          session_id: from,
          to,
          lifecycle_kind: kind as never,
          params: { peer, ...(role ? { role } : {}) },
        });
        return true;
      } catch {
        return false;
      }
    },
  };
}
