// actors/compaction-policy.ts: when a session compacts (SPEC.md "Limits": compaction guard and trigger),
// and which rows a compaction keeps. Pure functions over transcript rows; actors/compaction.ts runs
// the summary call and the durable rewrite.
import type { Message } from '../contracts/transcript.ts';

/** Fallback threshold when neither config nor the model's context window says otherwise. */
const FALLBACK_THRESHOLD = 100_000;

type TriggerReason = 'history_tokens' | 'provider_bytes' | 'last_input_tokens' | 'request_budget';

export interface TriggerInputs {
  /** Committed rows before this turn's new rows. */
  history: Message[];
  /** Input tokens the provider reported for the session's last model call (unknown after a restart). */
  lastInputTokens?: number;
  threshold: number;
  /** Measured bytes of the request this turn would send (messages + system + tool definitions). */
  requestBytes: number;
  /** Provider byte capacity; a request at 4/5 of it compacts. */
  maxRequestBytes?: number;
  /** Estimated tokens of the visible tool definitions. */
  toolTokens: number;
  /** Tokens reserved for the reply (the turn's max_tokens). */
  outputReserve: number;
  minTurnsBetween: number;
}

export interface TriggerDecision {
  compact: boolean;
  reason?: TriggerReason;
  estimatedHistoryTokens: number;
}

/** The model-aware threshold: config, else 4/5 of the context window, else 100,000 tokens. */
export function compactionThreshold(configured: number | undefined, contextWindow: number | undefined): number {
  if (configured !== undefined) return configured;
  if (contextWindow !== undefined) return Math.floor((contextWindow * 4) / 5);
  return FALLBACK_THRESHOLD;
}

/** Rough token estimate of JSON-able content (about 4 bytes a token). */
export function estimateTokens(value: unknown): number {
  return Math.ceil((Array.isArray(value) ? jsonArraySize(value).chars : JSON.stringify(value).length) / 4);
}

const NULL_SIZE = { chars: 4, bytes: 4 };

/** JSON sizes of objects already measured (committed rows and tool schemas are never changed in place). */
const sizes = new WeakMap<object, { chars: number; bytes: number }>();

/**
 * JSON.stringify(v).length and its UTF-8 byte length, remembered per object and computed from the
 * remembered sizes of its members: a fresh object around known parts (a turn's tool specs built anew
 * around the same schemas) costs only its own keys.
 */
export function jsonSize(v: unknown): { chars: number; bytes: number } {
  if (v === null || typeof v !== 'object') {
    const text = JSON.stringify(v) ?? 'null';
    return { chars: text.length, bytes: typeof v === 'string' ? Buffer.byteLength(text) : text.length };
  }
  let size = sizes.get(v);
  if (size) return size;
  if (typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    const text = JSON.stringify(v);
    size = { chars: text.length, bytes: Buffer.byteLength(text) };
  } else if (Array.isArray(v)) {
    size = jsonArraySize(v);
  } else {
    let chars = 2;
    let bytes = 2;
    let first = true;
    for (const key in v) {
      if (!Object.prototype.hasOwnProperty.call(v, key)) continue;
      const value = (v as Record<string, unknown>)[key];
      if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
      const k = JSON.stringify(key);
      const m = jsonSize(value);
      const sep = first ? 0 : 1;
      first = false;
      chars += sep + k.length + 1 + m.chars;
      bytes += sep + Buffer.byteLength(k) + 1 + m.bytes;
    }
    size = { chars, bytes };
  }
  sizes.set(v, size);
  return size;
}

/** The JSON size of an array from its elements' remembered sizes (brackets and commas added), so a long history is not re-serialised each turn. */
function jsonArraySize(items: readonly unknown[]): { chars: number; bytes: number } {
  let chars = 2 + Math.max(0, items.length - 1);
  let bytes = chars;
  for (const item of items) {
    const s = item === undefined || typeof item === 'function' || typeof item === 'symbol' ? NULL_SIZE : jsonSize(item);
    chars += s.chars;
    bytes += s.bytes;
  }
  return { chars, bytes };
}

/** Byte length of JSON.stringify({ system, messages, tools }) without building it. */
export function requestJsonBytes(system: string | undefined, messages: readonly unknown[], tools: readonly unknown[] | undefined): number {
  let bytes = 2 + '"messages":'.length + jsonArraySize(messages).bytes;
  if (system !== undefined) bytes += '"system":'.length + Buffer.byteLength(JSON.stringify(system)) + 1;
  if (tools !== undefined) bytes += ',"tools":'.length + jsonArraySize(tools).bytes;
  return bytes;
}

/** A user row that starts a turn (not injected context, not a compaction summary). */
export function isTurnStart(row: Message): boolean {
  return row.role === 'user' && (row.transcript_role === undefined || row.transcript_role === 'conversational');
}

/** What the trigger needs of a history: its JSON size and its turns since the last compaction. */
export interface HistoryStats {
  /** Rows counted (a remembered figure is used only while the array still has this length). */
  length: number;
  /** Sum of the rows' JSON sizes (without the array's brackets and commas). */
  rowChars: number;
  /** Turns committed since the last compaction summary (all turns when there was none), and in total. */
  since: number;
  total: number;
  compactedBefore: boolean;
}

const NO_ROWS: HistoryStats = { length: 0, rowChars: 0, since: 0, total: 0, compactedBefore: false };
/** Stats of history arrays already measured (a committed transcript array is never changed in place). */
const historyMemo = new WeakMap<readonly Message[], HistoryStats>();

function addRows(s: HistoryStats, rows: readonly Message[]): HistoryStats {
  let { rowChars, since, total, compactedBefore } = s;
  for (const row of rows) {
    // Only the length is needed here: one native serialisation beats the member-wise walk for a new row.
    rowChars += sizes.get(row)?.chars ?? JSON.stringify(row).length;
    if (row.role === 'user' && row.transcript_role === 'compaction_summary') {
      since = 0;
      compactedBefore = true;
    } else if (isTurnStart(row)) {
      since++;
      total++;
    }
  }
  return { length: s.length + rows.length, rowChars, since, total, compactedBefore };
}

/** The history's stats, remembered per array (computed from its parent's when made by extendHistory). */
export function historyStats(history: readonly Message[]): HistoryStats {
  const known = historyMemo.get(history);
  if (known && known.length === history.length) return known;
  const s = addRows(NO_ROWS, history);
  historyMemo.set(history, s);
  return s;
}

/**
 * history.concat(rows), its stats carried over from the history's remembered ones: a turn's commit
 * extends the transcript, and the next turn's trigger check then costs only the new rows, not a walk
 * over the whole history. Nothing is remembered for a history that was never measured (compaction off).
 */
export function extendHistory(history: readonly Message[], rows: readonly Message[]): Message[] {
  const out = history.concat(rows);
  const known = historyMemo.get(history);
  if (known && known.length === history.length) historyMemo.set(out, addRows(known, rows));
  return out;
}

/** Rough token estimate of a history (about 4 bytes a token), equal to estimateTokens(history). */
export function estimateHistoryTokens(history: readonly Message[]): number {
  const s = historyStats(history);
  return Math.ceil((2 + Math.max(0, s.length - 1) + s.rowChars) / 4);
}

/**
 * SPEC.md "Limits": never on the first turn; at least `minTurnsBetween` turns between ordinary
 * compactions; a live history-token or provider-byte crossing bypasses that guard, a last-input-token
 * or request-budget crossing does not.
 */
export function shouldCompact(i: TriggerInputs): TriggerDecision {
  const estimatedHistoryTokens = estimateHistoryTokens(i.history);
  const turns = historyStats(i.history);
  if (turns.total === 0) return { compact: false, estimatedHistoryTokens };
  if (estimatedHistoryTokens >= i.threshold) return { compact: true, reason: 'history_tokens', estimatedHistoryTokens };
  if (i.maxRequestBytes !== undefined && i.requestBytes * 5 >= i.maxRequestBytes * 4) {
    return { compact: true, reason: 'provider_bytes', estimatedHistoryTokens };
  }
  const guarded = turns.compactedBefore && turns.since < i.minTurnsBetween;
  if (guarded) return { compact: false, estimatedHistoryTokens };
  if (i.lastInputTokens !== undefined && i.lastInputTokens >= i.threshold)
    return { compact: true, reason: 'last_input_tokens', estimatedHistoryTokens };
  if (estimatedHistoryTokens + i.toolTokens + i.outputReserve >= i.threshold)
    return { compact: true, reason: 'request_budget', estimatedHistoryTokens };
  return { compact: false, estimatedHistoryTokens };
}

export interface Split {
  /** System rows of the compacted prefix, in order (kept before the summary). */
  systemRows: Message[];
  /** Rows the summary replaces (everything before the recent turns except system rows). */
  discarded: Message[];
  /** The last `recentTurns` turns, kept verbatim (their system rows included). */
  recent: Message[];
}

/** Splits history for a rebuild; undefined when there is nothing older than the recent turns to compact. */
export function splitForCompaction(history: Message[], recentTurns: number): Split | undefined {
  const starts: number[] = [];
  history.forEach((row, i) => {
    if (isTurnStart(row)) {
      // A turn's injected-context rows sit right before its user row and belong to it.
      let s = i;
      while (
        s > 0 &&
        history[s - 1].role === 'user' &&
        (history[s - 1] as { transcript_role?: string }).transcript_role === 'injected_context'
      )
        s--;
      starts.push(s);
    }
  });
  if (starts.length <= recentTurns) return undefined;
  const cut = recentTurns === 0 ? history.length : starts[starts.length - recentTurns];
  const prefix = history.slice(0, cut);
  const discarded = prefix.filter((r) => r.role !== 'system');
  if (discarded.length === 0) return undefined;
  return { systemRows: prefix.filter((r) => r.role === 'system'), discarded, recent: history.slice(cut) };
}
