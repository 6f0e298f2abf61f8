// actors/compaction.ts: context compaction at a turn boundary (SPEC.md "Limits", wire-notes §5). The
// session actor calls compactAtBoundary before the turn's model call; when compaction-policy.ts says
// so, it asks the model for a handoff summary (no tools, max_summary_tokens) and rewrites the
// transcript as [system rows] + summary row + the recent turns in ONE durable commit (rows,
// truncation, the compaction record and any memory documents together). A failure keeps history.
import { ServiceError } from '../contracts/errors.ts';
import type { Config } from '../contracts/config.ts';
import type { AssistantBlock, Message, ProviderUsage } from '../contracts/transcript.ts';
import type { SessionEventKind, SessionEventPayload } from '../contracts/session-events.ts';
import type { ToolSpec } from '../contracts/tool.ts';
import type { Provider } from '../providers/provider.ts';
import { findModel } from '../providers/catalog.ts';
import type { Store, StoreOp } from '../storage/store.ts';
import { compactionThreshold, estimateTokens, requestJsonBytes, shouldCompact, splitForCompaction } from './compaction-policy.ts';
import { COMPACTION_KIND, readRecord } from '../storage/record-kinds.ts';

/** Stored in the `compaction` record namespace, keyed by session id (the ledger of compactions). */
interface CompactionRecord {
  v: 1;
  count: number;
  last_at_ms: number;
  messages_before: number;
  messages_after: number;
  tokens_before: number;
  tokens_after: number;
}

/** Receives what a compaction discards (the memory store); its ops join the rewrite's commit. */
export interface DiscardSink {
  /** Ops to commit with the rewrite (or none when the session does not keep memory). */
  ops(sessionId: string, settings: Readonly<Record<string, unknown>>, discarded: Message[], atMs: number): Promise<StoreOp[]>;
  /** Called once the rewrite is durable; answers how many documents it indexed. */
  committed(sessionId: string, ops: StoreOp[]): number;
}

/** What the session actor lends a compaction. */
export interface CompactionHost {
  sessionId: string;
  settings: Readonly<Record<string, unknown>>;
  provider: Provider;
  providerName: string;
  model: string;
  maxTokens: number;
  system?: string;
  tools: ToolSpec[];
  /** Rows of this turn not yet committed (they count toward the request, never get compacted). */
  newRows: Message[];
  signal: AbortSignal;
  config: Config;
  now(): number;
  emit<K extends SessionEventKind>(kind: K, payload: SessionEventPayload<K>): void;
  /** Input tokens of the session's last model call, if known. */
  lastInputTokens?: number;
  /** Commits the rewritten transcript plus `ops` atomically; `tokens` are the summary call's usage. */
  rewrite(rows: Message[], ops: StoreOp[], tokens: number): Promise<void>;
}

export interface CompactionResult {
  rows: Message[];
  usage: ProviderUsage;
}

const SUMMARY_PREFIX =
  '[Context compacted] A previous context produced the following summary of work so far. Continue from it; the most recent turns follow verbatim.';

const INSTRUCTION = [
  'CONTEXT COMPACTION: write a handoff summary of the conversation above so that the work can continue without it.',
  'Cover: progress and decisions made; constraints and user preferences; remaining next steps; critical data',
  '(names, numbers, paths, identifiers) exactly as written; tool usage patterns that worked or failed.',
  'Answer with the summary only.',
].join(' ');

function render(row: Message): string {
  switch (row.role) {
    case 'system':
      return `[system] ${row.content}`;
    case 'user':
      return `[user] ${typeof row.content === 'string' ? row.content : row.content.map((b) => (b.type === 'image' ? `[image: ${b.media_type}]` : b.text)).join('\n')}`;
    case 'block_assistant':
      return `[assistant] ${row.blocks.map((b) => (b.block_type === 'tool_use' ? `(tool ${b.data.name} ${JSON.stringify(b.data.args)})` : b.block_type === 'text' ? b.data.text : '')).join(' ')}`;
    case 'tool_results':
      return `[tool results] ${row.results.map((r) => r.content).join('\n')}`;
  }
}

/** The transcript as plain text, capped at `maxBytes` with the middle elided (wire-notes §5). */
function summarySource(rows: Message[], maxBytes: number): string {
  const text = rows.map(render).join('\n\n');
  if (Buffer.byteLength(text) <= maxBytes) return text;
  const half = Math.max(1, Math.floor(maxBytes / 2));
  return `${text.slice(0, half)}\n\n[... middle of the conversation elided ...]\n\n${text.slice(-half)}`;
}

function textOf(blocks: AssistantBlock[]): string {
  let s = '';
  for (const b of blocks) if (b.block_type === 'text') s += b.data.text;
  return s.trim();
}

export class Compactor {
  private readonly sinks: DiscardSink[] = [];
  /** Last provider input tokens per session (live only; after a restart the estimates decide). */
  private readonly lastInput = new Map<string, number>();

  constructor(private readonly store: Store) {}

  addDiscardSink(sink: DiscardSink): void {
    this.sinks.push(sink);
  }

  noteInputTokens(sessionId: string, tokens: number): void {
    this.lastInput.set(sessionId, tokens);
  }

  forget(sessionId: string): void {
    this.lastInput.delete(sessionId);
  }

  threshold(config: Config, providerName: string, model: string): number {
    const window = findModel(model)?.context_window ?? config.providers[providerName]?.context_window;
    return compactionThreshold(config.compaction.auto_compact_threshold, window);
  }

  /**
   * Compacts when the policy says so. Resolves to the new history, or undefined when nothing changed
   * (not triggered, nothing to compact, or a failure that kept history). Rejects only when the run must
   * end: cancellation, or a provider policy stop on the summary call.
   */
  async atBoundary(history: Message[], host: CompactionHost): Promise<CompactionResult | undefined> {
    const cfg = host.config.compaction;
    if (!cfg.enabled) return undefined;
    const threshold = this.threshold(host.config, host.providerName, host.model);
    // The request's byte size matters only under a provider byte limit.
    const requestBytes = cfg.max_request_bytes === undefined ? 0 : requestJsonBytes(host.system, history.concat(host.newRows), host.tools);
    const decision = shouldCompact({
      history,
      threshold,
      requestBytes,
      maxRequestBytes: cfg.max_request_bytes,
      lastInputTokens: host.lastInputTokens ?? this.lastInput.get(host.sessionId),
      toolTokens: estimateTokens(host.tools),
      outputReserve: host.maxTokens,
      minTurnsBetween: cfg.min_turns_between_compactions,
    });
    if (!decision.compact) return undefined;
    const split = splitForCompaction(history, cfg.recent_turn_budget);
    if (!split) return undefined;
    host.emit('compaction_started', {
      input_tokens: this.lastInput.get(host.sessionId) ?? 0,
      estimated_history_tokens: decision.estimatedHistoryTokens,
      message_count: history.length,
      trigger: decision.reason ?? 'history_tokens',
    });
    let summary: string;
    let usage: ProviderUsage;
    try {
      const reply = await host.provider.call(
        {
          model: host.model,
          messages: [
            {
              role: 'user',
              content: `${summarySource(history, threshold)}\n\n${INSTRUCTION}`,
              created_at: new Date(host.now()).toISOString(),
            },
          ],
          tools: [],
          max_tokens: cfg.max_summary_tokens,
          signal: host.signal,
        },
        () => {},
        (notice) => host.emit('retrying', { retry: notice }),
      );
      usage = reply.usage;
      if (reply.stop_reason === 'content_filter') {
        // SPEC.md "Limits": a provider policy stop ends the run.
        host.emit('compaction_failed', {
          reason: { kind: 'llm_failed', error_class: 'policy_stop', message: 'the provider stopped the summary for policy reasons' },
        });
        throw new ServiceError('AGENT_ERROR', 'compaction summary refused by provider policy', {
          session_id: host.sessionId,
          error: { kind: 'llm_failure', terminal: true },
        });
      }
      summary = textOf(reply.blocks);
    } catch (err) {
      if (host.signal.aborted || (err instanceof ServiceError && err.code === 'AGENT_ERROR')) throw err;
      host.emit('compaction_failed', {
        reason: {
          kind: 'llm_failed',
          error_class: err instanceof ServiceError ? err.code : 'error',
          message: err instanceof Error ? err.message : String(err),
        },
      });
      return undefined;
    }
    if (!summary) {
      host.emit('compaction_failed', { reason: { kind: 'empty_summary' } });
      return undefined;
    }
    const at = host.now();
    const summaryRow: Message = {
      role: 'user',
      content: `${SUMMARY_PREFIX}\n\n${summary}`,
      created_at: new Date(at).toISOString(),
      transcript_role: 'compaction_summary',
    };
    const rows = [...split.systemRows, summaryRow, ...split.recent];
    const tokensBefore = decision.estimatedHistoryTokens;
    const tokensAfter = estimateTokens(rows);
    const sinkOps: StoreOp[][] = [];
    try {
      for (const sink of this.sinks) sinkOps.push(await sink.ops(host.sessionId, host.settings, split.discarded, at));
    } catch (err) {
      host.emit('compaction_failed', {
        reason: { kind: 'memory_indexing_failed', message: err instanceof Error ? err.message : String(err) },
      });
      return undefined;
    }
    const prior = await readRecord<CompactionRecord>(this.store, COMPACTION_KIND, host.sessionId);
    const record: CompactionRecord = {
      v: 1,
      count: (prior?.count ?? 0) + 1,
      last_at_ms: at,
      messages_before: history.length,
      messages_after: rows.length,
      tokens_before: tokensBefore,
      tokens_after: tokensAfter,
    };
    const ops: StoreOp[] = [{ op: 'putRecord', ns: 'compaction', key: host.sessionId, value: record }, ...sinkOps.flat()];
    try {
      await host.rewrite(rows, ops, usage.input_tokens + usage.output_tokens);
    } catch (err) {
      host.emit('compaction_failed', {
        reason: { kind: 'transcript_rewrite_failed', message: err instanceof Error ? err.message : String(err) },
      });
      return undefined;
    }
    const indexed = this.sinks.reduce((n, sink, i) => n + sink.committed(host.sessionId, sinkOps[i]), 0);
    // The memory module's event (SPEC.md "Events": memory_indexed, content indexed in the memory store).
    if (indexed > 0) host.emit('memory_indexed', { module: 'memory', documents: indexed });
    this.lastInput.delete(host.sessionId);
    host.emit('compaction_completed', {
      summary_tokens: usage.output_tokens,
      messages_before: history.length,
      messages_after: rows.length,
      tokens_before: tokensBefore,
      tokens_after: tokensAfter,
    });
    return { rows, usage };
  }
}
