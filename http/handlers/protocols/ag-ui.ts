// http/handlers/protocols/ag-ui.ts: AG-UI over Warren sessions. POST /ag-ui/{agent} takes a RunAgentInput
// and streams AG-UI events (SSE, `id: <seq>:<n>`). threadId is the session id (a new thread's first run
// creates the session with that id), runId names the turn (a durable protocol-turn record). The same POST
// again with the same runId and a Last-Event-ID header does not start a new turn: it resumes that run's
// stream after that id, from the ledger and then live (AG-UI's own HTTP binding has no resume).
import type { Static } from 'typebox';
import { AgUiMapper } from '../../../actors/protocols/ag-ui/ag-ui-map.ts';
import type { ProtocolTurnRecord, ProtocolTurns, TurnStart } from '../../../actors/protocols/protocol-turns.ts';
import { openFeed, type TurnFeed } from '../../../actors/protocols/turn-feed.ts';
import type { SessionHost } from '../../../actors/session/session-host.ts';
import { isServiceError, ServiceError } from '../../../contracts/errors.ts';
import { PROTOCOL_ROUTE, type RunAgentInput } from '../../../contracts/routes-protocols.ts';
import { on, type HandlerContext, type HandlerTable } from '../../handler.ts';
import { SseWriter } from './sse-writer.ts';

const PROTOCOL = 'ag-ui';
const AG_UI_AGENT = 'default';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function lastUserText(input: Static<typeof RunAgentInput>): string {
  const users = input.messages.filter((m) => m.role === 'user');
  const last = users.at(-1);
  if (!last) throw new ServiceError('BAD_REQUEST', 'messages has no user message');
  const c = last.content;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) {
    return c
      .map((part: { type?: string; text?: string }) => {
        if (part.type === 'text') return part.text ?? '';
        throw new ServiceError('BAD_REQUEST', `user content part '${String(part.type)}' is not supported (text only)`);
      })
      .join('');
  }
  throw new ServiceError('BAD_REQUEST', 'the last user message has no content');
}

function parseLastEventId(ctx: HandlerContext): [number, number] | null {
  const raw = ctx.headers['last-event-id']?.trim();
  if (!raw) return null;
  const m = /^([0-9]{1,15}):([0-9]{1,6})$/.exec(raw);
  if (!m) throw new ServiceError('BAD_REQUEST', `invalid Last-Event-ID '${raw}': expected <seq>:<n>`);
  return [Number(m[1]), Number(m[2])];
}

export function agUiHandlers(sup: SessionHost, turns: ProtocolTurns): HandlerTable {
  async function existing(id: string): Promise<ProtocolTurnRecord | null> {
    try {
      return await turns.get(PROTOCOL, id);
    } catch (err) {
      if (isServiceError(err) && err.code === 'NOT_FOUND') return null;
      throw err;
    }
  }

  return on(PROTOCOL_ROUTE.agUiRun, async (ctx) => {
    if (ctx.params.agent !== AG_UI_AGENT)
      throw new ServiceError('NOT_FOUND', `Agent not found: ${ctx.params.agent}`, { agent: ctx.params.agent });
    const input = ctx.body;
    if (!UUID.test(input.threadId)) throw new ServiceError('BAD_REQUEST', 'threadId must be a UUID (it is the Warren session id)');
    if ((input.tools ?? []).length) {
      throw new ServiceError(
        'BAD_REQUEST',
        'frontend tools are not supported: Warren runs its own tools server side (reported as TOOL_CALL_* and TOOL_CALL_RESULT)',
      );
    }
    const threadId = input.threadId.toLowerCase();
    const id = `agui_${input.runId}`;
    const last = parseLastEventId(ctx);
    let rec = await existing(id);
    let live: TurnFeed | undefined;
    if (rec) {
      if (rec.session_id !== threadId) throw new ServiceError('CONFLICT', `runId ${input.runId} belongs to another thread`);
      if (!last) throw new ServiceError('CONFLICT', `run ${input.runId} already exists: resume it with Last-Event-ID`);
    } else {
      if (last) throw new ServiceError('NOT_FOUND', `run ${input.runId} not found: nothing to resume`);
      const prompt = lastUserText(input);
      const session = await sup.deps.store.getSession(threadId);
      const start: TurnStart =
        session && !session.archived
          ? { kind: 'continue', sessionId: threadId, body: { session_id: threadId, prompt } }
          : { kind: 'create', sessionId: threadId, body: { prompt } };
      const started = await turns.start(PROTOCOL, id, start);
      rec = started.record;
      live = started.feed;
    }
    const feed = live ?? (await openFeed(sup, rec.session_id, rec.first_seq - 1));
    ctx.res.onAbort(() => feed.stop());
    const sse = new SseWriter(ctx.res);
    const mapper = new AgUiMapper(threadId, input.runId);
    let n = 0;
    const write = async (seq: number, ev: object) => {
      const k = n++;
      if (!last || seq > last[0] || (seq === last[0] && k > last[1])) await sse.frame(ev, { id: `${seq}:${k}` });
    };
    try {
      // RUN_STARTED opens every stream, a resumed one too (AG-UI clients require it first); the events
      // after Last-Event-ID follow.
      for (const ev of mapper.start()) await sse.frame(ev, { id: `0:${n++}` });
      while (!mapper.finished) {
        const e = await feed.next();
        if (!e) break;
        n = 0;
        for (const ev of mapper.apply(e)) await write(e.seq, ev);
      }
    } finally {
      feed.stop();
      sse.end();
    }
    return { streamed: true };
  });
}
