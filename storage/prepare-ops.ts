// storage/prepare-ops.ts: the checks every Store backend runs on a commit batch, so all three behave alike.
// prepareOps validates shapes and copies values into plain JSON (checkOps validates without copying);
// planBatch checks rows/ledger against stored state.
import { ServiceError } from '../contracts/errors.ts';
import { LEDGER_ENTRY_VERSION, SESSION_RECORD_VERSION } from '../contracts/records.ts';
import { migrateSessionRecord } from './record-migrations.ts';
import type { LedgerEntry, SessionRecord, StoreOp } from './store.ts';

/** Longest id, namespace or record key accepted, in UTF-8 bytes (LMDB keys are bounded). Control characters are refused. */
const MAX_KEY_BYTES = 512;

/** Nesting depth up to which isPlainJson answers; anything deeper (or cyclic) goes through the checked copy. */
const PLAIN_DEPTH = 64;

function invalid(message: string, details?: unknown): ServiceError {
  return new ServiceError('SESSION_STORE_ERROR', message, details);
}

/**
 * Deepest nesting of arrays/objects a stored value may have. The HTTP layer bounds request bodies far
 * lower (`[limits] max_json_depth`); this bound keeps every recursive walk here and in the backends'
 * encoders (msgpack, JSON) clear of the stack limit whatever a caller hands in.
 */
export const MAX_STORED_DEPTH = 1000;

/** `where` plus the path walked so far, built only for an error message. */
function at(where: string, path: Array<string | number>): string {
  let out = where;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${p}`;
  return out;
}

/**
 * Deep-copies `value` as the JSON it would round-trip to, rejecting what JSON cannot carry faithfully:
 * bigint, functions, symbols, non-finite numbers, non-plain objects (Date, Map, class instances), cycles,
 * and nesting deeper than MAX_STORED_DEPTH. Like JSON, `undefined` object properties are dropped and
 * `undefined` array items become null.
 */
function toJsonValue(value: unknown, where: string): unknown {
  return copy(value, where, [], new Set());
}

function copy(value: unknown, where: string, path: Array<string | number>, seen: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw invalid(`${at(where, path)} holds a non-finite number`);
      return value;
    case 'object':
      break;
    default:
      throw invalid(`${at(where, path)} holds a ${typeof value}, which is not JSON`);
  }
  if (value === null) return null;
  if (seen.has(value)) throw invalid(`${at(where, path)} is cyclic`);
  if (path.length >= MAX_STORED_DEPTH)
    throw invalid(`${where} is nested deeper than ${MAX_STORED_DEPTH} levels`, { max_depth: MAX_STORED_DEPTH });
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) {
    const arr = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      path.push(i);
      arr[i] = item === undefined ? null : copy(item, where, path, seen);
      path.pop();
    }
    out = arr;
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw invalid(`${at(where, path)} is not a plain object`);
    const obj: Record<string, unknown> = {};
    for (const k of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[k];
      if (v === undefined) continue;
      path.push(k);
      const c = copy(v, where, path, seen);
      path.pop();
      // defineProperty so that a '__proto__' key stays data and never swaps the prototype
      if (k === '__proto__') Object.defineProperty(obj, k, { value: c, enumerable: true, writable: true, configurable: true });
      else obj[k] = c;
    }
    out = obj;
  }
  seen.delete(value);
  return out;
}

/**
 * True when `value` is already exactly the JSON it would round-trip to: finite numbers, strings, booleans,
 * null, and arrays and Object.prototype objects of those, no `undefined` member, no '__proto__' key, nested
 * at most PLAIN_DEPTH deep. Allocates nothing. False does not mean invalid: toJsonValue decides that.
 */
function isPlainJson(value: unknown, depth: number): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object':
      break;
    default:
      return false;
  }
  if (value === null) return true;
  if (depth > PLAIN_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (item === undefined || !isPlainJson(item, depth + 1)) return false;
    }
    return true;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const k in value) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined || k === '__proto__' || !isPlainJson(v, depth + 1)) return false;
  }
  return true;
}

/**
 * The JSON value to store for `value`: with `copyAll`, always a fresh copy; otherwise `value` itself when it
 * is plain JSON already (the caller then must not hold on to it past its own commit call), else the copy.
 */
function jsonValue(value: unknown, where: string, copyAll: boolean): unknown {
  return !copyAll && isPlainJson(value, 0) ? value : toJsonValue(value, where);
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

function checkSession(session: SessionRecord, copyAll: boolean): SessionRecord {
  // A record written in an older version (a caller not updated yet) is migrated like one read back.
  const s = migrateSessionRecord(jsonValue(session, 'session', copyAll)) as SessionRecord;
  if (s === null || typeof s !== 'object' || s.v !== SESSION_RECORD_VERSION)
    throw invalid(`session record must have v: ${SESSION_RECORD_VERSION}`);
  checkKey(s.session_id, 'session_id');
  for (const f of ['created_at_ms', 'updated_at_ms', 'message_count', 'total_tokens'] as const) {
    if (typeof s[f] !== 'number') throw invalid(`session.${f} must be a number`);
  }
  if (typeof s.archived !== 'boolean') throw invalid('session.archived must be a boolean');
  if (s.labels === null || typeof s.labels !== 'object' || Array.isArray(s.labels)) throw invalid('session.labels must be an object');
  for (const v of Object.values(s.labels)) if (typeof v !== 'string') throw invalid('session.labels values must be strings');
  return s;
}

function checkEntries(entries: LedgerEntry[], copyAll: boolean): LedgerEntry[] {
  if (!Array.isArray(entries)) throw invalid('appendLedger.entries must be an array');
  // Without copyAll the caller's array is returned as it is when every entry is plain JSON already (the usual case).
  let out: LedgerEntry[] | null = copyAll ? new Array<LedgerEntry>(entries.length) : null;
  let prev = 0;
  for (let i = 0; i < entries.length; i++) {
    const entry: unknown = entries[i];
    // The position string is built only for the slow path: this runs for every ledger entry of every turn.
    const plain = !copyAll && isPlainJson(entry, 0);
    const e = (plain ? entry : toJsonValue(entry, `entries[${i}]`)) as LedgerEntry;
    if (!plain && !out) out = entries.slice(0, i);
    if (e === null || typeof e !== 'object') throw invalid('ledger entry must be an object');
    const seq = e.seq;
    if (!Number.isSafeInteger(seq) || seq < 1) throw invalid(`entries[${i}].seq must be an integer >= 1`);
    if (seq <= prev) throw invalid('ledger entries must have strictly increasing seq');
    if (typeof e.kind !== 'string' || typeof e.timestamp_ms !== 'number') throw invalid('ledger entry needs kind and timestamp_ms');
    if (e.v !== undefined && e.v !== LEDGER_ENTRY_VERSION) throw invalid(`entries[${i}].v: unknown ledger entry version`);
    prev = seq;
    if (out) out[i] = e;
  }
  return out ?? entries;
}

function prepareOne(op: StoreOp, copyAll: boolean): StoreOp {
  switch (op?.op) {
    case 'putSession':
      return { op: 'putSession', session: checkSession(op.session, copyAll) };
    case 'putRows':
      if (!Array.isArray(op.rows)) throw invalid('putRows.rows must be an array');
      return {
        op: 'putRows',
        sessionId: checkKey(op.sessionId, 'sessionId'),
        fromIndex: checkIndex(op.fromIndex, 'fromIndex', 0),
        rows: jsonValue(op.rows, 'rows', copyAll) as typeof op.rows,
      };
    case 'truncateRows':
      return { op: 'truncateRows', sessionId: checkKey(op.sessionId, 'sessionId'), length: checkIndex(op.length, 'length', 0) };
    case 'appendLedger':
      return { op: 'appendLedger', sessionId: checkKey(op.sessionId, 'sessionId'), entries: checkEntries(op.entries, copyAll) };
    case 'dropLedger': {
      if (!Array.isArray(op.ranges)) throw invalid('dropLedger.ranges must be an array');
      const ranges = op.ranges.map((r, i): [number, number] => {
        if (!Array.isArray(r) || r.length !== 2) throw invalid(`dropLedger.ranges[${i}] must be [from, to]`);
        const from = checkIndex(r[0], `dropLedger.ranges[${i}][0]`, 1);
        return [from, checkIndex(r[1], `dropLedger.ranges[${i}][1]`, from)];
      });
      return { op: 'dropLedger', sessionId: checkKey(op.sessionId, 'sessionId'), ranges };
    }
    case 'putRecord':
      if (op.value === undefined) throw invalid('putRecord.value must not be undefined');
      return { op: 'putRecord', ns: checkKey(op.ns, 'ns'), key: checkKey(op.key, 'key'), value: jsonValue(op.value, 'value', copyAll) };
    case 'deleteRecord':
      return { op: 'deleteRecord', ns: checkKey(op.ns, 'ns'), key: checkKey(op.key, 'key') };
    case 'checkRecord':
      if (op.rev !== null && !Number.isSafeInteger(op.rev)) throw invalid('checkRecord.rev must be an integer or null');
      return { op: 'checkRecord', ns: checkKey(op.ns, 'ns'), key: checkKey(op.key, 'key'), rev: op.rev };
    default:
      throw invalid('unknown store op', { op: (op as { op?: unknown } | undefined)?.op });
  }
}

function prepareAll(ops: readonly StoreOp[], copyAll: boolean): StoreOp[] {
  if (!Array.isArray(ops)) throw invalid('commit expects an array of ops');
  const out = new Array<StoreOp>(ops.length);
  for (let i = 0; i < ops.length; i++) out[i] = prepareOne(ops[i], copyAll);
  return out;
}

/** Validates a batch and returns JSON-normalised copies; throws SESSION_STORE_ERROR before anything is written. */
export function prepareOps(ops: readonly StoreOp[]): StoreOp[] {
  return prepareAll(ops, true);
}

/**
 * Validates a batch like prepareOps, but copies only values that are not plain JSON already (an `undefined`
 * member, say); the rest stay the caller's own objects. For a backend that serialises every value before its
 * commit call returns, so later changes by the caller cannot reach the store.
 */
export function checkOps(ops: readonly StoreOp[]): StoreOp[] {
  return prepareAll(ops, false);
}

/** Reads a backend's current per-session counters (inside its write transaction, where it has one). */
export interface BatchState {
  /**
   * Rows stored for the session. `guess` is what the batch implies (the index its first row op starts at);
   * a backend may use it to confirm the count cheaply, but must return the true count.
   */
  rowCount(sessionId: string, guess: number): number;
  lastSeq(sessionId: string): number;
}

/** What planBatch reads of an op: StoreOps, or a backend's own already-serialised form of them. */
export type PlanOp =
  | { op: 'putRows'; sessionId: string; fromIndex: number; rows: { length: number } }
  | { op: 'truncateRows'; sessionId: string; length: number }
  | { op: 'appendLedger'; sessionId: string; entries: ReadonlyArray<{ seq: number }> }
  | { op: 'putSession' | 'putRecord' | 'deleteRecord' | 'dropLedger' | 'checkRecord' };

/** Row counts and last ledger seqs after the batch, for every session the batch touches. */
export interface BatchPlan {
  rowCounts: Map<string, number>;
  lastSeqs: Map<string, number>;
}

/**
 * Replays the batch's row and ledger ops over `state` and throws CONFLICT when one would leave a gap
 * in the transcript or append a ledger seq that is not above the stored last seq.
 */
export function planBatch(ops: readonly PlanOp[], state: BatchState): BatchPlan {
  const rowCounts = new Map<string, number>();
  const lastSeqs = new Map<string, number>();
  for (const op of ops) {
    if (op.op === 'putRows' || op.op === 'truncateRows') {
      const count = rowCounts.get(op.sessionId) ?? state.rowCount(op.sessionId, op.op === 'putRows' ? op.fromIndex : op.length);
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

/** The `rev` member of a stored record value (null when absent or not an object with an integer `rev`). */
function storedRev(value: unknown): number | null | undefined {
  if (value === undefined) return null;
  const rev = typeof value === 'object' && value !== null ? (value as { rev?: unknown }).rev : undefined;
  return Number.isSafeInteger(rev) ? (rev as number) : undefined;
}

/**
 * Evaluates every checkRecord op of a batch against `read` (the backend's current record, inside its write
 * transaction where it has one) and throws CONFLICT on the first that does not hold.
 */
export function checkConditions(ops: readonly StoreOp[], read: (ns: string, key: string) => unknown): void {
  for (const op of ops) {
    if (op.op !== 'checkRecord') continue;
    const actual = storedRev(read(op.ns, op.key));
    if (actual !== op.rev) {
      throw new ServiceError(
        'CONFLICT',
        `record ${op.ns}/${op.key} changed: expected rev ${op.rev ?? 'absent'}, found ${actual === null ? 'absent' : (actual ?? 'no rev')}`,
        {
          ns: op.ns,
          key: op.key,
          expected_rev: op.rev,
          actual_rev: actual ?? null,
        },
      );
    }
  }
}
