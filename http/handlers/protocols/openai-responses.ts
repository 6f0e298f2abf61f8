// http/handlers/protocols/openai-responses.ts: the OpenAI Responses API over Warren sessions.
// POST /v1/responses runs one Warren turn: a new session, or (previous_response_id) the next turn of the
// session that response ran in. Every response is a durable protocol-turn record (actors/protocols/
// protocol-turns.ts) keyed by its id, so GET /v1/responses/{id} works for any response, on any node, after
// a restart: the object is rebuilt from the turn's events by the one mapper (actors/protocols/openai/
// responses-map.ts) that also drives the stream. background: true answers once the turn's input is durable.
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { SessionHost } from '../../../actors/session/session-host.ts';
import { ResponseBuilder, type StreamEvent } from '../../../actors/protocols/openai/responses-map.ts';
import type { ProtocolTurnRecord, ProtocolTurns, TurnStart } from '../../../actors/protocols/protocol-turns.ts';
import { openFeed, type TurnFeed } from '../../../actors/protocols/turn-feed.ts';
import { isServiceError, ServiceError } from '../../../contracts/errors.ts';
import { PROTOCOL_ROUTE, type ResponseCreateRequest } from '../../../contracts/routes-protocols.ts';
import { on, type HandlerTable } from '../../handler.ts';
import { SseWriter } from './sse-writer.ts';

const PROTOCOL = 'openai.responses';
/** How long a cancel waits for the cancelled turn's terminal event before answering. */
const CANCEL_SETTLE_MS = 10_000;

type CreateBody = Static<typeof ResponseCreateRequest>;

function textOf(content: unknown, where: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw new ServiceError('BAD_REQUEST', `${where}: content must be a string or an array of input_text parts`);
  return content
    .map((part: { type?: string; text?: string }, i) => {
      if (part.type === 'input_text' || part.type === 'text' || part.type === 'output_text') return part.text ?? '';
      throw new ServiceError('BAD_REQUEST', `${where}.content[${i}]: part type '${String(part.type)}' is not supported (input_text only)`);
    })
    .join('');
}

/** The turn's prompt and the system text from `input` and `instructions`. */
function promptOf(body: CreateBody): { prompt: string; system?: string } {
  const system: string[] = body.instructions ? [body.instructions] : [];
  if (typeof body.input === 'string') return { prompt: body.input, ...(system.length ? { system: system.join('\n\n') } : {}) };
  const user: string[] = [];
  body.input.forEach((item, i) => {
    const type = item.type ?? 'message';
    if (type !== 'message') {
      throw new ServiceError(
        'BAD_REQUEST',
        `input[${i}]: item type '${type}' is not supported: Warren keeps the conversation server side (use previous_response_id) and runs its own tools`,
      );
    }
    const role = item.role ?? 'user';
    if (role === 'user') user.push(textOf(item.content, `input[${i}]`));
    else if (role === 'system' || role === 'developer') system.push(textOf(item.content, `input[${i}]`));
    else
      throw new ServiceError(
        'BAD_REQUEST',
        `input[${i}]: role '${role}' cannot be replayed into a Warren session; continue a conversation with previous_response_id`,
      );
  });
  if (user.length === 0) throw new ServiceError('BAD_REQUEST', 'input has no user message');
  return { prompt: user.join('\n\n'), ...(system.length ? { system: system.join('\n\n') } : {}) };
}

/** Folds the feed into `builder` until the turn's terminal event (or the feed ends), writing each stream event. */
async function pump(builder: ResponseBuilder, feed: TurnFeed, write?: (ev: StreamEvent) => Promise<void>, signal?: AbortSignal) {
  while (!builder.finished) {
    const e = await feed.next(signal);
    if (!e) return;
    for (const ev of builder.apply(e)) await write?.(ev);
  }
}

/** Folds what the feed already holds (no waiting): a response as it stands now. */
function drain(builder: ResponseBuilder, feed: TurnFeed): void {
  for (let e = feed.poll(); e && !builder.finished; e = feed.poll()) builder.apply(e);
}

export function openaiResponsesHandlers(sup: SessionHost, turns: ProtocolTurns): HandlerTable {
  async function builderFor(rec: ProtocolTurnRecord, wait: boolean): Promise<ResponseBuilder> {
    const builder = new ResponseBuilder(rec);
    const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
    try {
      if (wait) await pump(builder, feed, undefined, AbortSignal.timeout(CANCEL_SETTLE_MS));
      else drain(builder, feed);
    } finally {
      feed.stop();
    }
    const latest = builder.finished ? rec : await turns.get(PROTOCOL, rec.id);
    builder.settle(latest);
    // A memory realm's ring may have dropped the turn's events: the record still has the reply text.
    if (builder.output.length === 0 && latest.reply?.text) {
      builder.apply({ seq: rec.first_seq, kind: 'text_complete', timestamp_ms: rec.created_ms, payload: { content: latest.reply.text } });
    }
    return builder;
  }

  return {
    ...on(PROTOCOL_ROUTE.responsesCreate, async (ctx) => {
      const body = ctx.body;
      const fnTools = (body.tools ?? []).filter((t) => t.type === 'function' || t.type === 'custom');
      if (fnTools.length) {
        throw new ServiceError(
          'BAD_REQUEST',
          'client-side function tools are not supported: Warren runs its own tools server side (they appear as mcp_call output items)',
        );
      }
      const { prompt, system } = promptOf(body);
      const model = body.model && body.model !== 'warren' ? body.model : undefined;
      const id = `resp_${randomUUID().replace(/-/g, '')}`;
      const common = {
        prompt,
        ...(model ? { model } : {}),
        ...(body.max_output_tokens ? { max_tokens: body.max_output_tokens } : {}),
      };
      let start: TurnStart;
      if (body.previous_response_id) {
        const prev = await turns.get(PROTOCOL, body.previous_response_id);
        start = { kind: 'continue', sessionId: prev.session_id, body: { session_id: prev.session_id, ...common } };
      } else {
        // Warren extension field (the SDK's extra body): enable_builtins turns on Warren's built-in tools.
        const builtins = (body as { enable_builtins?: unknown }).enable_builtins;
        start = {
          kind: 'create',
          body: {
            ...common,
            ...(system ? { system_prompt: system } : {}),
            ...(typeof builtins === 'boolean' ? { enable_builtins: builtins } : {}),
          },
        };
      }
      const meta = {
        ...(body.model ? { model: body.model } : {}),
        ...(body.instructions ? { instructions: body.instructions } : {}),
        ...(body.previous_response_id ? { previous_response_id: body.previous_response_id } : {}),
        ...(body.background ? { background: true } : {}),
        ...(body.metadata ? { metadata: body.metadata } : {}),
        ...(body.max_output_tokens ? { max_output_tokens: body.max_output_tokens } : {}),
      };
      const { record, feed: live } = await turns.start(PROTOCOL, id, start, meta);
      const builder = new ResponseBuilder(record);
      if (body.stream) {
        const feed = live ?? (await openFeed(sup, record.session_id, record.first_seq - 1));
        const sse = new SseWriter(ctx.res);
        const gone = new AbortController();
        ctx.res.onAbort(() => gone.abort());
        try {
          for (const ev of builder.start()) await sse.frame(ev, { event: ev.type });
          await pump(builder, feed, (ev) => sse.frame(ev, { event: ev.type }), gone.signal);
        } finally {
          feed.stop();
          sse.end();
        }
        return { streamed: true };
      }
      if (body.background) {
        live?.stop();
        return { status: 200, body: builder.response() };
      }
      const feed = live ?? (await openFeed(sup, record.session_id, record.first_seq - 1));
      try {
        await pump(builder, feed);
      } finally {
        feed.stop();
      }
      builder.settle(await turns.get(PROTOCOL, id));
      return { status: 200, body: builder.response() };
    }),
    ...on(PROTOCOL_ROUTE.responsesGet, async (ctx) => {
      const rec = await turns.get(PROTOCOL, ctx.params.response_id);
      if (ctx.query.stream === 'true') {
        // Replays the response's stream events after `starting_after` (a sequence_number), then goes live.
        const after = ctx.query.starting_after === undefined ? -1 : Number(ctx.query.starting_after);
        const builder = new ResponseBuilder(rec);
        const feed = await openFeed(sup, rec.session_id, rec.first_seq - 1);
        const sse = new SseWriter(ctx.res);
        const gone = new AbortController();
        ctx.res.onAbort(() => gone.abort());
        const write = async (ev: StreamEvent) => {
          if ((ev.sequence_number as number) > after) await sse.frame(ev, { event: ev.type });
        };
        try {
          for (const ev of builder.start()) await write(ev);
          await pump(builder, feed, write, gone.signal);
        } finally {
          feed.stop();
          sse.end();
        }
        return { streamed: true };
      }
      return { status: 200, body: (await builderFor(rec, false)).response() };
    }),
    ...on(PROTOCOL_ROUTE.responsesCancel, async (ctx) => {
      const rec = await turns.get(PROTOCOL, ctx.params.response_id);
      if (rec.status === 'in_progress') {
        try {
          turns.cancel(rec.id);
        } catch (err) {
          // Not running on this node (or already gone): the record tells the truth below.
          if (!isServiceError(err) || err.code !== 'NOT_FOUND') throw err;
        }
        return { status: 200, body: (await builderFor(rec, true)).response() };
      }
      return { status: 200, body: (await builderFor(rec, false)).response() };
    }),
  };
}
