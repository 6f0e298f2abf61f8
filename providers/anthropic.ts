// providers/anthropic.ts: the Anthropic Messages API adapter (POST {base}/v1/messages, stream:true).
// Maps our transcript to Messages content blocks and decodes the SSE stream (message_start,
// content_block_*, message_delta, message_stop, ping, error). Built by providers/registry.ts.
import type { EventSourceMessage } from 'eventsource-parser';
import type { AssistantBlock, Message, StopReason, ProviderUsage } from '../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from './provider.ts';
import { servedBy } from './provider.ts';
import { missingApiKey, statusFailure, streamFailure } from './errors.ts';
import { count, contentParts, parseData, parseToolArgs, systemText } from './transcript-map.ts';
import { authHeaders, createWireCaller, endpointUrl, type AdapterOptions, type StreamDecoder } from './wire-call.ts';

export const ANTHROPIC_DEFAULT_BASE_URL = 'https://api.anthropic.com';
const ANTHROPIC_VERSION = '2023-06-01';
const P = 'anthropic';

type Json = Record<string, unknown>;
interface WireMessage {
  role: 'user' | 'assistant';
  content: Json[];
}

/** Creates the Anthropic adapter. A missing apiKey fails each call with PROVIDER_ERROR. */
export function createAnthropicProvider(opts: AdapterOptions = {}): Provider {
  const caller = createWireCaller('anthropic', opts);
  const url = endpointUrl(opts.baseUrl ?? ANTHROPIC_DEFAULT_BASE_URL, 'v1', 'messages');
  const missingKey = (model: string) => missingApiKey(P, model, opts.apiKeyEnv ?? 'ANTHROPIC_API_KEY');
  return {
    name: 'anthropic',
    preflight: (model) => (opts.apiKey ? undefined : missingKey(model)),
    async call(req, onEvent, onRetry) {
      if (!opts.apiKey) throw missingKey(req.model);
      return caller.call({
        model: req.model,
        url,
        signal: req.signal,
        onEvent,
        onRetry,
        body: anthropicBodyJson(req),
        headers: { ...authHeaders(opts, opts.apiKey, { 'x-api-key': opts.apiKey }), 'anthropic-version': ANTHROPIC_VERSION },
        decoder: (emit) => anthropicDecoder(req.model, emit),
      });
    },
    close: () => caller.close(),
  };
}

/** @internal The Messages request body for `req`. */
export function anthropicBody(req: ProviderRequest): Json {
  const body: Json = { model: req.model, max_tokens: req.max_tokens, stream: true, messages: anthropicMessages(req) };
  const system = systemText(req);
  if (system) body.system = system;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.input_schema }));
  }
  if (req.json_schema) body.output_config = { format: { type: 'json_schema', schema: req.json_schema.schema } };
  return body;
}

/**
 * Wire form of each transcript row, remembered per row object (committed rows are never changed in
 * place); with the session's last request text (lastRequest) a continue maps and serialises only its
 * new rows.
 */
const wireOfRow = new WeakMap<Message, WireMessage | null>();
const jsonOfSchema = new WeakMap<object, string>();

function wireRow(m: Message): WireMessage | null {
  let w = wireOfRow.get(m);
  if (w !== undefined) return w;
  w = null;
  if (m.role === 'user') {
    w = {
      role: 'user',
      content: contentParts(m.content).map((p) =>
        p.kind === 'text'
          ? { type: 'text', text: p.text }
          : { type: 'image', source: { type: 'base64', media_type: p.media_type, data: p.data } },
      ),
    };
  } else if (m.role === 'block_assistant') {
    const content: Json[] = [];
    for (const b of m.blocks) {
      if (b.block_type === 'text' && b.data.text !== '') content.push({ type: 'text', text: b.data.text });
      if (b.block_type === 'tool_use') content.push({ type: 'tool_use', id: b.data.id, name: b.data.name, input: b.data.args ?? {} });
      // Reasoning blocks are dropped: replaying thinking needs the vendor signature we do not keep.
    }
    w = { role: 'assistant', content };
  } else if (m.role === 'tool_results') {
    w = {
      role: 'user',
      content: m.results.map((r) => {
        const block: Json = { type: 'tool_result', tool_use_id: r.tool_use_id, content: r.content };
        if (r.is_error) block.is_error = true;
        return block;
      }),
    };
  }
  if (w && w.content.length === 0) w = null;
  wireOfRow.set(m, w);
  return w;
}

function anthropicMessages(req: Pick<ProviderRequest, 'messages'>): WireMessage[] {
  const out: WireMessage[] = [];
  // Consecutive same-role turns are merged (into a new message: the remembered ones stay as they are),
  // so tool results and a following user text share one user message with the tool_result blocks
  // first, as the API requires.
  for (const m of req.messages) {
    const w = wireRow(m);
    if (!w) continue;
    const prev = out[out.length - 1];
    if (prev && prev.role === w.role) out[out.length - 1] = { role: w.role, content: prev.content.concat(w.content) };
    else out.push(w);
  }
  return out;
}

/**
 * The JSON text of the last request's messages, by the session's first row: the next request of the
 * session (the same rows plus new ones) appends only the new rows' text to it.
 */
const lastRequest = new WeakMap<Message, { rows: Message[]; json: string; lastRole: WireMessage['role'] | null }>();

/** The wire messages of `rows`, joined as JSON text (no brackets). */
function messagesJson(rows: Message[]): string {
  if (rows.length === 0) return '';
  const prior = lastRequest.get(rows[0]);
  let start = 0;
  let json = '';
  let lastRole: WireMessage['role'] | null = null;
  if (prior && prior.rows.length <= rows.length) {
    let same = true;
    for (let i = prior.rows.length - 1; i >= 0 && same; i--) same = prior.rows[i] === rows[i];
    // Reused only when the first new row does not merge into the last message of the prefix.
    const next = prior.rows.length < rows.length ? firstWire(rows, prior.rows.length) : null;
    if (same && (next === null || next.role !== prior.lastRole)) {
      start = prior.rows.length;
      json = prior.json;
      lastRole = prior.lastRole;
    }
  }
  const tail = anthropicMessages({ messages: start ? rows.slice(start) : rows });
  if (tail.length) {
    const text = tail.map(wireJson).join(',');
    json = json ? `${json},${text}` : text;
    lastRole = tail[tail.length - 1].role;
  }
  lastRequest.set(rows[0], { rows: rows.slice(), json, lastRole });
  return json;
}

function firstWire(rows: Message[], from: number): WireMessage | null {
  for (let i = from; i < rows.length; i++) {
    const w = wireRow(rows[i]);
    if (w) return w;
  }
  return null;
}

/** Not remembered per row: the session's last request text (lastRequest) already holds it, once. */
function wireJson(w: WireMessage): string {
  return JSON.stringify(w);
}

function schemaJson(schema: object): string {
  let text = jsonOfSchema.get(schema);
  if (text === undefined) {
    text = JSON.stringify(schema);
    jsonOfSchema.set(schema, text);
  }
  return text;
}

const jsonOfTool = new WeakMap<object, string>();

function toolJson(t: ProviderRequest['tools'][number]): string {
  let text = jsonOfTool.get(t);
  if (text === undefined) {
    const head = JSON.stringify(t.description === undefined ? { name: t.name } : { name: t.name, description: t.description });
    text = t.input_schema === undefined ? head : `${head.slice(0, -1)},"input_schema":${schemaJson(t.input_schema)}}`;
    jsonOfTool.set(t, text);
  }
  return text;
}

/**
 * @internal The request body as JSON text, equal to JSON.stringify(anthropicBody(req)) but built from
 * the remembered text of each row and tool schema.
 */
export function anthropicBodyJson(req: ProviderRequest): string {
  const parts = [`{"model":${JSON.stringify(req.model)}`];
  if (req.max_tokens !== undefined) parts.push(`"max_tokens":${JSON.stringify(req.max_tokens)}`);
  parts.push('"stream":true', `"messages":[${messagesJson(req.messages)}]`);
  const system = systemText(req);
  if (system) parts.push(`"system":${JSON.stringify(system)}`);
  if (req.tools.length > 0) {
    parts.push(`"tools":[${req.tools.map(toolJson).join(',')}]`);
  }
  if (req.json_schema) parts.push(`"output_config":${JSON.stringify({ format: { type: 'json_schema', schema: req.json_schema.schema } })}`);
  return `${parts.join(',')}}`;
}

const STOP: Record<string, StopReason> = {
  end_turn: 'end_turn',
  tool_use: 'tool_use',
  max_tokens: 'max_tokens',
  stop_sequence: 'stop_sequence',
  refusal: 'content_filter',
  pause_turn: 'end_turn',
  model_context_window_exceeded: 'max_tokens',
};

/** Anthropic stream error types → the HTTP status they stand for. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

type Slot = { type: 'text' | 'thinking'; text: string } | { type: 'tool_use'; id: string; name: string; json: string };

/** @internal Decodes one Messages SSE stream. */
function anthropicDecoder(model: string, emit: (e: StreamEvent) => void): StreamDecoder<ProviderResponse> {
  const slots = new Map<number, Slot>();
  const usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  let stop: StopReason = 'end_turn';
  let done = false;
  let served = '';
  let replyId = '';

  const readUsage = (u: unknown): void => {
    if (!u || typeof u !== 'object') return;
    const x = u as Json;
    if (x.input_tokens !== undefined) usage.input_tokens = count(x.input_tokens);
    if (x.output_tokens !== undefined) usage.output_tokens = count(x.output_tokens);
    if (x.cache_creation_input_tokens !== undefined) usage.cache_creation_tokens = count(x.cache_creation_input_tokens);
    if (x.cache_read_input_tokens !== undefined) usage.cache_read_tokens = count(x.cache_read_input_tokens);
  };

  return {
    onEvent(ev: EventSourceMessage) {
      const d = parseData(P, model, ev.data);
      switch (d.type) {
        case 'message_start': {
          const m = (d.message ?? {}) as Json;
          readUsage(m.usage);
          if (typeof m.model === 'string') served = m.model;
          if (typeof m.id === 'string') replyId = m.id;
          break;
        }
        case 'content_block_start': {
          const b = (d.content_block ?? {}) as Json;
          const index = Number(d.index);
          if (b.type === 'text') slots.set(index, { type: 'text', text: String(b.text ?? '') });
          else if (b.type === 'thinking') slots.set(index, { type: 'thinking', text: String(b.thinking ?? '') });
          else if (b.type === 'tool_use') slots.set(index, { type: 'tool_use', id: String(b.id), name: String(b.name), json: '' });
          break;
        }
        case 'content_block_delta': {
          const slot = slots.get(Number(d.index));
          const delta = (d.delta ?? {}) as Json;
          if (delta.type === 'text_delta' && slot?.type === 'text') {
            slot.text += String(delta.text);
            emit({ type: 'text_delta', delta: String(delta.text) });
          } else if (delta.type === 'thinking_delta' && slot?.type === 'thinking') {
            slot.text += String(delta.thinking);
            emit({ type: 'reasoning_delta', delta: String(delta.thinking) });
          } else if (delta.type === 'input_json_delta' && slot?.type === 'tool_use') {
            slot.json += String(delta.partial_json);
          }
          break;
        }
        case 'message_delta':
          stop = STOP[String((d.delta as Json | undefined)?.stop_reason)] ?? stop;
          readUsage(d.usage);
          break;
        case 'message_stop':
          done = true;
          break;
        case 'error': {
          const e = (d.error ?? {}) as Json;
          throw statusFailure(P, model, ERROR_STATUS[String(e.type)] ?? 500, String(e.message ?? e.type ?? 'stream error'));
        }
        default: // ping, content_block_stop and future event types carry nothing we need.
      }
    },
    finish() {
      if (!done) throw streamFailure(P, model, 'ended before message_stop');
      const blocks: AssistantBlock[] = [];
      for (const [, s] of [...slots].sort((a, b) => a[0] - b[0])) {
        if (s.type === 'thinking') blocks.push({ block_type: 'reasoning', data: { text: s.text } });
        else if (s.type === 'text' && s.text !== '') blocks.push({ block_type: 'text', data: { text: s.text } });
        else if (s.type === 'tool_use')
          blocks.push({ block_type: 'tool_use', data: { id: s.id, name: s.name, args: parseToolArgs(P, model, s.json) } });
      }
      return { blocks, stop_reason: stop, usage, ...servedBy(served, replyId) };
    },
  };
}
