// actors/observe/inspect-queries.ts: the reads behind the inspection routes (http/handlers/inspect.ts):
// the filtered actor listing with counts per state, one actor's detail (for a session: transcript and
// ledger tails, turn phase) and a session's time travel, its ledger replayed through the real session
// machine with the pure `transition()` so each step shows the state after that event.
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { ServiceError } from '../../contracts/errors.ts';
import type { ActorList, ActorSummary } from '../../contracts/routes-observe.ts';
import { REPLAYED_TURN, sessionMachine, type SessionEvent, type TurnOutcome } from '../../machines/session-machine.ts';
import type { LedgerEntry, Store } from '../../storage/store.ts';
import type { ActorDirectory, ActorView } from './actor-directory.ts';
import { statePath } from './machine-graph.ts';

export interface ActorFilter {
  kind?: string;
  state?: string;
  /** `key=value` pairs, all must match. */
  labels: Array<[string, string]>;
  limit: number;
}

/** The wire form of one actor; a mob's members (resolved through `dir`) are listed under it. */
export function summaryOf(a: ActorView, dir?: ActorDirectory): ActorSummary {
  const s: ActorSummary = {
    kind: a.kind,
    id: a.id,
    state: a.state,
    value: a.value,
    awake: a.awake,
    labels: a.labels,
    mailbox_depth: a.mailboxDepth,
    subscribers: a.subscribers,
    last_used_ms: a.lastUsedMs,
    state_since_ms: a.stateSinceMs,
  };
  if (a.phase) s.phase = a.phase;
  if (dir && a.memberRefs) s.members = dir.membersOf(a).map((m) => summaryOf(m));
  return s;
}

/** Matching actors (most recently used first) and per kind/state counts over the kind+label matches. */
export function listActors(dir: ActorDirectory, f: ActorFilter, nowMs: number): ActorList {
  const counts: Record<string, Record<string, number>> = {};
  const kinds = [...dir.machines().keys()];
  for (const k of kinds) if (!f.kind || f.kind === k) counts[k] = {};
  const hits: ActorView[] = [];
  for (const a of dir.list()) {
    if (f.kind && a.kind !== f.kind) continue;
    if (!f.labels.every(([k, v]) => a.labels[k] === v)) continue;
    const byState = (counts[a.kind] ??= {});
    byState[a.state] = (byState[a.state] ?? 0) + 1;
    if (f.state && a.state !== f.state) continue;
    hits.push(a);
  }
  hits.sort((x, y) => y.lastUsedMs - x.lastUsedMs);
  return { actors: hits.slice(0, f.limit).map((a) => summaryOf(a, dir)), counts, total: hits.length, kinds, now_ms: nowMs };
}

export interface SessionTails {
  turnPhase: string | null;
  messageCount: number;
  transcriptTail: unknown[];
  ledgerTail: LedgerEntry[];
}

const TAIL = 10;
const LEDGER_TAIL = 30;

/** The transcript and ledger tails of a session (reads committed data; never wakes the actor). */
export async function sessionTails(store: Store, view: ActorView): Promise<SessionTails> {
  const { total } = await store.readRows(view.id, 0, 0);
  const { rows } = await store.readRows(view.id, Math.max(0, total - TAIL), TAIL);
  const last = store.persistent ? await store.lastLedgerSeq(view.id) : 0;
  const ledgerTail = last > 0 ? await store.readLedger(view.id, Math.max(0, last - LEDGER_TAIL), LEDGER_TAIL) : [];
  return { turnPhase: view.phase ?? null, messageCount: total, transcriptTail: rows, ledgerTail };
}

/** The actor detail or 404 NOT_FOUND (only resident actors are inspected). */
export function findActor(dir: ActorDirectory, kind: string, id: string): ActorView {
  const view = dir.get(kind, id);
  if (!view) throw new ServiceError('NOT_FOUND', `no resident ${kind} actor ${id}`, { kind, id });
  return view;
}

type SessionSnapshot = SnapshotFrom<typeof sessionMachine>;

/** The machine events a ledger event stands for (the turn runner reports its phases through these). */
function machineEventsOf(e: LedgerEntry, snap: SessionSnapshot): SessionEvent[] {
  const generation = snap.context.generation;
  switch (e.kind) {
    case 'run_started':
      return [{ type: 'turn.requested', requestId: `ledger:${e.seq}`, ticket: e.seq, work: REPLAYED_TURN }];
    case 'turn_started':
      return [{ type: 'turn.phase', generation, phase: 'calling_model' }];
    case 'tool_execution_started':
      return [{ type: 'turn.phase', generation, phase: 'executing_tools' }];
    // The turn ends: done after its commit, failed when it failed or was cancelled.
    case 'run_completed':
      return [
        { type: 'turn.phase', generation, phase: 'committing' },
        { type: 'turn.done', generation, output: replayedOutcome(e.payload) },
      ];
    case 'run_failed':
      return [{ type: 'turn.failed', generation, error: (e.payload as { error_report?: unknown }).error_report }];
    default:
      return [];
  }
}

/** A committed turn's outcome as far as its run_completed event tells (counts are not in the ledger). */
function replayedOutcome(payload: unknown): TurnOutcome {
  const p = payload as { result?: unknown; usage?: TurnOutcome['usage'] };
  return {
    text: typeof p.result === 'string' ? p.result : '',
    turns: 0,
    toolCalls: 0,
    usage: p.usage ?? { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
  };
}

export interface TimelineStep {
  entry: LedgerEntry;
  machineEvent: string | null;
  value: unknown;
  state: string;
}

const PAGE = 1000;

/** Steps after `afterSeq` (at most `limit`), each with the machine state after its event. */
export async function sessionTimeline(
  store: Store,
  id: string,
  afterSeq: number,
  limit: number,
): Promise<{ steps: TimelineStep[]; lastSeq: number; hasMore: boolean }> {
  if (!store.persistent) throw new ServiceError('SESSION_PERSISTENCE_DISABLED', 'the memory realm keeps no event ledger');
  if (!(await store.getSession(id))) throw new ServiceError('SESSION_NOT_FOUND', `Session not found: ${id}`, { session_id: id });
  let [snap] = initialTransition(sessionMachine, { sessionId: id });
  const steps: TimelineStep[] = [];
  let cursor = 0;
  let hasMore = false;
  // The state at afterSeq depends on every earlier event, so the replay always starts at seq 1.
  outer: for (;;) {
    const page = await store.readLedger(id, cursor, PAGE);
    for (const e of page) {
      const events = machineEventsOf(e, snap);
      for (const ev of events) [snap] = transition(sessionMachine, snap, ev);
      if (e.seq > afterSeq) {
        if (steps.length === limit) {
          hasMore = true;
          break outer;
        }
        steps.push({
          entry: e,
          machineEvent: events.length ? events.map((ev) => ev.type).join(' → ') : null,
          value: snap.value,
          state: statePath(snap.value),
        });
      }
    }
    if (page.length < PAGE) break;
    cursor = page[page.length - 1].seq;
  }
  return { steps, lastSeq: await store.lastLedgerSeq(id), hasMore };
}
