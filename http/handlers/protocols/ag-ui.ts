// http/handlers/protocols/ag-ui.ts: AG-UI over Warren sessions. POST /ag-ui/{agent} takes a RunAgentInput
// and streams AG-UI events (SSE, `id: <item>:<chars>`, a place in the run that does not depend on how the
// text was chunked, see ag-ui-map.ts). threadId is the session id (a new thread's first run
// creates the session with that id), runId names the turn (a durable protocol-turn record). The same POST
// again with the same runId and a Last-Event-ID header does not start a new turn: it resumes that run's
// stream after that id, from the ledger and then live (AG-UI's own HTTP binding has no resume).
import type { Static } from 'typebox';
import { AgUiMapper, formatPosition, isAfter, type Placed, type Position } from '../../../actors/protocols/ag-ui/ag-ui-map.ts';
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

function parseLastEventId(ctx: HandlerContext): Position | null {
  const raw = ctx.headers['last-event-id']?.trim();
  if (!raw) return null;
  const m = /^([0-9]{1,9}):([0-9]{1,12})$/.exec(raw);
  if (!m) throw new ServiceError('BAD_REQUEST', `invalid Last-Event-ID '${raw}': expected <item>:<chars>`);
  return { item: Number(m[1]), chars: Number(m[2]) };
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
    // On a resume, the message the client was inside when it dropped is opened again (same messageId)
    // before its rest: each AG-UI stream must be whole on its own.
    const started = new Set<string>();
    const write = async (p: Placed) => {
      if (last && !isAfter(p, last)) return;
      let ev = p.ev;
      if (last && p.item === last.item && ev.type === 'TEXT_MESSAGE_CONTENT') {
        // A frame of a replay after the commit spans the whole text: send only what follows the cut.
        const delta = String(ev.delta);
        const from = last.chars - (p.chars - delta.length);
        if (from > 0) ev = { ...ev, delta: delta.slice(from) };
      }
      const messageId = String(ev.messageId);
      if (ev.type === 'TEXT_MESSAGE_START') started.add(messageId);
      else if ((ev.type === 'TEXT_MESSAGE_CONTENT' || ev.type === 'TEXT_MESSAGE_END') && !started.has(messageId)) {
        started.add(messageId);
        await sse.frame({ type: 'TEXT_MESSAGE_START', messageId, role: 'assistant' }, { id: formatPosition(last ?? p) });
      }
      await sse.frame(ev, { id: formatPosition(p) });
    };
    try {
      // RUN_STARTED opens every stream, a resumed one too (AG-UI clients require it first); the events
      // after Last-Event-ID follow.
      for (const p of mapper.start()) await sse.frame(p.ev, { id: formatPosition(p) });
      while (!mapper.finished) {
        const e = await feed.next();
        if (!e) break;
        for (const p of mapper.apply(e)) await write(p);
      }
    } finally {
      feed.stop();
      sse.end();
    }
    return { streamed: true };
  });
}
