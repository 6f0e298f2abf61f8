// http/handlers/protocols/langgraph.ts: the LangGraph Agent Protocol over Warren sessions. A thread is a
// session with the same id (POST /threads reserves the id; the session is created by the thread's first
// run), a run is a turn (a durable protocol-turn record keyed by run_id), the state is {messages} from
// the session's history, a checkpoint is the end of a turn. Streams carry `id: <seq>:<n>` so a client
// reconnecting to /threads/{id}/runs/{run_id}/stream with Last-Event-ID misses and repeats nothing.
import { randomUUID } from 'node:crypto';
import { uuidv7 } from '../../../actors/uuidv7.ts';
import type { Static } from 'typebox';
import type { SessionHost } from '../../../actors/session/session-host.ts';
import { historyPage, listSessions } from '../../../actors/session/session-queries.ts';
import {
  lcMessages,
  RunStreamMapper,
  STREAM_MODES,
  type LcMessage,
  type StreamMode,
} from '../../../actors/protocols/langgraph/langgraph-map.ts';
import type { ProtocolTurnRecord, ProtocolTurns, TurnStart } from '../../../actors/protocols/protocol-turns.ts';
import type { LangGraphThreads } from '../../../actors/protocols/langgraph/langgraph-threads.ts';
import { openFeed, type TurnFeed } from '../../../actors/protocols/turn-feed.ts';
import { isServiceError, ServiceError } from '../../../contracts/errors.ts';
import { LgRunRequest } from '../../../contracts/routes-langgraph.ts';
import type { StoredLangGraphThread } from '../../../contracts/stored-records.ts';
import { Compile } from 'typebox/compile';
import type { Message } from '../../../contracts/transcript.ts';
import type { HandlerContext, HandlerResult, HandlerTable } from '../../handler.ts';
import { SseWriter } from './sse-writer.ts';

const PROTOCOL = 'langgraph';
const ASSISTANT_ID = 'agent';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JOIN_DEADLINE_MS = 10 * 60_000;

type RunBody = Static<typeof LgRunRequest>;
/** The run body check, compiled on the first run request. */
let checkRunBody: ReturnType<typeof Compile<typeof LgRunRequest>> | undefined;

/** The run request body (the router validated it against LgRunRequest; this narrows it to that type). */
function runBody(ctx: HandlerContext): RunBody {
  const body = ctx.body;
  if (!(checkRunBody ??= Compile(LgRunRequest)).Check(body)) throw new ServiceError('BAD_REQUEST', 'invalid LangGraph run request');
  return body;
}

/** `limit` of a history request body, when it names a positive integer. */
function historyLimit(body: unknown): number {
  const limit = typeof body === 'object' && body !== null && 'limit' in body ? body.limit : undefined;
  return typeof limit === 'number' && Number.isInteger(limit) && limit > 0 ? limit : 10;
}
const iso = (ms: number) => new Date(ms).toISOString();

function assistant() {
  const at = iso(0);
  return {
    assistant_id: ASSISTANT_ID,
    graph_id: ASSISTANT_ID,
    name: 'warren',
    description: "The realm's default Warren agent: one session per thread, Warren's tools run server side",
    config: {},
    context: {},
    metadata: {},
    version: 1,
    created_at: at,
    updated_at: at,
  };
}

function humanText(m: unknown): string | null {
  if (typeof m === 'string') return m;
  if (!m || typeof m !== 'object') return null;
  const o = m as { type?: string; role?: string; content?: unknown };
  const who = o.type ?? o.role;
  if (who !== 'human' && who !== 'user') return null;
  if (typeof o.content === 'string') return o.content;
  if (Array.isArray(o.content)) return o.content.map((p: { text?: string }) => p.text ?? '').join('');
  return null;
}

/** The run's prompt: the human messages of `input.messages` (LangGraph clients send only the new ones). */
function promptOf(body: RunBody): string {
  if (body.command)
    throw new ServiceError('BAD_REQUEST', 'command (resume/goto) is not supported: Warren runs never pause at an interrupt');
  const msgs = (body.input as { messages?: unknown } | null | undefined)?.messages;
  const list = Array.isArray(msgs) ? msgs : msgs === undefined ? [] : [msgs];
  const texts = list.map(humanText).filter((t): t is string => t !== null);
  if (!texts.length) throw new ServiceError('BAD_REQUEST', 'input.messages must hold at least one human message');
  return texts.join('\n\n');
}

function modesOf(raw: RunBody['stream_mode'] | string | undefined): Set<StreamMode> {
  const list = raw == null ? ['values'] : Array.isArray(raw) ? raw : [raw];
  for (const m of list) {
    if (!STREAM_MODES.includes(m as StreamMode)) throw new ServiceError('BAD_REQUEST', `stream_mode '${m}' is not supported`);
  }
  return new Set(list as StreamMode[]);
}

function runStatus(rec: ProtocolTurnRecord): string {
  return { in_progress: 'running', completed: 'success', failed: 'error', cancelled: 'interrupted' }[rec.status];
}

function runObject(rec: ProtocolTurnRecord) {
  return {
    run_id: rec.id,
    thread_id: rec.session_id,
    assistant_id: ASSISTANT_ID,
    created_at: iso(rec.created_ms),
    updated_at: iso(rec.finished_ms ?? rec.created_ms),
    status: runStatus(rec),
    metadata: (rec.meta?.metadata as Record<string, unknown> | undefined) ?? {},
    kwargs: {},
    multitask_strategy: 'reject',
  };
}

/** Compares stream ids `<seq>:<n>`. */
function after(id: string, last: [number, number] | null): boolean {
  if (!last) return true;
  const [s, n] = id.split(':').map(Number);
  return s > last[0] || (s === last[0] && n > last[1]);
}

function parseLastEventId(ctx: HandlerContext): [number, number] | null {
  const raw = ctx.headers['last-event-id']?.trim();
  if (!raw) return null;
  const m = /^([0-9]{1,15}):([0-9]{1,6})$/.exec(raw);
  if (!m) throw new ServiceError('BAD_REQUEST', `invalid Last-Event-ID '${raw}': expected <seq>:<n>`);
  return [Number(m[1]), Number(m[2])];
}

export function langgraphHandlers(sup: SessionHost, turns: ProtocolTurns, threads: LangGraphThreads): HandlerTable {
  async function threadOf(
    id: string,
  ): Promise<{ record: StoredLangGraphThread | undefined; session: boolean; count: number; created_ms: number; updated_ms: number }> {
    if (!UUID.test(id)) throw new ServiceError('NOT_FOUND', `Thread not found: ${id}`, { thread_id: id });
    const { record, session } = await threads.lookup(id);
    if (!record && (!session || session.archived)) throw new ServiceError('NOT_FOUND', `Thread not found: ${id}`, { thread_id: id });
    const live = sup.peek(id)?.snapshotRecord;
    const s = live ?? session;
    return {
      record,
      session: !!s && !s.archived,
      count: s?.message_count ?? 0,
      created_ms: record?.created_ms ?? s!.created_at_ms,
      updated_ms: s?.updated_at_ms ?? record!.created_ms,
    };
  }

  async function rowsOf(id: string, exists: boolean): Promise<Message[]> {
    return exists ? (await historyPage(sup, id, { offset: 0 })).rows : [];
  }

  async function threadBody(id: string) {
    const t = await threadOf(id);
    const running = t.session && sup.peek(id)?.status().state === 'running';
    return {
      thread_id: id,
      created_at: iso(t.created_ms),
      updated_at: iso(t.updated_ms),
      metadata: t.record?.metadata ?? {},
      status: running ? 'busy' : 'idle',
      values: { messages: lcMessages(id, await rowsOf(id, t.session)) },
      interrupts: {},
      config: {},
    };
  }

  function stateOf(id: string, messages: LcMessage[], count: number, created: string) {
    return {
      values: { messages },
      next: [],
      tasks: [],
      metadata: { source: 'loop', step: count, thread_id: id },
      created_at: created,
      checkpoint: { thread_id: id, checkpoint_ns: '', checkpoint_id: `${id}:${count}`, checkpoint_map: null },
      parent_checkpoint: null,
      interrupts: [],
    };
  }

  /** States after each completed turn, newest first. */
  async function history(id: string, limit: number) {
    const t = await threadOf(id);
    const rows = await rowsOf(id, t.session);
    const states = [];
    for (let k = rows.length - 1; k >= 0 && states.length < limit; k--) {
      const ends = rows[k].role === 'block_assistant' && (k + 1 === rows.length || rows[k + 1].role === 'user');
      if (ends) states.push(stateOf(id, lcMessages(id, rows.slice(0, k + 1)), k + 1, rows[k].created_at));
    }
    return states;
  }

  async function startRun(ctx: HandlerContext, modes: Set<StreamMode>) {
    const id = ctx.params.thread_id;
    const body = runBody(ctx);
    if (body.assistant_id !== ASSISTANT_ID) throw new ServiceError('NOT_FOUND', `Assistant not found: ${body.assistant_id}`);
    const prompt = promptOf(body);
    const t = await threadOf(id);
    const runId = randomUUID();
    const start: TurnStart = t.session
      ? { kind: 'continue', sessionId: id, body: { session_id: id, prompt } }
      : { kind: 'create', sessionId: id, body: { prompt } };
    const prior = lcMessages(id, await rowsOf(id, t.session));
    const meta = { modes: [...modes], ...(body.metadata ? { metadata: body.metadata } : {}), prior_count: prior.length };
    const { record, feed } = await turns.start(PROTOCOL, runId, start, meta);
    return { record, prior, prompt, feed };
  }

  /** Streams a run's parts (from its start; after `last` when resuming). */
  async function streamRun(
    ctx: HandlerContext,
    rec: ProtocolTurnRecord,
    modes: Set<StreamMode>,
    prior: LcMessage[],
    prompt: string,
    last: [number, number] | null,
    live?: TurnFeed,
  ): Promise<HandlerResult> {
    const feed = live ?? (await openFeed(sup, rec.session_id, rec.first_seq - 1));
    const location = `/threads/${rec.session_id}/runs/${rec.id}`;
    ctx.res.onAbort(() => feed.stop());
    const sse = new SseWriter(ctx.res, 15_000, { 'content-location': location, location: `${location}/stream` });
    const mapper = new RunStreamMapper(rec.id, modes, prior);
    let n = 0;
    const write = async (seq: number, event: string, data: unknown) => {
      const id = `${seq}:${n++}`;
      if (after(id, last)) await sse.frame(data, { event, id });
    };
    try {
      await write(0, 'metadata', { run_id: rec.id, thread_id: rec.session_id, attempt: 1 });
      for (const part of mapper.begin({ type: 'human', id: `${rec.session_id}:${prior.length}`, content: prompt }))
        await write(0, part.event, part.data);
      while (!mapper.finished) {
        const e = await feed.next();
        if (!e) break;
        n = 0;
        for (const part of mapper.apply(e)) await write(e.seq, part.event, part.data);
      }
    } finally {
      feed.stop();
      sse.end();
    }
    return { streamed: true };
  }

  async function settled(rec: ProtocolTurnRecord, deadlineMs: number): Promise<ProtocolTurnRecord> {
    if (rec.status !== 'in_progress') return rec;
    const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
    const signal = AbortSignal.timeout(deadlineMs);
    try {
      for (let e = await feed.next(signal); e; e = await feed.next(signal)) {
        if (e.kind === 'run_completed' || e.kind === 'run_failed') break;
      }
    } finally {
      feed.stop();
    }
    return turns.get(PROTOCOL, rec.id);
  }

  async function finalValues(rec: ProtocolTurnRecord) {
    const done = await settled(rec, JOIN_DEADLINE_MS);
    if (done.status === 'failed')
      return { __error__: { error: done.error?.code ?? 'AgentError', message: done.error?.message ?? 'the run failed' } };
    return { messages: lcMessages(rec.session_id, await rowsOf(rec.session_id, true)) };
  }

  async function runOf(ctx: HandlerContext): Promise<ProtocolTurnRecord> {
    const rec = await turns.get(PROTOCOL, ctx.params.run_id);
    if (rec.session_id !== ctx.params.thread_id) throw new ServiceError('NOT_FOUND', `Run not found: ${ctx.params.run_id}`);
    return rec;
  }

  const runHeaders = (rec: ProtocolTurnRecord) => ({ 'content-location': `/threads/${rec.session_id}/runs/${rec.id}` });

  return {
    'protocols.langgraph.assistants.search': () => ({ status: 200, body: [assistant()] }),
    'protocols.langgraph.assistants.get': (ctx) => {
      if (ctx.params.assistant_id !== ASSISTANT_ID) throw new ServiceError('NOT_FOUND', `Assistant not found: ${ctx.params.assistant_id}`);
      return { status: 200, body: assistant() };
    },
    'protocols.langgraph.assistants.graph': (ctx) => {
      if (ctx.params.assistant_id !== ASSISTANT_ID) throw new ServiceError('NOT_FOUND', `Assistant not found: ${ctx.params.assistant_id}`);
      return {
        status: 200,
        body: {
          nodes: [
            { id: '__start__', type: 'schema', data: '__start__' },
            { id: 'agent', type: 'runnable', data: 'warren' },
            { id: '__end__', type: 'schema', data: '__end__' },
          ],
          edges: [
            { source: '__start__', target: 'agent' },
            { source: 'agent', target: '__end__' },
          ],
        },
      };
    },
    'protocols.langgraph.threads.create': async (ctx) => {
      const body = (ctx.body ?? {}) as { thread_id?: string; metadata?: Record<string, unknown> | null; if_exists?: string };
      const id = (body.thread_id ?? uuidv7()).toLowerCase();
      if (await threads.exists(id)) {
        if (body.if_exists !== 'do_nothing') throw new ServiceError('CONFLICT', `Thread already exists: ${id}`, { thread_id: id });
        return { status: 200, body: await threadBody(id) };
      }
      await threads.reserve(id, body.metadata ?? {}, Date.now());
      return { status: 200, body: await threadBody(id) };
    },
    'protocols.langgraph.threads.search': async (ctx) => {
      const body = (ctx.body ?? {}) as { limit?: number; offset?: number };
      const items = await listSessions(sup, { labels: [], offset: body.offset ?? 0, limit: Math.min(body.limit ?? 10, 100) });
      return {
        status: 200,
        body: items.map(({ record: s, running }) => ({
          thread_id: s.session_id,
          created_at: iso(s.created_at_ms),
          updated_at: iso(s.updated_at_ms),
          metadata: {},
          status: running ? 'busy' : 'idle',
          values: {},
          interrupts: {},
        })),
      };
    },
    'protocols.langgraph.threads.get': async (ctx) => ({ status: 200, body: await threadBody(ctx.params.thread_id) }),
    'protocols.langgraph.threads.state': async (ctx) => {
      const id = ctx.params.thread_id;
      const t = await threadOf(id);
      const rows = await rowsOf(id, t.session);
      return { status: 200, body: stateOf(id, lcMessages(id, rows), rows.length, iso(t.updated_ms)) };
    },
    'protocols.langgraph.threads.history': async (ctx) => {
      return { status: 200, body: await history(ctx.params.thread_id, historyLimit(ctx.body)) };
    },
    'protocols.langgraph.threads.historyGet': async (ctx) => ({
      status: 200,
      body: await history(ctx.params.thread_id, ctx.query.limit ? Math.max(1, Number(ctx.query.limit)) : 10),
    }),
    'protocols.langgraph.runs.create': async (ctx) => {
      const { record, feed } = await startRun(ctx, modesOf(runBody(ctx).stream_mode));
      feed?.stop();
      return { status: 200, body: runObject(record), headers: runHeaders(record) };
    },
    'protocols.langgraph.runs.wait': async (ctx) => {
      const { record, feed } = await startRun(ctx, new Set(['values']));
      feed?.stop();
      return { status: 200, body: await finalValues(record), headers: runHeaders(record) };
    },
    'protocols.langgraph.runs.stream': async (ctx) => {
      const modes = modesOf(runBody(ctx).stream_mode);
      const { record, prior, prompt, feed } = await startRun(ctx, modes);
      return streamRun(ctx, record, modes, prior, prompt, null, feed);
    },
    'protocols.langgraph.runs.get': async (ctx) => {
      const rec = await runOf(ctx);
      return { status: 200, body: runObject(rec) };
    },
    'protocols.langgraph.runs.cancel': async (ctx) => {
      let rec = await runOf(ctx);
      if (rec.status === 'in_progress') {
        try {
          turns.cancel(rec.id);
        } catch (err) {
          if (!isServiceError(err) || err.code !== 'NOT_FOUND') throw err;
        }
        if (ctx.query.wait === '1' || ctx.query.wait === 'true') rec = await settled(rec, JOIN_DEADLINE_MS);
      }
      return { status: 200, body: runObject(rec) };
    },
    'protocols.langgraph.runs.join': async (ctx) => ({ status: 200, body: await finalValues(await runOf(ctx)) }),
    'protocols.langgraph.runs.joinStream': async (ctx) => {
      const rec = await runOf(ctx);
      const modes = new Set(((rec.meta?.modes as StreamMode[] | undefined) ?? ['values']).filter((m) => STREAM_MODES.includes(m)));
      const priorCount = Number(rec.meta?.prior_count ?? 0);
      // The messages before the run (its prompt is the first row the run added).
      const rows = await rowsOf(rec.session_id, true);
      const all = lcMessages(rec.session_id, rows);
      const prior = all.slice(0, priorCount);
      const prompt = all[priorCount]?.content ?? '';
      return streamRun(ctx, rec, modes, prior, prompt, parseLastEventId(ctx));
    },
  };
}
