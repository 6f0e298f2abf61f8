// http/handlers/protocols/a2a.ts: A2A (Agent2Agent) over Warren sessions, JSON-RPC binding, in both
// protocol versions at one endpoint: the 1.0 method names (SendMessage, SendStreamingMessage, GetTask,
// CancelTask, SubscribeToTask, GetExtendedAgentCard, ListTasks) answer proto-JSON, the 0.3 names (message/send,
// message/stream, tasks/get, tasks/cancel, tasks/resubscribe) answer the 0.3 shapes; one fold of Warren's
// events (a2a-map.ts), two encoders (a2a-wire.ts). A task is a Warren turn with a durable protocol-turn
// record (so a task read works on any node and after a restart); its contextId is the session id (a new
// context creates the session with that id). Streams are SSE frames of JSON-RPC responses with
// `id: <seq>:<n>`; a resubscribe answers a Task snapshot and then the live events after it (no loss, no
// repeat), or with Last-Event-ID exactly the events after that id. See docs/protocols.md.
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../../../actors/uuidv7.ts';
import { A2aTaskMapper, TERMINAL, type A2aMessage, type A2aStreamEvent } from '../../../actors/protocols/a2a/a2a-map.ts';
import { A2A_ERR, A2A_V03, A2A_V1, historyLengthOf, obj, RpcError, str, type A2aWire } from '../../../actors/protocols/a2a/a2a-wire.ts';
import type { ProtocolTurnRecord, ProtocolTurns, TurnStart } from '../../../actors/protocols/protocol-turns.ts';
import { openFeed, type TurnFeed } from '../../../actors/protocols/turn-feed.ts';
import type { SessionHost } from '../../../actors/session/session-host.ts';
import { isServiceError } from '../../../contracts/errors.ts';
import { A2A_ROUTE } from '../../../contracts/routes-a2a.ts';
import { on, type HandlerContext, type HandlerResult, type HandlerTable } from '../../handler.ts';
import { pageTasks, readListQuery } from '../../../actors/protocols/a2a/a2a-list.ts';
import { agentCardV03, agentCardV1, wantsV1 } from './a2a-card.ts';
import { SseWriter } from './sse-writer.ts';

const PROTOCOL = 'a2a';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How long tasks/cancel waits for the cancelled turn's terminal event. */
const CANCEL_SETTLE_MS = 10_000;
/**
 * How long a read of an ended task waits for its terminal event: the record is durable at the commit, a
 * moment before the hub has delivered the last events; a memory ring that dropped them costs this wait.
 */
const ENDED_SETTLE_MS = 3_000;

type Op = 'send' | 'stream' | 'get' | 'cancel' | 'subscribe' | 'card' | 'list' | 'push';

/** Every JSON-RPC method of both wires: what it does and which wire answers. */
const METHODS: Record<string, [Op, A2aWire]> = {
  'message/send': ['send', A2A_V03],
  'message/stream': ['stream', A2A_V03],
  'tasks/get': ['get', A2A_V03],
  'tasks/cancel': ['cancel', A2A_V03],
  'tasks/resubscribe': ['subscribe', A2A_V03],
  'agent/getAuthenticatedExtendedCard': ['card', A2A_V03],
  'tasks/pushNotificationConfig/set': ['push', A2A_V03],
  'tasks/pushNotificationConfig/get': ['push', A2A_V03],
  'tasks/pushNotificationConfig/list': ['push', A2A_V03],
  'tasks/pushNotificationConfig/delete': ['push', A2A_V03],
  SendMessage: ['send', A2A_V1],
  SendStreamingMessage: ['stream', A2A_V1],
  GetTask: ['get', A2A_V1],
  CancelTask: ['cancel', A2A_V1],
  SubscribeToTask: ['subscribe', A2A_V1],
  GetExtendedAgentCard: ['card', A2A_V1],
  ListTasks: ['list', A2A_V1],
  CreateTaskPushNotificationConfig: ['push', A2A_V1],
  GetTaskPushNotificationConfig: ['push', A2A_V1],
  ListTaskPushNotificationConfigs: ['push', A2A_V1],
  DeleteTaskPushNotificationConfig: ['push', A2A_V1],
};

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

function parseLastEventId(ctx: HandlerContext): [number, number] | null {
  const raw = ctx.headers['last-event-id']?.trim();
  if (!raw) return null;
  const m = /^([0-9]{1,15}):([0-9]{1,6})$/.exec(raw);
  if (!m) throw new RpcError(A2A_ERR.invalidParams, `invalid Last-Event-ID '${raw}': expected <seq>:<n>`);
  return [Number(m[1]), Number(m[2])];
}

const recordKey = (taskId: string) => `a2a_${taskId}`;
const finalOf = (task: ReturnType<A2aTaskMapper['task']>): A2aStreamEvent => ({
  kind: 'status-update',
  taskId: task.id,
  contextId: task.contextId,
  status: task.status,
  final: true,
});

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
    wire: A2aWire,
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
    const send = (ev: A2aStreamEvent, id: string) => sse.frame(rpcResult(rpcId, wire.event(ev)), { id });
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
        // It ended while being folded: its terminal status closes the stream.
        if (TERMINAL.has(task.status.state)) await send(finalOf(task), `${lastSeq}:1`);
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
        await send(finalOf(mapper.task()), '0:1');
      }
    } finally {
      feed.stop();
      sse.end();
    }
    return { streamed: true };
  }

  async function send(
    ctx: HandlerContext,
    rpcId: RpcId,
    wire: A2aWire,
    params: Record<string, unknown>,
    streaming: boolean,
  ): Promise<HandlerResult> {
    const message = wire.readMessage(params.message);
    if (message.taskId !== undefined) {
      throw new RpcError(
        A2A_ERR.unsupported,
        'continuing an existing task is not supported: a Warren task ends with its turn (send the next message with the same contextId)',
      );
    }
    const { historyLength, returnImmediately } = wire.readConfig(params.configuration);
    if (message.contextId !== undefined && !UUID.test(message.contextId)) {
      throw new RpcError(A2A_ERR.invalidParams, 'message.contextId must be a UUID (it is the Warren session id)');
    }
    const contextId = (message.contextId ?? uuidv7()).toLowerCase();
    const { prompt, messageId } = message;
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
    if (!streaming && returnImmediately) {
      live?.stop();
      return { status: 200, body: rpcResult(rpcId, wire.sendResult(mapper.task(historyLength))) };
    }
    const feed = live ?? (await openFeed(sup, record.session_id, record.first_seq - 1));
    if (streaming) return stream(ctx, rpcId, wire, mapper, feed, { snapshot: false, after: null });
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
    return { status: 200, body: rpcResult(rpcId, wire.sendResult(mapper.task(historyLength))) };
  }

  async function subscribe(ctx: HandlerContext, rpcId: RpcId, wire: A2aWire, params: Record<string, unknown>): Promise<HandlerResult> {
    const rec = await record(params.id);
    const after = parseLastEventId(ctx);
    if (rec.status !== 'in_progress' && !after) {
      // Ended already (the feed may no longer reach its terminal event: a memory ring); the record settles it.
      const task = (await taskNow(rec, false)).task();
      const sse = new SseWriter(ctx.res);
      try {
        await sse.frame(rpcResult(rpcId, wire.event(task)), { id: '0:0' });
        await sse.frame(rpcResult(rpcId, wire.event(finalOf(task))), { id: '0:1' });
      } finally {
        sse.end();
      }
      return { streamed: true };
    }
    const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
    const ended = rec.status !== 'in_progress' ? await turns.get(PROTOCOL, rec.id) : undefined;
    return await stream(ctx, rpcId, wire, mapperFor(rec), feed, { snapshot: !after, after, ended });
  }

  async function cancel(rpcId: RpcId, wire: A2aWire, params: Record<string, unknown>): Promise<HandlerResult> {
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
    return { status: 200, body: rpcResult(rpcId, wire.task(mapper.task())) };
  }

  /** ListTasks: the tasks of one context, newest status first, folded as GetTask folds them (a2a-list.ts). */
  async function list(rpcId: RpcId, wire: A2aWire, params: Record<string, unknown>): Promise<HandlerResult> {
    const q = readListQuery(params, (v) => UUID.test(v));
    const { page, nextPageToken, totalSize } = pageTasks(await turns.listForSession(PROTOCOL, q.contextId), q);
    const tasks = await Promise.all(
      page.map(async (rec) => {
        const task = (await taskNow(rec, false)).task(q.historyLength);
        return wire.task(q.includeArtifacts ? task : { ...task, artifacts: [] });
      }),
    );
    return { status: 200, body: rpcResult(rpcId, { tasks, nextPageToken, pageSize: q.pageSize, totalSize }) };
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
      const version = ctx.headers['a2a-version']?.trim();
      if (version && !/^(?:0\.3|1(?:\.0)?)(?:\.\d+)?$/.test(version)) {
        throw new RpcError(A2A_ERR.versionNotSupported, `A2A-Version ${version} is not supported (1.0 and 0.3 are)`, {
          supported: ['1.0', '0.3'],
        });
      }
      const entry = Object.hasOwn(METHODS, req.method) ? METHODS[req.method] : undefined;
      if (!entry) throw new RpcError(A2A_ERR.methodNotFound, `Method not found: ${req.method}`);
      const [op, wire] = entry;
      const params = req.params === undefined ? {} : obj(req.params, 'params');
      switch (op) {
        case 'send':
          return await send(ctx, rpcId, wire, params, false);
        case 'stream':
          return await send(ctx, rpcId, wire, params, true);
        case 'get': {
          const mapper = await taskNow(await record(params.id), false);
          return { status: 200, body: rpcResult(rpcId, wire.task(mapper.task(historyLengthOf(params.historyLength)))) };
        }
        case 'cancel':
          return await cancel(rpcId, wire, params);
        case 'subscribe':
          return await subscribe(ctx, rpcId, wire, params);
        case 'card':
          return { status: 200, body: rpcResult(rpcId, wire === A2A_V1 ? agentCardV1(baseUrl()) : agentCardV03(baseUrl())) };
        case 'list':
          return await list(rpcId, wire, params);
        case 'push':
          throw new RpcError(A2A_ERR.pushNotSupported, 'push notifications are not supported (stream, or resubscribe to the task)', {
            method: req.method,
          });
      }
    } catch (err) {
      if (!(err instanceof RpcError) && !isServiceError(err)) ctx.log.error({ err }, 'a2a request failed');
      return { status: 200, body: rpcError(rpcId, err) };
    }
  }

  return {
    ...on(A2A_ROUTE.card, (ctx) => ({ status: 200, body: wantsV1(ctx.headers) ? agentCardV1(baseUrl()) : agentCardV03(baseUrl()) })),
    ...on(A2A_ROUTE.rpc, (ctx) => dispatch(ctx)),
  };
}
