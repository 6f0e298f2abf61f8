// actors/replay/replay-start.ts: where a replay of a session starts. A transcript's turns are found by
// their user rows (turnStarts); a replay starts at the first recorded turn. Turns before it (made while
// `[record]` was off, or whose recording `[ledger]` retention removed) are carried into the replay session
// as history, unchecked; a session with turns and no recording at all, or whose history before its oldest
// recording was rewritten since (compaction), cannot be replayed: 409 CONFLICT saying why.
import { ServiceError } from '../../contracts/errors.ts';
import type { RecordingPruned, SessionTurns, TurnRecording } from '../../contracts/replay.ts';
import type { Message } from '../../contracts/transcript.ts';
import { canonicalJson } from './canonical.ts';

/**
 * Turn starts of a transcript: the index of each turn's first row (its injected context, then the user row).
 * A turn's user row is `conversational`; user rows without a role (a structured-output extraction's
 * instruction, steering input) belong to the turn before, and a compaction summary is no turn. A transcript
 * written before rows carried a role counts every user row without one.
 */
export function turnStarts(rows: readonly Message[]): number[] {
  const starts: number[] = [];
  const roles = rows.some((r) => r.role === 'user' && r.transcript_role === 'conversational');
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i];
    if (r.role !== 'user') continue;
    if (roles ? r.transcript_role !== 'conversational' : r.transcript_role !== undefined) continue;
    let s = i;
    while (s > 0) {
      const p = rows[s - 1];
      const prevStart = starts.at(-1) ?? -1;
      if (s - 1 <= prevStart) break;
      // A system row before a turn may be a continue's system_append or a system_context append: it stays
      // with the history before the turn (a fork at the previous turn keeps it).
      if (p.role === 'user' && p.transcript_role === 'injected_context') s--;
      else break;
    }
    starts.push(s);
  }
  return starts;
}

export interface ReplayStart {
  /** The rows the replay session starts with: the system rows before the first recorded turn, or (when turns come before it) all of them. */
  lead: Message[];
  /** Turns before the first recorded one, or without a recording. */
  unrecorded: number;
  /** Turns whose recording retention removed. */
  pruned: number;
}

/** Whether the recorded turn's rows still sit at its `at_row` (its user row holds its prompt). */
function stillAt(rows: readonly Message[], rec: TurnRecording): boolean {
  const want = canonicalJson(rec.input.prompt);
  return rows
    .slice(rec.at_row, rec.at_row + rec.rows)
    .some((r) => r.role === 'user' && r.transcript_role === 'conversational' && canonicalJson(r.content) === want);
}

function notReplayable(sessionId: string, why: string, details: Record<string, unknown>): ServiceError {
  return new ServiceError('CONFLICT', `session ${sessionId} cannot be replayed: ${why}`, { session_id: sessionId, ...details });
}

/** Where the replay of `sessionId` starts; throws 409 CONFLICT when it cannot be replayed. */
export function replayStart(
  sessionId: string,
  rows: readonly Message[],
  recs: readonly TurnRecording[],
  pruned: RecordingPruned | undefined,
): ReplayStart {
  const turns = turnStarts(rows).length;
  const prunedTurns = pruned?.turns ?? 0;
  const reason = prunedTurns ? 'recording_pruned' : 'not_recorded';
  const details = { reason, turns, recorded_turns: recs.length, ...(prunedTurns ? { pruned_turns: prunedTurns } : {}) };
  const gone = prunedTurns
    ? `[ledger] retention removed the recordings of its ${prunedTurns} oldest turns with their events`
    : `its turns ran while [record] was off`;
  const first = recs[0];
  if (!first) {
    if (turns === 0) return { lead: rows.slice(), unrecorded: 0, pruned: 0 };
    throw notReplayable(sessionId, `none of its ${turns} turns has a recording left (${gone})`, details);
  }
  const before = turnStarts(rows.slice(0, first.at_row)).length;
  if (before > 0 && !stillAt(rows, first))
    throw notReplayable(sessionId, `${gone}, and the history before its oldest recording was rewritten since (compaction)`, details);
  const lead = before > 0 ? rows.slice(0, first.at_row) : rows.slice(0, first.at_row).filter((r) => r.role === 'system');
  return { lead, unrecorded: Math.max(before, turns - recs.length, 0), pruned: prunedTurns };
}

const PROMPT_PREVIEW = 200;

function promptText(content: unknown): string {
  if (typeof content === 'string') return content;
  const text = Array.isArray(content)
    ? content
        .map((b) => ((b as { type?: string; text?: unknown }).type === 'text' ? String((b as { text?: unknown }).text ?? '') : ''))
        .join('')
    : '';
  return text || '[non-text prompt]';
}

/**
 * The session's turns (GET /sessions/{id}/turns): each turn's first row and prompt, whether a recording
 * holds it (the recording's rows contain the turn's start) and, for a recorded turn, the `turns` bound of
 * POST /sessions/{id}/replay that replays through it (a replay takes the recordings oldest first).
 */
export function turnList(rows: readonly Message[], recs: readonly TurnRecording[]): SessionTurns['turns'] {
  const starts = turnStarts(rows);
  const bound = new Map<number, number>();
  recs.forEach((rec, k) => {
    const i = starts.findIndex((s) => s >= rec.at_row && s < rec.at_row + rec.rows);
    if (i >= 0) bound.set(i, k + 1);
  });
  return starts.map((start, i) => {
    const end = starts[i + 1] ?? rows.length;
    const user = rows.slice(start, end).find((r) => r.role === 'user' && r.transcript_role !== 'injected_context');
    const prompt = promptText(user?.role === 'user' ? user.content : undefined).slice(0, PROMPT_PREVIEW);
    const k = bound.get(i);
    return { turn: i + 1, at_row: start, prompt, recorded: k !== undefined, ...(k !== undefined ? { replay_turns: k } : {}) };
  });
}
