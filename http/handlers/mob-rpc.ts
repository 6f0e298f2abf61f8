// http/handlers/mob-rpc.ts: JSON-RPC 2.0 over HTTP (POST /rpc): framing only. Parses the body itself so
// that malformed JSON is a JSON-RPC parse error (-32700), not an HTTP 400; supports batches and
// notifications (no id: no reply; a request of notifications only answers 204). Errors map through the
// one error table (contracts/errors.ts `rpc`): bad params -32602, unknown mob -32004, scope denied
// -32025, session busy -32002, ... with `data: {code, details}`. HTTP status is 200 for every reply.
// Over the WebSocket on a cluster node, a call naming a mob (a batch: each such call) is routed like
// `POST /rpc`: sent to the node holding the mob (OwnerCalls, carrying the forwarding header) and its reply
// returned on the socket; a mob nobody holds is taken here; other calls are served here.
import { ERROR_TABLE, isServiceError, ServiceError } from '../../contracts/errors.ts';
import { errorOfReply, type OwnerCalls } from '../../actors/cluster/owner-calls.ts';
import { rpcResourceOf } from '../cluster-resources.ts';
import { FORWARDED_HEADER } from '../cluster-forward.ts';
import { MOB_ROUTE } from '../../contracts/routes-mob.ts';
import { isRpcMethod, type MobRuntime } from '../../actors/mob/mob-runtime.ts';
import { callerOf, type Caller } from '../../actors/mob/mob-scopes.ts';
import type { Logger } from 'pino';
import { on, type HandlerTable } from '../handler.ts';
import type { WebSocketRoute } from '../transport.ts';
import { parseJsonText, type JsonLimits } from '../json-depth.ts';

type Id = string | number | null;
interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}
type Reply = { jsonrpc: '2.0'; id: Id; result: unknown } | { jsonrpc: '2.0'; id: Id; error: RpcError };

const fail = (id: Id, code: number, message: string, data?: unknown): Reply => ({
  jsonrpc: '2.0',
  id,
  error: { code, message, ...(data !== undefined ? { data } : {}) },
});

function errorOf(err: unknown, log: Logger): RpcError {
  if (isServiceError(err)) {
    return {
      code: ERROR_TABLE[err.code].rpc,
      message: err.message,
      data: { code: err.code, ...(err.details !== undefined ? { details: err.details } : {}) },
    };
  }
  log.error({ err }, 'json-rpc method failed');
  return { code: -32603, message: 'internal error' };
}

async function one(rt: MobRuntime, msg: unknown, caller: Caller, log: Logger): Promise<Reply | null> {
  if (typeof msg !== 'object' || msg === null || Array.isArray(msg)) return fail(null, -32600, 'invalid request: not an object');
  const m = msg as Record<string, unknown>;
  const hasId = Object.hasOwn(m, 'id');
  const id = (typeof m.id === 'string' || typeof m.id === 'number' || m.id === null ? m.id : null) as Id;
  if (m.jsonrpc !== '2.0' || typeof m.method !== 'string' || (hasId && id !== m.id))
    return fail(id, -32600, 'invalid request: jsonrpc must be "2.0", method a string, id a string, number or null');
  if (m.params !== undefined && (typeof m.params !== 'object' || m.params === null || Array.isArray(m.params)))
    return fail(id, -32602, 'params must be an object');
  let reply: Reply;
  if (!isRpcMethod(m.method)) reply = fail(id, -32601, `method not found: ${m.method}`);
  else {
    try {
      reply = { jsonrpc: '2.0', id, result: (await rt.call(m.method, m.params, caller)) ?? null };
    } catch (err) {
      const e = errorOf(err, log);
      reply = { jsonrpc: '2.0', id, error: e };
    }
  }
  return hasId ? reply : null;
}

/** One JSON-RPC payload (a request or a batch) as text; resolves with the reply, or null when none is due. */
async function handleRpcText(
  rt: MobRuntime,
  text: string,
  caller: Caller,
  log: Logger,
  limits: JsonLimits,
): Promise<Reply | Reply[] | null> {
  const parsed = parseRpc(text, limits);
  if ('reply' in parsed) return parsed.reply;
  const msg = parsed.msg;
  if (Array.isArray(msg)) {
    if (msg.length === 0) return fail(null, -32600, 'invalid request: empty batch');
    const replies = (await Promise.all(msg.map((x) => one(rt, x, caller, log)))).filter((r): r is Reply => r !== null);
    return replies.length ? replies : null;
  }
  return one(rt, msg, caller, log);
}

/**
 * Parses one JSON-RPC payload through the server's JSON limits (http/json-depth.ts): malformed JSON is a
 * parse error (-32700); a payload over max_json_depth or the size limit an invalid request (-32600) whose
 * data carries the HTTP error code and limit, so no recursive walk ever sees it.
 */
function parseRpc(text: string, limits: JsonLimits): { msg: unknown } | { reply: Reply } {
  try {
    return { msg: parseJsonText(text, limits, 'JSON-RPC message') };
  } catch (err) {
    const details = isServiceError(err) ? (err.details as Record<string, unknown> | undefined) : undefined;
    if (isServiceError(err) && (err.code === 'PAYLOAD_TOO_LARGE' || details?.max_json_depth !== undefined))
      return { reply: fail(null, -32600, `invalid request: ${err.message}`, { code: err.code, ...details }) };
    return { reply: fail(null, -32700, 'parse error') };
  }
}

export function mobRpcHandlers(rt: MobRuntime, limits: () => JsonLimits): HandlerTable {
  return on(MOB_ROUTE.rpc, async (ctx) => {
    const reply = await handleRpcText(rt, (ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'), callerOf(ctx.headers), ctx.log, limits());
    return reply ? { status: 200, body: reply } : { status: 204, text: '' };
  });
}

/** Upgrade headers that describe the socket, not the caller: never sent on with a routed call. */
const SOCKET_HEADERS =
  /^(host|connection|upgrade|content-length|content-type|transfer-encoding|keep-alive|sec-websocket-.*|x-warren-forwarded-by)$/;

/** One call read from the socket, on the node holding the mob it names (`calls`: the cluster's routing), or here. */
async function routedOne(
  rt: MobRuntime,
  calls: OwnerCalls,
  msg: unknown,
  headers: Record<string, string>,
  log: Logger,
): Promise<Reply | null> {
  const mob = rpcResourceOf(msg);
  if (!mob) return one(rt, msg, callerOf(headers), log);
  const m = msg as { id?: unknown };
  const id = (typeof m.id === 'string' || typeof m.id === 'number' ? m.id : null) as Id;
  const sent: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (!SOCKET_HEADERS.test(k) && k !== FORWARDED_HEADER) sent[k] = v;
  try {
    const reply = await calls.request({ resource: mob, method: 'POST', path: MOB_ROUTE.rpc.path, body: msg, headers: sent });
    if (reply.status === 204) return null;
    if (reply.status === 200) return reply.body as Reply;
    throw errorOfReply(reply);
  } catch (err) {
    const e = errorOf(isServiceError(err) ? err : new ServiceError('SERVICE_UNAVAILABLE', (err as Error).message), log);
    return Object.hasOwn(m, 'id') ? { jsonrpc: '2.0', id, error: e } : null;
  }
}

/** handleRpcText with each call naming a mob routed to the node holding it. */
async function handleRoutedText(
  rt: MobRuntime,
  calls: OwnerCalls,
  text: string,
  headers: Record<string, string>,
  log: Logger,
  limits: JsonLimits,
): Promise<Reply | Reply[] | null> {
  const parsed = parseRpc(text, limits);
  if ('reply' in parsed) return parsed.reply;
  const msg = parsed.msg;
  if (!Array.isArray(msg)) return routedOne(rt, calls, msg, headers, log);
  if (msg.length === 0) return fail(null, -32600, 'invalid request: empty batch');
  const replies = (await Promise.all(msg.map((x) => routedOne(rt, calls, x, headers, log)))).filter((r): r is Reply => r !== null);
  return replies.length ? replies : null;
}

/**
 * JSON-RPC over WebSocket at /rpc: one text frame per request or batch, one reply frame each (none for
 * notifications). `calls` (cluster nodes): calls naming a mob run on the node holding it.
 */
export function mobRpcSocket(rt: MobRuntime, log: Logger, limits: () => JsonLimits, calls?: OwnerCalls): WebSocketRoute {
  return {
    path: MOB_ROUTE.rpc.path,
    async onMessage(text, headers) {
      // Each frame goes through the same JSON limits as an HTTP body.
      const reply = calls
        ? await handleRoutedText(rt, calls, text, headers, log, limits())
        : await handleRpcText(rt, text, callerOf(headers), log, limits());
      return reply === null ? null : JSON.stringify(reply);
    },
  };
}
