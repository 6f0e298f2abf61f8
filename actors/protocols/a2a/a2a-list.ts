// actors/protocols/a2a/a2a-list.ts: A2A 1.0 ListTasks over the tasks of one context (a Warren session's
// A2A turns, listed from the session's own protocol-turn list: actors/protocols/protocol-turns.ts). Reads
// the request's filters and paging, and pages the records: newest status change first (a task's status
// time is its end, or its start while it runs), `pageToken` the position after the last task of the page.
// The Tasks themselves are folded by the caller (http/handlers/protocols/a2a.ts), as GetTask folds them.
import type { ProtocolTurnRecord } from '../protocol-turns.ts';
import type { A2aState } from './a2a-map.ts';
import { A2A_ERR, historyLengthOf, RpcError } from './a2a-wire.ts';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

const STATES: Record<string, A2aState> = {
  TASK_STATE_WORKING: 'working',
  TASK_STATE_COMPLETED: 'completed',
  TASK_STATE_CANCELED: 'canceled',
  TASK_STATE_FAILED: 'failed',
  // States a Warren task never reaches: the filter is valid and matches nothing.
  TASK_STATE_SUBMITTED: 'submitted',
  TASK_STATE_INPUT_REQUIRED: 'input-required',
  TASK_STATE_REJECTED: 'rejected',
  TASK_STATE_AUTH_REQUIRED: 'unknown',
};

export interface ListQuery {
  contextId: string;
  state?: A2aState;
  pageSize: number;
  /** The last task of the previous page: [status time, task record id]. */
  after?: [number, string];
  /** Tasks whose status time is at or after this (epoch ms). */
  since?: number;
  historyLength?: number;
  includeArtifacts: boolean;
}

const bad = (message: string) => new RpcError(A2A_ERR.invalidParams, message);

/** Reads ListTasks params (1.0). A context is required: Warren lists the tasks of one session. */
export function readListQuery(params: Record<string, unknown>, isContextId: (v: string) => boolean): ListQuery {
  const contextId = params.contextId;
  if (contextId === undefined || contextId === '') {
    throw new RpcError(
      A2A_ERR.unsupported,
      'ListTasks needs a contextId: Warren lists the tasks of one context (a session), not every task of the agent',
    );
  }
  if (typeof contextId !== 'string' || !isContextId(contextId)) throw bad('contextId must be a UUID (a Warren session id)');
  const q: ListQuery = { contextId: contextId.toLowerCase(), pageSize: DEFAULT_PAGE, includeArtifacts: params.includeArtifacts === true };
  if (params.status !== undefined && params.status !== 'TASK_STATE_UNSPECIFIED') {
    const state = typeof params.status === 'string' ? STATES[params.status] : undefined;
    if (!state) throw bad(`status must be a TaskState name (TASK_STATE_COMPLETED, ...)`);
    q.state = state;
  }
  if (params.pageSize !== undefined) {
    const n = params.pageSize;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > MAX_PAGE)
      throw bad(`pageSize must be an integer from 1 to ${MAX_PAGE}`);
    q.pageSize = n;
  }
  if (params.pageToken !== undefined && params.pageToken !== '') {
    const m =
      typeof params.pageToken === 'string' ? /^(\d{1,15}):(.{1,200})$/.exec(Buffer.from(params.pageToken, 'base64url').toString()) : null;
    if (!m) throw bad('pageToken is not one this server gave');
    q.after = [Number(m[1]), m[2]];
  }
  if (params.statusTimestampAfter !== undefined) {
    const ms = typeof params.statusTimestampAfter === 'string' ? Date.parse(params.statusTimestampAfter) : NaN;
    if (!Number.isFinite(ms)) throw bad('statusTimestampAfter must be an RFC 3339 timestamp');
    q.since = ms;
  }
  const history = historyLengthOf(params.historyLength);
  if (history !== undefined) q.historyLength = history;
  return q;
}

/** The A2A state a settled record reads as. */
function stateOf(rec: ProtocolTurnRecord): A2aState {
  if (rec.status === 'in_progress') return 'working';
  return rec.status === 'cancelled' ? 'canceled' : rec.status;
}

const statusMs = (rec: ProtocolTurnRecord) => rec.finished_ms ?? rec.created_ms;

/** Filters, orders (newest status first, then by id) and pages the records. */
export function pageTasks(
  recs: ProtocolTurnRecord[],
  q: ListQuery,
): { page: ProtocolTurnRecord[]; nextPageToken: string; totalSize: number } {
  const matching = recs
    .filter((r) => (q.state === undefined || stateOf(r) === q.state) && (q.since === undefined || statusMs(r) >= q.since))
    .sort((a, b) => statusMs(b) - statusMs(a) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const after = q.after;
  const start = after ? matching.findIndex((r) => statusMs(r) < after[0] || (statusMs(r) === after[0] && r.id > after[1])) : 0;
  const page = start < 0 ? [] : matching.slice(start, start + q.pageSize);
  const last = page.at(-1);
  const more = start >= 0 && start + q.pageSize < matching.length && last !== undefined;
  return {
    page,
    nextPageToken: more ? Buffer.from(`${statusMs(last)}:${last.id}`).toString('base64url') : '',
    totalSize: matching.length,
  };
}
