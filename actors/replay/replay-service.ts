// actors/replay/replay-service.ts: fork, replay and rerun of a session (docs/replay.md). A fork is one
// atomic commit (record, rows, recordings). A replay or rerun is a new session whose turns run through
// the normal session actor, with the recorder (recorder.ts) answering model calls and tool calls from
// the source's recording. A replay session carries `warren.replay_status: running` until its report is
// written; one left running by a crash is archived at start (recoverInterrupted), so no half replay stays.
import { randomUUID } from 'node:crypto';
import { ServiceError, sessionNotFound } from '../../contracts/errors.ts';
import {
  RECORDING_PRUNED_NS,
  recordingNs,
  TurnRecording,
  type RecordingPruned,
  type ReplayReport,
  type RerunReport,
  type SessionTurns,
} from '../../contracts/replay.ts';
import type { ContentInput, Message } from '../../contracts/transcript.ts';
import type { PersistedState, SessionRecord } from '../../contracts/records.ts';
import type { ProviderName } from '../../contracts/session.ts';
import type { StoreOp } from '../../storage/store.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { SessionActor } from '../session/session-actor.ts';
import type { RunFeatureRequest } from '../turn-features/run-features.ts';
import { runnableOverride } from './hook-summary.ts';
import { exportSession, importSession } from './portable.ts';
import { openFeatures } from './sealed-override.ts';
import type { RealmCipher } from '../auth/realm-key.ts';
import { ReplayCursor, RerunCursor, type TurnRecorder } from './recorder.ts';
import { replayStart, turnList, turnStarts } from './replay-start.ts';
import { readRecord, readRecords, RECORDING_PRUNED_KIND, REPLAY_REPORT_KIND, TURN_RECORDING_KIND } from '../../storage/record-kinds.ts';
import { uuidv7 } from '../uuidv7.ts';
import { blobPuts, readBlobs, referencedBlobs } from './recording-blobs.ts';

const REPORT_NS = 'replay.report';
const LABEL_REPLAY_OF = 'warren.replay_of';
const LABEL_REPLAY_STATUS = 'warren.replay_status';
const LABEL_FORKED_FROM = 'warren.forked_from';
const LABEL_RERUN_OF = 'warren.rerun_of';

export interface ReplayOptions {
  turns?: number;
  system_prompt?: string;
}

export class ReplayService {
  /** Replays running in this process: their report so far (GET /sessions/{replay}/replay-report while running). */
  private readonly live = new Map<string, ReplayReport>();

  constructor(
    private readonly host: SessionHost,
    private readonly recorder: TurnRecorder,
    /** The realm key: recorded `hooks_override`s are sealed with it (sealed-override.ts). */
    private readonly cipher: () => RealmCipher | undefined = () => undefined,
  ) {}

  private get store() {
    return this.host.deps.store;
  }

  private async source(id: string): Promise<SessionRecord> {
    const rec = await this.store.getSession(id);
    if (!rec || rec.archived) throw sessionNotFound(id);
    return rec;
  }

  async allRows(id: string): Promise<Message[]> {
    return (await this.store.readRows(id)).rows;
  }

  async recordings(id: string): Promise<Array<{ key: string; value: TurnRecording }>> {
    const out = await readRecords<TurnRecording>(this.store, TURN_RECORDING_KIND, id);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** How many of the session's recordings `[ledger]` retention removed (recording-retention.ts). */
  pruned(id: string): Promise<RecordingPruned | undefined> {
    return readRecord<RecordingPruned>(this.store, RECORDING_PRUNED_KIND, id);
  }

  /** GET /sessions/{id}/turns: the turns a fork or a replay can stop at. */
  async turns(id: string): Promise<SessionTurns> {
    await this.source(id);
    const rows = await this.allRows(id);
    const recs = (await this.recordings(id)).map((r) => r.value);
    return { session_id: id, message_count: rows.length, turns: turnList(rows, recs) };
  }

  /** The blobs the session's recordings name. */
  async blobs(id: string, recs?: readonly TurnRecording[]): Promise<Map<string, unknown>> {
    return readBlobs(this.store, id, referencedBlobs(recs ?? (await this.recordings(id)).map((r) => r.value)));
  }

  /** A fresh record for a derived session: the source's settings, labels plus `extra`, no machine snapshot. */
  private derived(src: SessionRecord, labels: Record<string, string>, messageCount: number): SessionRecord {
    const state = src.state as PersistedState;
    const now = this.host.deps.now();
    const fresh: PersistedState = {
      v: 1,
      machine: null,
      settings: { ...state.settings },
      sysctx: { ...state.sysctx },
      prompts: { ...state.prompts },
      revision: messageCount ? 1 : 0,
    };
    return {
      v: 2,
      session_id: uuidv7(),
      created_at_ms: now,
      updated_at_ms: now,
      archived: false,
      labels: { ...src.labels, ...labels },
      message_count: messageCount,
      total_tokens: 0,
      state: fresh,
    };
  }

  /** POST /sessions/{id}/fork: one atomic commit of the new record, the history prefix and its recordings. */
  async fork(
    sourceId: string,
    body: { at_turn?: number; at_seq?: number },
  ): Promise<{ sessionId: string; atTurn: number; messageCount: number }> {
    const src = await this.source(sourceId);
    const rows = await this.allRows(sourceId);
    const starts = turnStarts(rows);
    let atTurn = starts.length;
    if (body.at_turn !== undefined && body.at_seq !== undefined) throw new ServiceError('BAD_REQUEST', 'give at_turn or at_seq, not both');
    if (body.at_turn !== undefined) {
      if (body.at_turn > starts.length)
        throw new ServiceError('BAD_REQUEST', `at_turn ${body.at_turn} is beyond the session's ${starts.length} turns`);
      atTurn = body.at_turn;
    } else if (body.at_seq !== undefined) {
      const entries = await this.store.readLedger(sourceId, 0, body.at_seq);
      atTurn = Math.min(starts.length, entries.filter((e) => e.seq <= body.at_seq! && e.kind === 'run_completed').length);
    }
    const cut = atTurn < starts.length ? starts[atTurn] : rows.length;
    const prefix = rows.slice(0, cut);
    const record = this.derived(src, { [LABEL_FORKED_FROM]: sourceId }, prefix.length);
    const id = record.session_id;
    const recs = (await this.recordings(sourceId)).filter((r) => r.value.at_row + r.value.rows <= cut);
    const blobs = await this.blobs(
      sourceId,
      recs.map((r) => r.value),
    );
    // The fork's turns lost the same recordings to retention as the source's.
    const pruned = await this.pruned(sourceId);
    const ops: StoreOp[] = [
      { op: 'putSession', session: record },
      ...(pruned && atTurn > 0
        ? [{ op: 'putRecord', ns: RECORDING_PRUNED_NS, key: id, value: { ...pruned, turns: Math.min(pruned.turns, atTurn) } } as const]
        : []),
      ...(prefix.length ? [{ op: 'putRows', sessionId: id, fromIndex: 0, rows: prefix } as const] : []),
      ...recs.map((r): StoreOp => ({ op: 'putRecord', ns: recordingNs(id), key: r.key, value: r.value })),
      // Blobs the source kept in its own namespace (older recordings) become realm-wide for the fork.
      ...blobPuts(blobs),
      // The source's persisted MCP servers (/mcp/add with persisted), re-sealed for the fork.
      ...((await this.host.deps.sessionMcp?.copyOps(sourceId, id)) ?? []),
    ];
    await this.store.commit(ops);
    return { sessionId: id, atTurn, messageCount: prefix.length };
  }

  /** Creates the replay (or rerun) session with its leading rows (`lead`), durably, before any turn. */
  private async startDerived(
    src: SessionRecord,
    lead: Message[],
    labels: Record<string, string>,
    systemPrompt?: string,
    patch?: Partial<PersistedState['settings']>,
  ): Promise<SessionActor> {
    if (systemPrompt !== undefined) {
      // What-if: the first system row says `systemPrompt` (one is put first when there is none).
      const at = lead.findIndex((r) => r.role === 'system');
      lead =
        at >= 0
          ? lead.map((r, i) => (i === at ? ({ ...r, content: systemPrompt } as Message) : r))
          : [{ role: 'system', content: systemPrompt, created_at: new Date(this.host.deps.now()).toISOString() }, ...lead];
    }
    const record = this.derived(src, labels, lead.length);
    if (patch) Object.assign((record.state as PersistedState).settings, patch);
    const actor = this.host.adopt(record);
    const mcp = (await this.host.deps.sessionMcp?.copyOps(src.session_id, record.session_id)) ?? [];
    await actor.persist([
      ...(lead.length ? [{ op: 'putRows', sessionId: record.session_id, fromIndex: 0, rows: lead } as const] : []),
      ...mcp,
    ]);
    return actor;
  }

  private runOne(actor: SessionActor, rec: TurnRecording): Promise<unknown> {
    const input = rec.input;
    const settings = actor.core.state.settings;
    const { features, lost } = openFeatures(input.features, this.cipher());
    if (lost) return Promise.reject(new ServiceError('CONFLICT', "the turn's recorded hooks_override does not open with this realm's key"));
    // The turn runs under the plan its request had (structured output, hooks_override, budget_limits).
    const plan = this.host.deps.turnFeatures?.prepare(
      (features ?? {}) as RunFeatureRequest,
      settings.provider,
      settings.structured_output_retries ?? undefined,
    );
    // An imported recording's override hooks are kept by reference (no secret): checked, not run.
    if (plan) plan.hooks = runnableOverride(plan.hooks);
    return actor.runTurn({
      ...(plan ? { plan } : {}),
      requestId: randomUUID(),
      kind: 'continue',
      prompt: input.prompt as ContentInput,
      injectedContext: (input.injected_context as ContentInput[] | undefined) ?? null,
      systemAppend: input.system_append ?? null,
      transientContext: input.transient_context ?? null,
      signal: new AbortController().signal,
      onCommitting: () => {},
    });
  }

  /** Prepares a replay: validates the source and creates the replay session (the caller runs it). */
  async prepareReplay(sourceId: string, opts: ReplayOptions): Promise<{ actor: SessionActor; run: () => Promise<ReplayReport> }> {
    const src = await this.source(sourceId);
    const rows = await this.allRows(sourceId);
    const recs = (await this.recordings(sourceId)).map((r) => r.value);
    const start = replayStart(sourceId, rows, recs, await this.pruned(sourceId));
    const selected = recs.slice(0, opts.turns ?? recs.length);
    const actor = await this.startDerived(
      src,
      start.lead,
      { [LABEL_REPLAY_OF]: sourceId, [LABEL_REPLAY_STATUS]: 'running' },
      opts.system_prompt,
    );
    const blobs = await this.blobs(sourceId, recs);
    return { actor, run: () => this.runReplay(src.session_id, actor, selected, start, blobs) };
  }

  private async runReplay(
    sourceId: string,
    actor: SessionActor,
    recs: TurnRecording[],
    start: { unrecorded: number; pruned: number },
    blobs: ReadonlyMap<string, unknown>,
  ): Promise<ReplayReport> {
    const started = performance.now();
    const id = actor.id;
    const report: ReplayReport = {
      source_session_id: sourceId,
      replay_session_id: id,
      status: 'identical',
      turns: recs.length,
      turns_replayed: 0,
      calls_checked: 0,
      tools_answered: 0,
      duration_ms: 0,
    };
    if (start.unrecorded > 0) report.unrecorded_turns = start.unrecorded;
    if (start.pruned > 0) report.pruned_turns = start.pruned;
    this.live.set(id, report);
    try {
      for (let i = 0; i < recs.length; i++) {
        const cursor = new ReplayCursor(i + 1, recs[i], blobs);
        // A turn recorded with MCP tools runs once the replay session's servers are connected (a live
        // session loads them in the background after its first turn; a replay does not wait by itself).
        if (usesMcp(recs[i], blobs)) await this.host.deps.sessionMcp?.prepare(id);
        this.recorder.attach(id, { kind: 'replay', cursor: () => cursor });
        let failure: unknown;
        try {
          await this.runOne(actor, recs[i]);
        } catch (err) {
          failure = err;
        } finally {
          this.recorder.detach(id);
        }
        report.calls_checked += Math.min(cursor.call, recs[i].calls.length);
        report.tools_answered += Math.min(cursor.tool, recs[i].tools.length);
        if (!cursor.divergence && failure)
          cursor.divergence = {
            turn: i + 1,
            call: cursor.call,
            kind: 'turn',
            path: 'outcome',
            recorded: 'completed',
            now: errText(failure),
          };
        if (!cursor.divergence && cursor.call < recs[i].calls.length)
          cursor.divergence = {
            turn: i + 1,
            call: cursor.call,
            kind: 'turn',
            path: 'calls.length',
            recorded: recs[i].calls.length,
            now: cursor.call,
          };
        if (!cursor.divergence && cursor.tool < recs[i].tools.length)
          cursor.divergence = {
            turn: i + 1,
            call: cursor.call,
            kind: 'tool',
            path: 'tools.length',
            recorded: recs[i].tools.length,
            now: cursor.tool,
          };
        if (cursor.divergence) {
          report.status = 'diverged';
          report.divergence = cursor.divergence;
          break;
        }
        report.turns_replayed++;
        actor.hub.publish('replay_progress', { source_session_id: sourceId, turn: i + 1, turns: recs.length, status: 'running' });
      }
    } catch (err) {
      report.status = 'failed';
      report.error = errText(err);
    }
    report.duration_ms = performance.now() - started;
    await this.finish(actor, report);
    return report;
  }

  /** Writes the report and the final status label in one commit. */
  private async finish(actor: SessionActor, report: ReplayReport): Promise<void> {
    actor.hub.publish('replay_progress', {
      source_session_id: report.source_session_id,
      turn: report.turns_replayed,
      turns: report.turns,
      status: report.status,
      ...(report.divergence ? { divergence: report.divergence } : {}),
    });
    try {
      await actor.mutate((_s, r) => ({
        record: { labels: { ...r.labels, [LABEL_REPLAY_STATUS]: report.status } },
        ops: [{ op: 'putRecord', ns: REPORT_NS, key: actor.id, value: report }],
      }));
    } finally {
      this.live.delete(actor.id);
    }
  }

  async report(replayId: string): Promise<ReplayReport> {
    const rec = await this.store.getSession(replayId);
    if (!rec) throw sessionNotFound(replayId);
    const report = await readRecord<ReplayReport>(this.store, REPLAY_REPORT_KIND, replayId);
    if (report) return report;
    const live = this.live.get(replayId);
    if (live) return { ...live, duration_ms: 0, error: 'running' };
    if (rec.labels[LABEL_REPLAY_STATUS] === 'running')
      return {
        source_session_id: rec.labels[LABEL_REPLAY_OF] ?? '',
        replay_session_id: replayId,
        status: 'identical',
        turns: 0,
        turns_replayed: 0,
        calls_checked: 0,
        tools_answered: 0,
        duration_ms: 0,
        error: 'running',
      };
    throw new ServiceError('NOT_FOUND', `session ${replayId} is not a replay`);
  }

  /** At start: replays a crash left running are archived (their report says so), so none stays half done. */
  async recoverInterrupted(): Promise<number> {
    const left = await this.store.listSessions({ labels: [[LABEL_REPLAY_STATUS, 'running']] });
    for (const rec of left) {
      const now = this.host.deps.now();
      await this.store.commit([
        {
          op: 'putSession',
          session: {
            ...rec,
            archived: true,
            archived_at_ms: now,
            updated_at_ms: now,
            labels: { ...rec.labels, [LABEL_REPLAY_STATUS]: 'interrupted' },
          },
        },
      ]);
    }
    return left.length;
  }

  exportSession(id: string, realm: { realmId: string; backend: string }): Promise<string> {
    return exportSession(this.store, id, realm, this.host.deps.now(), this.cipher());
  }

  importSession(text: string, newId: boolean) {
    return importSession(this.store, text, { newId, now: this.host.deps.now() });
  }

  /** POST /sessions/{id}/rerun: the user inputs against a live model, with per-turn differences. */
  async rerun(sourceId: string, body: { model: string; provider?: string; turns?: number }): Promise<RerunReport> {
    const src = await this.source(sourceId);
    const rows = await this.allRows(sourceId);
    const recs = (await this.recordings(sourceId)).slice(0, body.turns).map((r) => r.value);
    const resolved = this.host.deps.providers.resolve(body.model, body.provider ?? null);
    const problem = resolved.provider.preflight?.(resolved.model);
    if (problem) throw problem;
    const firstAt = recs[0]?.at_row ?? rows.length;
    const lead = rows.slice(0, firstAt).filter((r) => r.role === 'system');
    const actor = await this.startDerived(src, lead, { [LABEL_RERUN_OF]: sourceId }, undefined, {
      model: resolved.model,
      provider: resolved.name as ProviderName,
    });
    const report: RerunReport = {
      source_session_id: sourceId,
      rerun_session_id: actor.id,
      model: resolved.model,
      provider: resolved.name,
      turns: [],
    };
    const blobs = await this.blobs(sourceId);
    for (let i = 0; i < recs.length; i++) {
      const rec = recs[i];
      if (usesMcp(rec, blobs)) await this.host.deps.sessionMcp?.prepare(actor.id);
      const cursor = new RerunCursor(rec);
      this.recorder.attach(actor.id, { kind: 'rerun', cursor: () => cursor });
      const t0 = performance.now();
      let text = '';
      let tokens = 0;
      let error: string | undefined;
      const before = (await this.store.readRows(actor.id)).total;
      try {
        const out = (await this.runOne(actor, rec)) as { text: string; usage: { total_tokens: number } };
        text = out.text;
        tokens = out.usage.total_tokens;
      } catch (err) {
        error = errText(err);
      } finally {
        this.recorder.detach(actor.id);
      }
      const produced = (await this.store.readRows(actor.id, before)).rows;
      const recordedCalls = rec.calls.flatMap((c) => toolNames(c.response.blocks));
      const nowCalls = produced.flatMap((r) => (r.role === 'block_assistant' ? toolNames(r.blocks) : []));
      const recordedText = lastText(rec);
      const recordedTokens = rec.calls.reduce((n, c) => n + usageTokens(c.response.usage), 0);
      report.turns.push({
        turn: i + 1,
        recorded_text: recordedText,
        text,
        text_equal: recordedText === text,
        recorded_tool_calls: recordedCalls,
        tool_calls: nowCalls,
        tool_calls_equal: JSON.stringify(recordedCalls) === JSON.stringify(nowCalls),
        recorded_tokens: recordedTokens,
        tokens,
        recorded_duration_ms: rec.calls.reduce((n, c) => n + c.duration_ms, 0) + rec.tools.reduce((n, t) => n + t.duration_ms, 0),
        duration_ms: performance.now() - t0,
        tools_from_recording: cursor.served,
        ...(error ? { error } : {}),
      });
      if (error) break;
    }
    return report;
  }
}

function errText(err: unknown): string {
  return err instanceof Error ? `${(err as { code?: string }).code ?? err.name}: ${err.message}` : String(err);
}

function toolNames(blocks: readonly unknown[]): string[] {
  const out: string[] = [];
  for (const b of blocks as Array<{ block_type: string; data: { name?: string } }>)
    if (b.block_type === 'tool_use') out.push(b.data.name ?? '');
  return out;
}

function usageTokens(u: unknown): number {
  const x = u as { input_tokens?: number; output_tokens?: number };
  return (x.input_tokens ?? 0) + (x.output_tokens ?? 0);
}

/** The turn's final text as recorded: the text of the last call that produced any. */
function lastText(rec: TurnRecording): string {
  let text = '';
  for (const c of rec.calls) {
    if (rec.late && c === rec.calls.at(-1)) break;
    let t = '';
    for (const b of c.response.blocks as Array<{ block_type: string; data: { text?: string } }>)
      if (b.block_type === 'text') t += b.data.text ?? '';
    if (t) text = t;
  }
  return text;
}

/** Whether a recorded turn's model calls offered MCP tools (`mcp__<server>__<tool>` in a call's tool list). */
function usesMcp(rec: TurnRecording, blobs: ReadonlyMap<string, unknown>): boolean {
  return rec.calls.some((c) => {
    const tools = blobs.get(c.request.tools_hash);
    return (
      Array.isArray(tools) &&
      tools.some((t) => typeof (t as { name?: unknown })?.name === 'string' && (t as { name: string }).name.startsWith('mcp__'))
    );
  });
}
