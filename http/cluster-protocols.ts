// http/cluster-protocols.ts: the session a foreign-protocol request (docs/protocols.md) starts, cancels or
// reads a turn of, so that a cluster node forwards it to the node holding that session's lease
// (http/cluster-forward.ts), where the session runs its turns, the running turn can be cancelled, and a
// running turn reads as running (only the node running a turn knows it is not a leftover of a restart):
//   POST /threads/{thread_id}/runs, /runs/wait, /runs/stream, /runs/{run_id}/cancel → the thread (LangGraph)
//   GET /threads/{thread_id}/runs/{run_id}, /join, /stream                          → the thread
//   POST /ag-ui/{agent}                                   → body threadId (AG-UI)
//   POST /v1/responses                                    → the session of body previous_response_id (OpenAI)
//   GET /v1/responses/{response_id}, POST /v1/responses/{response_id}/cancel → the session of that response
//   POST /a2a SendMessage, SendStreamingMessage, message/send, message/stream → params.message.contextId
//   POST /a2a CancelTask, tasks/cancel, GetTask, tasks/get, SubscribeToTask, tasks/resubscribe → the session of task params.id
//   POST /a2a ListTasks                                   → params.contextId
// Ids are looked up in the shared protocol-turn records. Anything else (a new session, thread state and
// history) is served where it lands: reads come from the store and the shared ledger. Malformed input:
// undefined (served here, which answers it). When no live node holds the session, the request is served
// where it lands too.
import type { HttpRequest } from './transport.ts';

const RUNS_PATH = /^\/threads\/([^/]+)\/runs(?:\/wait|\/stream|\/[^/]+\/cancel)?$/;
const RUN_READ_PATH = /^\/threads\/([^/]+)\/runs\/[^/]+(?:\/join|\/stream)?$/;
const RESPONSE_CANCEL_PATH = /^\/v1\/responses\/([^/]+)\/cancel$/;
const RESPONSE_PATH = /^\/v1\/responses\/([^/]+)$/;
const A2A_SEND = new Set(['SendMessage', 'SendStreamingMessage', 'message/send', 'message/stream']);
const A2A_TASK = new Set(['CancelTask', 'tasks/cancel', 'GetTask', 'tasks/get', 'SubscribeToTask', 'tasks/resubscribe']);

function segment(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

function jsonBody(req: HttpRequest): Record<string, unknown> | undefined {
  if (req.body.length === 0 || req.bodyTooLarge) return undefined;
  try {
    const v: unknown = JSON.parse(req.body.toString('utf8'));
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const idOf = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 && v.length <= 200 ? v : undefined);

/**
 * The session of a protocol request that starts or cancels a turn, when it names one. `turnSession`: the
 * session of a protocol-turn record (actors/protocols/protocol-turns.ts).
 */
export function protocolSessionOf(
  turnSession: (recordId: string) => Promise<string | undefined>,
): (req: HttpRequest) => Promise<string | undefined> {
  const sessionOfRecord = async (id: string | undefined): Promise<string | undefined> => (id === undefined ? undefined : turnSession(id));
  return async (req) => {
    if (req.method === 'GET') {
      const run = RUN_READ_PATH.exec(req.path);
      if (run) return segment(run[1])?.toLowerCase();
      const response = RESPONSE_PATH.exec(req.path);
      return response ? sessionOfRecord(segment(response[1])) : undefined;
    }
    if (req.method !== 'POST') return undefined;
    const runs = RUNS_PATH.exec(req.path);
    if (runs) return segment(runs[1])?.toLowerCase();
    const cancel = RESPONSE_CANCEL_PATH.exec(req.path);
    if (cancel) return sessionOfRecord(segment(cancel[1]));
    if (req.path.startsWith('/ag-ui/')) return idOf(jsonBody(req)?.threadId)?.toLowerCase();
    if (req.path === '/v1/responses') return sessionOfRecord(idOf(jsonBody(req)?.previous_response_id));
    if (req.path !== '/a2a') return undefined;
    const call = jsonBody(req);
    const method = call?.method;
    const params = (call?.params ?? {}) as Record<string, unknown>;
    if (typeof method !== 'string' || !params || typeof params !== 'object') return undefined;
    if (A2A_SEND.has(method)) return idOf((params.message as Record<string, unknown> | undefined)?.contextId)?.toLowerCase();
    if (A2A_TASK.has(method)) {
      const task = idOf(params.id);
      return sessionOfRecord(task === undefined ? undefined : `a2a_${task}`);
    }
    if (method === 'ListTasks') return idOf(params.contextId)?.toLowerCase();
    return undefined;
  };
}
