// storage/prepare-ops.ts: the checks every Store backend runs on a commit batch, so all three behave alike.
// prepareOps validates shapes and copies values into plain JSON; planBatch checks rows/ledger against stored state.
import { ServiceError } from '../contracts/errors.ts';
import type { LedgerEntry, SessionRecord, StoreOp } from './store.ts';

/** Longest id, namespace or record key accepted, in UTF-8 bytes (LMDB keys are bounded). Control characters are refused. */
const MAX_KEY_BYTES = 512;

function invalid(message: string, details?: unknown): ServiceError {
  return new ServiceError('SESSION_STORE_ERROR', message, details);
}

/**
 * Deep-copies `value` as the JSON it would round-trip to, rejecting what JSON cannot carry faithfully:
 * bigint, functions, symbols, non-finite numbers, non-plain objects (Date, Map, class instances) and cycles.
 * Like JSON, `undefined` object properties are dropped and `undefined` array items become null.
 */
function toJsonValue(value: unknown, where: string): unknown {
  return copy(value, where, new Set());
}

function copy(value: unknown, where: string, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(`${where} holds a non-finite number`);
      return value;
    case 'object':
      break;
    default:
      throw invalid(`${where} holds a ${typeof value}, which is not JSON`);
  }
  if (value === null) return null;
  if (seen.has(value)) throw invalid(`${where} is cyclic`);
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    out = value.map((item, i) => (item === undefined ? null : copy(item, `${where}[${i}]`, seen)));
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalid(`${where} is not a plain object`);
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue;
      // defineProperty so that a '__proto__' key stays data and never swaps the prototype
      Object.defineProperty(obj, k, { value: copy(v, `${where}.${k}`, seen), enumerable: true, writable: true, configurable: true });
    }
    out = obj;
  }
  seen.delete(value);
  return out;
}

function checkKey(value: unknown, what: string): string {
  if (typeof value !== 'string' || value.length === 0) throw invalid(`${what} must be a non-empty string`);
  if (Buffer.byteLength(value) > MAX_KEY_BYTES) throw invalid(`${what} is longer than ${MAX_KEY_BYTES} bytes`);
  // Control characters are refused: lmdb's ordered-binary keys separate array elements with control bytes.
  if (/[\u0000-\u001f]/.test(value)) throw invalid(`${what} must not contain control characters`);
  return value;
}

function checkIndex(value: unknown, what: string, min: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < min) throw invalid(`${what} must be an integer >= ${min}`);
  return value as number;
}

function checkSession(session: SessionRecord): SessionRecord {
  const s = toJsonValue(session, 'session') as SessionRecord;
  if (s === null || typeof s !== 'object' || s.v !== 1) throw invalid('session record must have v: 1');
  checkKey(s.session_id, 'session_id');
  for (const f of ['created_at_ms', 'updated_at_ms', 'message_count', 'total_tokens'] as const) {
    if (typeof s[f] !== 'number') throw invalid(`session.${f} must be a number`);
  }
  if (typeof s.archived !== 'boolean') throw invalid('session.archived must be a boolean');
  if (s.labels === null || typeof s.labels !== 'object' || Array.isArray(s.labels)) throw invalid('session.labels must be an object');
  return s;
}

function checkEntries(entries: LedgerEntry[]): LedgerEntry[] {
  if (!Array.isArray(entries)) throw invalid('appendLedger.entries must be an array');
  let prev = 0;
  return entries.map((entry, i) => {
    const e = toJsonValue(entry, `entries[${i}]`) as LedgerEntry;
    if (e === null || typeof e !== 'object') throw invalid('ledger entry must be an object');
    const seq = checkIndex(e.seq, `entries[${i}].seq`, 1);
    if (seq <= prev) throw invalid('ledger entries must have strictly increasing seq');
    if (typeof e.kind !== 'string' || typeof e.timestamp_ms !== 'number') throw invalid('ledger entry needs kind and timestamp_ms');
    prev = seq;
    return e;
  });
}

function prepareOne(op: StoreOp): StoreOp {
  switch (op?.op) {
    case 'putSession':
      return { op: 'putSession', session: checkSession(op.session) };
    case 'putRows':
      if (!Array.isArray(op.rows)) throw invalid('putRows.rows must be an array');
      return {
        op: 'putRows',
        sessionId: checkKey(op.sessionId, 'sessionId'),
        fromIndex: checkIndex(op.fromIndex, 'fromIndex', 0),
        rows: toJsonValue(op.rows, 'rows') as typeof op.rows,
      };
    case 'truncateRows':
      return { op: 'truncateRows', sessionId: checkKey(op.sessionId, 'sessionId'), length: checkIndex(op.length, 'length', 0) };
    case 'appendLedger':
      return { op: 'appendLedger', sessionId: checkKey(op.sessionId, 'sessionId'), entries: checkEntries(op.entries) };
    case 'putRecord':
      if (op.value === undefined) throw invalid('putRecord.value must not be undefined');
      return { op: 'putRecord', ns: checkKey(op.ns, 'ns'), key: checkKey(op.key, 'key'), value: toJsonValue(op.value, 'value') };
    case 'deleteRecord':
      return { op: 'deleteRecord', ns: checkKey(op.ns, 'ns'), key: checkKey(op.key, 'key') };
    default:
      throw invalid('unknown store op', { op: (op as { op?: unknown } | undefined)?.op });
  }
}

/** Validates a batch and returns JSON-normalised copies; throws SESSION_STORE_ERROR before anything is written. */
export function prepareOps(ops: readonly StoreOp[]): StoreOp[] {
  if (!Array.isArray(ops)) throw invalid('commit expects an array of ops');
  return ops.map(prepareOne);
}

/** Reads a backend's current per-session counters (inside its write transaction, where it has one). */
export interface BatchState {
  rowCount(sessionId: string): number;
  lastSeq(sessionId: string): number;
}

/** Row counts and last ledger seqs after the batch, for every session the batch touches. */
export interface BatchPlan {
  rowCounts: Map<string, number>;
  lastSeqs: Map<string, number>;
}

/**
 * Replays the batch's row and ledger ops over `state` and throws CONFLICT when one would leave a gap
 * in the transcript or append a ledger seq that is not above the stored last seq.
 */
export function planBatch(ops: readonly StoreOp[], state: BatchState): BatchPlan {
  const rowCounts = new Map<string, number>();
  const lastSeqs = new Map<string, number>();
  for (const op of ops) {
    if (op.op === 'putRows' || op.op === 'truncateRows') {
      const count = rowCounts.get(op.sessionId) ?? state.rowCount(op.sessionId);
      if (op.op === 'truncateRows') {
        rowCounts.set(op.sessionId, Math.min(count, op.length));
      } else {
        if (op.fromIndex > count) {
          throw new ServiceError('CONFLICT', `putRows at ${op.fromIndex} would leave a gap after ${count} rows`, {
            sessionId: op.sessionId,
          });
        }
        rowCounts.set(op.sessionId, Math.max(count, op.fromIndex + op.rows.length));
      }
    } else if (op.op === 'appendLedger' && op.entries.length > 0) {
      const last = lastSeqs.get(op.sessionId) ?? state.lastSeq(op.sessionId);
      const first = op.entries[0].seq;
      if (first <= last) {
        throw new ServiceError('CONFLICT', `ledger seq ${first} is not above the last seq ${last}`, { sessionId: op.sessionId });
      }
      lastSeqs.set(op.sessionId, op.entries[op.entries.length - 1].seq);
    }
  }
  return { rowCounts, lastSeqs };
}

/** Normalises list paging: a non-negative integer offset and a limit (Infinity when absent). */
export function pageBounds(offset: number | undefined, limit: number | undefined): { offset: number; limit: number } {
  const o = Number.isFinite(offset) ? Math.max(0, Math.floor(offset as number)) : 0;
  const l = limit === undefined || Number.isNaN(limit) ? Infinity : Math.max(0, Math.floor(limit));
  return { offset: o, limit: l };
}
