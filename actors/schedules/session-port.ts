// actors/schedules/session-port.ts: how a due occurrence reaches its target session: a real turn through
// the session commands (createSession / continueSession), so the session's machine applies its busy
// rule exactly as for an HTTP caller. The only file of the schedule subsystem that knows the session kind.
import { ServiceError } from '../../contracts/errors.ts';
import type { MaterializeCreate, TargetAction } from '../../contracts/schedule.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import type { Static } from 'typebox';
import { continueSession, createSession, type TurnReply } from '../session/session-commands.ts';
import type { SessionHost } from '../session/session-host.ts';

type SessionPresence = 'missing' | 'idle' | 'busy';

interface ScheduledTurn {
  sessionId: string;
  /** Present when the session does not exist yet and must be created with this id. */
  create?: Static<typeof MaterializeCreate>;
  action: TargetAction;
  requestId: string;
  marker: string;
  /** Published as the session's `schedule_triggered` event when the turn is admitted. */
  trigger: { schedule_id: string; occurrence_id: string; due_at_utc: string };
  onAdmitted(): void;
}

/** What the schedule actors need from sessions. */
export interface SessionPort {
  presence(sessionId: string): Promise<SessionPresence>;
  /** Resolves when the session's running turn (if any) has settled. */
  whenSettled(sessionId: string): Promise<void>;
  /** True when the session's transcript holds a user row marked with `marker` (the turn committed). */
  hasMarker(sessionId: string, marker: string): Promise<boolean>;
  run(turn: ScheduledTurn): Promise<TurnReply>;
}

function promptOf(action: TargetAction): ContentInput {
  if (action.type === 'prompt') return action.prompt;
  return `Scheduled event '${action.event_type}':\n${JSON.stringify(action.payload ?? null)}`;
}

/** The port over the session kind (the stable entry to run turns, docs/runtime.md). */
export function sessionPort(sup: SessionHost): SessionPort {
  const lookup = async (sessionId: string) => {
    const live = sup.peek(sessionId);
    if (live) return live.snapshotRecord.archived ? null : live;
    const record = await sup.deps.store.getSession(sessionId);
    if (!record || record.archived) return null;
    return sup.get(sessionId);
  };
  return {
    async presence(sessionId) {
      const actor = await lookup(sessionId);
      if (!actor) return 'missing';
      return actor.isRunning() ? 'busy' : 'idle';
    },
    async whenSettled(sessionId) {
      const actor = await lookup(sessionId);
      if (actor) await actor.whenSettled();
    },
    async hasMarker(sessionId, marker) {
      const { rows } = await sup.deps.store.readRows(sessionId);
      return rows.some((r) => r.role === 'user' && r.identity?.idempotency_key === marker);
    },
    async run(turn) {
      const handle = sup.requests.begin(turn.requestId);
      const onAdmitted = () => {
        // SPEC "schedule_triggered" (source: scheduling), on the target session's stream and ledger, just
        // before the turn's run_started.
        sup.peek(turn.sessionId)?.hub.publish('schedule_triggered', { session_id: turn.sessionId, source: 'scheduling', ...turn.trigger });
        turn.onAdmitted();
      };
      const extras = { identity: { idempotency_key: turn.marker, source: 'schedule' }, onAdmitted };
      const prompt = promptOf(turn.action);
      const transient = turn.action.type === 'prompt' ? (turn.action.additional_instructions ?? null) : null;
      const system = turn.action.type === 'prompt' ? turn.action.system_prompt : undefined;
      try {
        if (turn.create) {
          const c = turn.create;
          return await createSession(
            sup,
            {
              prompt,
              transient_turn_context: transient,
              ...((c.system_prompt ?? system) ? { system_prompt: c.system_prompt ?? system } : {}),
              ...(c.model ? { model: c.model } : {}),
              ...(c.provider ? { provider: c.provider as never } : {}),
              ...(c.max_tokens ? { max_tokens: c.max_tokens } : {}),
              ...(c.labels ? { labels: c.labels } : {}),
              ...(c.enable_builtins !== undefined ? { enable_builtins: c.enable_builtins } : {}),
              ...(c.enable_shell !== undefined ? { enable_shell: c.enable_shell } : {}),
              ...(c.enable_schedule !== undefined ? { enable_schedule: c.enable_schedule } : {}),
            },
            { requestId: turn.requestId, signal: handle.signal, onCommitting: handle.markCommitting, ...extras, sessionId: turn.sessionId },
          );
        }
        return await continueSession(
          sup,
          turn.sessionId,
          {
            session_id: turn.sessionId,
            prompt,
            transient_turn_context: transient,
            ...(system ? { system_prompt: system } : {}),
          },
          { requestId: turn.requestId, signal: handle.signal, onCommitting: handle.markCommitting, ...extras },
        );
      } finally {
        handle.finish();
      }
    },
  };
}

/** The error class an occurrence records when its turn failed. */
export function failureClass(err: unknown): string {
  if (err instanceof ServiceError) return err.code.toLowerCase();
  return 'internal_error';
}
