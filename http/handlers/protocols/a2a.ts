// http/handlers/protocols/a2a.ts: A2A (Agent2Agent) over Warren sessions, JSON-RPC binding (protocol 0.3
// wire, the method names @a2a-js/sdk's JSON-RPC client sends to a 0.3 card). A task is a Warren turn with a
// durable protocol-turn record (so tasks/get works on any node and after a restart); its contextId is the
// session id (a new context creates the session with that id). Streams are SSE frames of JSON-RPC responses
// with `id: <seq>:<n>`; tasks/resubscribe answers a Task snapshot and then the live events after it (no
// loss, no repeat), or with Last-Event-ID exactly the events after that id. See docs/protocols.md.
import { randomUUID } from 'node:crypto';
import { A2aTaskMapper, TERMINAL, type A2aMessage, type A2aStreamEvent } from '../../../actors/protocols/a2a/a2a-map.ts';
import type { ProtocolTurnRecord, ProtocolTurns, TurnStart } from '../../../actors/protocols/protocol-turns.ts';
import { openFeed, type TurnFeed } from '../../../actors/protocols/turn-feed.ts';
import type { SessionHost } from '../../../actors/session/session-host.ts';
import { isServiceError } from '../../../contracts/errors.ts';
import { A2A_ROUTE } from '../../../contracts/routes-a2a.ts';
import { on, type HandlerContext, type HandlerResult, type HandlerTable } from '../../handler.ts';
import { SseWriter } from './sse-writer.ts';

const PROTOCOL = 'a2a';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How long tasks/cancel waits for the cancelled turn's terminal event. */
const CANCEL_SETTLE_MS = 10_000;
const MAX_TEXT_BYTES = 1_000_000;
/**
 * How long a read of an ended task waits for its terminal event: the record is durable at the commit, a
 * moment before the hub has delivered the last events; a memory ring that dropped them costs this wait.
 */
const ENDED_SETTLE_MS = 3_000;

/** A2A / JSON-RPC error codes. */
const A2A_ERR = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  taskNotFound: -32001,
  taskNotCancelable: -32002,
  unsupported: -32004,
  contentType: -32005,
} as const;

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

type RpcId = string | number | null;

function rpcResult(id: RpcId, result: unknown) {
  return { jsonrpc: '2.0' as const, id, result };
}

function rpcError(id: RpcId, err: unknown) {
  if (err instanceof RpcError) {
    return {
      jsonrpc: '2.0' as const,
      id,
      error: { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) },
    };
  }
  if (isServiceError(err)) {
    const code =
      err.code === 'NOT_FOUND' || err.code === 'SESSION_NOT_FOUND'
        ? A2A_ERR.taskNotFound
        : err.code === 'BAD_REQUEST'
          ? A2A_ERR.invalidParams
          : A2A_ERR.internal;
    return { jsonrpc: '2.0' as const, id, error: { code, message: err.message, data: { warren_code: err.code } } };
  }
  return { jsonrpc: '2.0' as const, id, error: { code: A2A_ERR.internal, message: 'internal error' } };
}

function obj(v: unknown, where: string): Record<string, unknown> {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new RpcError(A2A_ERR.invalidParams, `${where} must be an object`);
  return v as Record<string, unknown>;
}

function str(v: unknown, where: string, optional = false): string | undefined {
  if (v === undefined || v === null) {
    if (optional) return undefined;
    throw new RpcError(A2A_ERR.invalidParams, `${where} is required`);
  }
  if (typeof v !== 'string' || v.length === 0 || v.length > 200)
    throw new RpcError(A2A_ERR.invalidParams, `${where} must be a non-empty string`);
  return v;
}

/** The prompt of an A2A user message: its text parts joined, data parts as JSON; file parts are refused. */
function promptOf(message: Record<string, unknown>): string {
  if (message.role !== 'user') throw new RpcError(A2A_ERR.invalidParams, "message.role must be 'user'");
  const parts = message.parts;
  if (!Array.isArray(parts) || parts.length === 0) throw new RpcError(A2A_ERR.invalidParams, 'message.parts must be a non-empty array');
  const out = parts.map((raw, i) => {
    const part = obj(raw, `message.parts[${i}]`);
    if (part.kind === 'text' && typeof part.text === 'string') return part.text;
    if (part.kind === 'data' && part.data && typeof part.data === 'object') return JSON.stringify(part.data);
    if (part.kind === 'file') {
      throw new RpcError(A2A_ERR.contentType, `message.parts[${i}]: file parts are not supported (text and data only)`);
    }
    throw new RpcError(A2A_ERR.invalidParams, `message.parts[${i}]: unknown part kind '${String(part.kind)}'`);
  });
  const prompt = out.join('\n\n');
  if (!prompt.trim()) throw new RpcError(A2A_ERR.invalidParams, 'message has no text');
  if (Buffer.byteLength(prompt) > MAX_TEXT_BYTES) throw new RpcError(A2A_ERR.invalidParams, `message text exceeds ${MAX_TEXT_BYTES} bytes`);
  return prompt;
}

function historyLengthOf(v: unknown): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0)
    throw new RpcError(A2A_ERR.invalidParams, 'historyLength must be a non-negative integer');
  return v;
}

function parseLastEventId(ctx: HandlerContext): [number, number] | null {
  const raw = ctx.headers['last-event-id']?.trim();
  if (!raw) return null;
  const m = /^([0-9]{1,15}):([0-9]{1,6})$/.exec(raw);
  if (!m) throw new RpcError(A2A_ERR.invalidParams, `invalid Last-Event-ID '${raw}': expected <seq>:<n>`);
  return [Number(m[1]), Number(m[2])];
}

const recordKey = (taskId: string) => `a2a_${taskId}`;

export function a2aHandlers(sup: SessionHost, turns: ProtocolTurns, baseUrl: () => string): HandlerTable {
  async function record(taskId: unknown): Promise<ProtocolTurnRecord> {
    const id = str(taskId, 'params.id')!;
    try {
      return await turns.get(PROTOCOL, recordKey(id));
    } catch (err) {
      if (isServiceError(err) && err.code === 'NOT_FOUND') throw new RpcError(A2A_ERR.taskNotFound, `Task not found: ${id}`, { id });
      throw err;
    }
  }

  const mapperFor = (rec: ProtocolTurnRecord) => new A2aTaskMapper(String(rec.meta?.task_id), rec.session_id, rec.created_ms);

  /** The task as it stands (wait: until its terminal event, within CANCEL_SETTLE_MS). */
  async function taskNow(rec: ProtocolTurnRecord, wait: boolean): Promise<A2aTaskMapper> {
    const mapper = mapperFor(rec);
    const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
    try {
      if (wait || rec.status !== 'in_progress') {
        const signal = AbortSignal.timeout(wait ? CANCEL_SETTLE_MS : ENDED_SETTLE_MS);
        while (!mapper.finished) {
          const e = await feed.next(signal);
          if (!e) break;
          mapper.apply(e);
        }
      } else {
        for (let e = feed.poll(); e && !mapper.finished; e = feed.poll()) mapper.apply(e);
      }
    } finally {
      feed.stop();
    }
    mapper.settle(mapper.finished ? rec : await turns.get(PROTOCOL, rec.id));
    return mapper;
  }

  /** Streams JSON-RPC responses (SSE) for a task: `first` events, then the mapped feed until the terminal one. */
  async function stream(
    ctx: HandlerContext,
    rpcId: RpcId,
    mapper: A2aTaskMapper,
    feed: TurnFeed,
    /** `ended`: the task's settled record; the feed is drained without waiting and the record closes the task. */
    opts: { snapshot: boolean; after: [number, number] | null; ended?: ProtocolTurnRecord },
  ): Promise<HandlerResult> {
    const gone = new AbortController();
    const settleBy = opts.ended ? AbortSignal.timeout(ENDED_SETTLE_MS) : undefined;
    ctx.res.onAbort(() => {
      gone.abort();
      feed.stop();
    });
    const sse = new SseWriter(ctx.res);
    const send = (ev: A2aStreamEvent, id: string) => sse.frame(rpcResult(rpcId, ev), { id });
    try {
      if (opts.snapshot) {
        // Everything the feed holds now is folded into one Task; the stream goes on after it.
        let lastSeq = 0;
        for (let e = feed.poll(); e; e = mapper.finished ? null : feed.poll()) {
          mapper.apply(e);
          lastSeq = e.seq;
        }
        const task = mapper.task();
        await send(task, `${lastSeq}:0`);
        if (TERMINAL.has(task.status.state)) {
          // It ended while being folded: its terminal status closes the stream (final: true).
          await send(
            { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final: true },
            `${lastSeq}:1`,
          );
        }
      } else if (!opts.after) {
        await send(mapper.task(), '0:0');
      }
      const after = opts.after;
      while (!mapper.finished) {
        const e = await feed.next(settleBy ? AbortSignal.any([gone.signal, settleBy]) : gone.signal);
        if (!e) break;
        let n = 0;
        for (const ev of mapper.apply(e)) {
          const k = ++n;
          if (!after || e.seq > after[0] || (e.seq === after[0] && k > after[1])) await send(ev, `${e.seq}:${k}`);
        }
      }
      if (opts.ended && !mapper.finished && !gone.signal.aborted) {
        // The feed no longer reaches the terminal event (a memory ring dropped it): the record closes the task.
        mapper.settle(opts.ended);
        const task = mapper.task();
        await send({ kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final: true }, '0:1');
      }
    } finally {
      feed.stop();
      sse.end();
    }
    return { streamed: true };
  }

  async function send(ctx: HandlerContext, rpcId: RpcId, params: Record<string, unknown>, streaming: boolean): Promise<HandlerResult> {
    const message = obj(params.message, 'params.message');
    const prompt = promptOf(message);
    const messageId = str(message.messageId, 'message.messageId')!;
    if (message.taskId !== undefined && message.taskId !== null) {
      throw new RpcError(
        A2A_ERR.unsupported,
        'continuing an existing task is not supported: a Warren task ends with its turn (send the next message with the same contextId)',
      );
    }
    const config =
      params.configuration === undefined || params.configuration === null ? {} : obj(params.configuration, 'params.configuration');
    const historyLength = historyLengthOf(config.historyLength);
    const blocking = config.blocking !== false;
    let contextId = str(message.contextId, 'message.contextId', true);
    if (contextId !== undefined && !UUID.test(contextId)) {
      throw new RpcError(A2A_ERR.invalidParams, 'message.contextId must be a UUID (it is the Warren session id)');
    }
    contextId = (contextId ?? randomUUID()).toLowerCase();
    const session = await sup.deps.store.getSession(contextId);
    const start: TurnStart =
      session && !session.archived
        ? { kind: 'continue', sessionId: contextId, body: { session_id: contextId, prompt } }
        : { kind: 'create', sessionId: contextId, body: { prompt } };
    const taskId = randomUUID();
    const { record, feed: live } = await turns.start(PROTOCOL, recordKey(taskId), start, { task_id: taskId, message_id: messageId });
    const mapper = mapperFor(record);
    const user: A2aMessage = { kind: 'message', messageId, role: 'user', parts: [{ kind: 'text', text: prompt }], contextId, taskId };
    mapper.addHistory(user);
    if (!streaming && !blocking) {
      live?.stop();
      return { status: 200, body: rpcResult(rpcId, mapper.task(historyLength)) };
    }
    const feed = live ?? (await openFeed(sup, record.session_id, record.first_seq - 1));
    if (streaming) return stream(ctx, rpcId, mapper, feed, { snapshot: false, after: null });
    try {
      while (!mapper.finished) {
        const e = await feed.next();
        if (!e) break;
        mapper.apply(e);
      }
    } finally {
      feed.stop();
    }
    mapper.settle(await turns.get(PROTOCOL, record.id));
    return { status: 200, body: rpcResult(rpcId, mapper.task(historyLength)) };
  }

  async function dispatch(ctx: HandlerContext): Promise<HandlerResult> {
    let req: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse((ctx.rawBody ?? Buffer.alloc(0)).toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return { status: 200, body: rpcError(null, new RpcError(A2A_ERR.invalidRequest, 'expected one JSON-RPC request object')) };
      }
      req = parsed as Record<string, unknown>;
    } catch {
      return { status: 200, body: rpcError(null, new RpcError(A2A_ERR.parse, 'invalid JSON')) };
    }
    const rpcId: RpcId = typeof req.id === 'string' || typeof req.id === 'number' ? req.id : null;
    try {
      if (req.jsonrpc !== '2.0' || typeof req.method !== 'string') {
        throw new RpcError(A2A_ERR.invalidRequest, "a JSON-RPC 2.0 request needs jsonrpc: '2.0' and a method");
      }
      const params = req.params === undefined ? {} : obj(req.params, 'params');
      switch (req.method) {
        case 'message/send':
          return await send(ctx, rpcId, params, false);
        case 'message/stream':
          return await send(ctx, rpcId, params, true);
        case 'tasks/get': {
          const rec = await record(params.id);
          const mapper = await taskNow(rec, false);
          return { status: 200, body: rpcResult(rpcId, mapper.task(historyLengthOf(params.historyLength))) };
        }
        case 'tasks/cancel': {
          const rec = await record(params.id);
          if (rec.status !== 'in_progress') {
            throw new RpcError(A2A_ERR.taskNotCancelable, `Task ${String(params.id)} has already ended (${rec.status})`);
          }
          try {
            turns.cancel(rec.id);
          } catch (err) {
            // Not running on this node (or already gone): the record tells the truth below.
            if (!isServiceError(err) || err.code !== 'NOT_FOUND') throw err;
          }
          const mapper = await taskNow(rec, true);
          return { status: 200, body: rpcResult(rpcId, mapper.task()) };
        }
        case 'tasks/resubscribe': {
          const rec = await record(params.id);
          const after = parseLastEventId(ctx);
          if (rec.status !== 'in_progress' && !after) {
            // Ended already (the feed may no longer reach its terminal event: a memory ring); the record settles it.
            const done = await taskNow(rec, false);
            const sse = new SseWriter(ctx.res);
            const task = done.task();
            try {
              await sse.frame(rpcResult(rpcId, task), { id: '0:0' });
              const final = { kind: 'status-update', taskId: task.id, contextId: task.contextId, status: task.status, final: true };
              await sse.frame(rpcResult(rpcId, final), { id: '0:1' });
            } finally {
              sse.end();
            }
            return { streamed: true };
          }
          const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
          const ended = rec.status !== 'in_progress' ? await turns.get(PROTOCOL, rec.id) : undefined;
          return await stream(ctx, rpcId, mapperFor(rec), feed, { snapshot: !after, after, ended });
        }
        case 'tasks/pushNotificationConfig/set':
        case 'tasks/pushNotificationConfig/get':
        case 'tasks/pushNotificationConfig/list':
        case 'tasks/pushNotificationConfig/delete':
          throw new RpcError(A2A_ERR.unsupported, 'push notifications are not supported (use message/stream or tasks/resubscribe)', {
            method: req.method,
          });
        default:
          throw new RpcError(A2A_ERR.methodNotFound, `Method not found: ${req.method}`);
      }
    } catch (err) {
      if (!(err instanceof RpcError) && !isServiceError(err)) ctx.log.error({ err }, 'a2a request failed');
      return { status: 200, body: rpcError(rpcId, err) };
    }
  }

  return {
    ...on(A2A_ROUTE.card, () => ({
      status: 200,
      body: {
        protocolVersion: '0.3.0',
        name: 'Warren',
        description: "The realm's default Warren agent: each A2A task is one agent turn; the task's contextId is the Warren session id.",
        url: `${baseUrl()}/a2a`,
        preferredTransport: 'JSONRPC',
        additionalInterfaces: [{ url: `${baseUrl()}/a2a`, transport: 'JSONRPC' }],
        version: '1',
        capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
        securitySchemes: {
          warren_key: {
            type: 'http',
            scheme: 'bearer',
            description: 'A Warren inbound API key (wk_...), when the realm requires keys: scope read for this card, sessions for /a2a',
          },
        },
        defaultInputModes: ['text/plain', 'application/json'],
        defaultOutputModes: ['text/plain', 'application/json'],
        skills: [
          {
            id: 'warren-turn',
            name: 'Agent turn',
            description: "One turn of the realm's default agent with its configured tools, in the session named by contextId",
            tags: ['chat', 'tools'],
          },
        ],
      },
    })),
    ...on(A2A_ROUTE.rpc, (ctx) => dispatch(ctx)),
  };
}
