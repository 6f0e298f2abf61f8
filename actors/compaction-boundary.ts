// actors/compaction-boundary.ts: the session side of compaction. The session actor's turn calls
// compactAtBoundary before its model call (a few lines in session-actor.ts); this file lends the
// session's core to the compactor (actors/compaction.ts) and performs the one-commit transcript rewrite.
import type { Message } from '../contracts/transcript.ts';
import type { ToolSpec } from '../contracts/tool.ts';
import type { Provider } from '../providers/provider.ts';
import type { StoreOp } from '../storage/store.ts';
import type { SessionCore } from './session/session-core.ts';
import { isTurnStart } from './compaction-policy.ts';

export interface BoundaryCall {
  provider: Provider;
  providerName: string;
  model: string;
  specs: ToolSpec[];
  newRows: Message[];
  signal: AbortSignal;
}

/** Runs the compactor (if any); resolves to the rewritten history when it compacted. */
export async function compactAtBoundary(core: SessionCore, history: Message[], call: BoundaryCall): Promise<Message[] | undefined> {
  const compactor = core.deps.compactor;
  if (!compactor) return undefined;
  // Never on a session's first turn (SPEC.md "Limits"): a history without a committed turn is left alone.
  if (!history.some(isTurnStart)) return undefined;
  const result = await compactor.atBoundary(history, {
    sessionId: core.id,
    settings: core.state.settings as unknown as Record<string, unknown>,
    provider: call.provider,
    providerName: call.providerName,
    model: call.model,
    maxTokens: core.state.settings.max_tokens,
    tools: call.specs,
    newRows: call.newRows,
    signal: call.signal,
    config: core.deps.config(),
    now: core.deps.now,
    emit: (kind, payload) => core.hub.publish(kind, payload),
    rewrite: (rows, ops, tokens) => rewriteTranscript(core, rows, ops, tokens),
  });
  return result?.rows;
}

/**
 * Replaces the whole committed transcript with `rows`, plus `ops`, in ONE store commit (rows written
 * from 0, the tail truncated, the session record updated): a crash leaves the old or the new transcript.
 */
async function rewriteTranscript(core: SessionCore, rows: Message[], ops: StoreOp[], tokens: number): Promise<void> {
  const before = { record: core.record, revision: core.state.revision, prompts: structuredClone(core.state.prompts) };
  core.state.revision++;
  // Keyed system prompts keep pointing at their (moved) rows.
  rows.forEach((row, i) => {
    // Own members only: a key such as `constructor` or `__proto__` must never reach Object.prototype.
    const key = row.role === 'system' ? row.prompt_version?.key : undefined;
    if (key !== undefined && Object.hasOwn(core.state.prompts, key)) core.state.prompts[key].message_index = i;
  });
  core.record = { ...core.record, message_count: rows.length, total_tokens: core.record.total_tokens + tokens };
  try {
    // The snapshot at rest is kept (as for the pending-input write): the turn is still in flight.
    await core.persist(
      [{ op: 'putRows', sessionId: core.id, fromIndex: 0, rows }, { op: 'truncateRows', sessionId: core.id, length: rows.length }, ...ops],
      core.state.machine ?? null,
    );
  } catch (err) {
    core.record = { ...before.record, updated_at_ms: core.record.updated_at_ms };
    core.state.revision = before.revision;
    core.state.prompts = before.prompts;
    throw err;
  }
  core.cacheRows(rows);
}
