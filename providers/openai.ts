// providers/openai.ts: the OpenAI Responses API adapter (POST {base}/v1/responses, stream:true,
// store:false). Maps our transcript to input items (messages, function_call, function_call_output)
// and decodes the response.* SSE events. Built by providers/registry.ts.
import type { EventSourceMessage } from 'eventsource-parser';
import type { AssistantBlock, StopReason, ProviderUsage } from '../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from './provider.ts';
import { servedBy } from './provider.ts';
import { missingApiKey, statusFailure, streamFailure } from './errors.ts';
import { count, contentParts, parseData, parseToolArgs, systemText } from './transcript-map.ts';
import { authHeaders, createWireCaller, endpointUrl, type AdapterOptions, type StreamDecoder } from './wire-call.ts';

export const OPENAI_DEFAULT_BASE_URL = 'https://api.openai.com';
const P = 'openai';

type Json = Record<string, unknown>;

/** Creates the OpenAI Responses adapter. A missing apiKey fails each call with PROVIDER_ERROR. */
export function createOpenAIProvider(opts: AdapterOptions = {}): Provider {
  const caller = createWireCaller('openai', opts);
  const url = endpointUrl(opts.baseUrl ?? OPENAI_DEFAULT_BASE_URL, 'v1', 'responses');
  const missingKey = (model: string) => missingApiKey(P, model, opts.apiKeyEnv ?? 'OPENAI_API_KEY');
  return {
    name: 'openai',
    preflight: (model) => (opts.apiKey ? undefined : missingKey(model)),
    async call(req, onEvent, onRetry) {
      if (!opts.apiKey) throw missingKey(req.model);
      return caller.call({
        model: req.model,
        url,
        signal: req.signal,
        onEvent,
        onRetry,
        body: openaiBody(req),
        headers: authHeaders(opts, opts.apiKey, { authorization: `Bearer ${opts.apiKey}` }),
        decoder: (emit) => openaiDecoder(req.model, emit),
      });
    },
    close: () => caller.close(),
  };
}

/** @internal The Responses request body for `req`. */
function openaiBody(req: ProviderRequest): Json {
  const body: Json = { model: req.model, input: inputItems(req), stream: true, store: false, max_output_tokens: req.max_tokens };
  const system = systemText(req);
  if (system) body.instructions = system;
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      name: t.name,
      description: t.description,
      parameters: t.input_schema,
      strict: false,
    }));
  }
  if (req.json_schema) {
    const { name, schema, strict } = req.json_schema;
    body.text = { format: { type: 'json_schema', name, schema, strict } };
  }
  return body;
}

function inputItems(req: ProviderRequest): Json[] {
  const items: Json[] = [];
  for (const m of req.messages) {
    if (m.role === 'user') {
      const content = contentParts(m.content).map((p) =>
        p.kind === 'text'
          ? { type: 'input_text', text: p.text }
          : { type: 'input_image', image_url: `data:${p.media_type};base64,${p.data}` },
      );
      items.push({ type: 'message', role: 'user', content });
    } else if (m.role === 'block_assistant') {
      for (const b of m.blocks) {
        if (b.block_type === 'text' && b.data.text !== '') items.push({ type: 'message', role: 'assistant', content: b.data.text });
        if (b.block_type === 'tool_use') {
          items.push({ type: 'function_call', call_id: b.data.id, name: b.data.name, arguments: JSON.stringify(b.data.args ?? {}) });
        }
        // Reasoning items are not replayed: with store:false they need encrypted content we do not keep.
      }
    } else if (m.role === 'tool_results') {
      for (const r of m.results) items.push({ type: 'function_call_output', call_id: r.tool_use_id, output: r.content });
    }
  }
  return items;
}

/** Responses error codes → the HTTP status they stand for (unknown codes count as server errors). */
function errorStatus(code: unknown): number {
  switch (code) {
    case 'rate_limit_exceeded':
      return 429;
    case 'insufficient_quota':
      return 402;
    case 'invalid_api_key':
      return 401;
    case 'invalid_prompt':
    case 'context_length_exceeded':
    case 'invalid_request_error':
      return 400;
    default:
      return 500;
  }
}

type TextItem = { type: 'message' | 'reasoning'; text: string };
type Item = TextItem | { type: 'function_call'; call_id: string; name: string; args: string };

/** @internal Decodes one Responses SSE stream. */
function openaiDecoder(model: string, emit: (e: StreamEvent) => void): StreamDecoder<ProviderResponse> {
  const items = new Map<number, Item>();
  const usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  let stop: StopReason = 'end_turn';
  let done = false;

  const itemAt = (index: unknown, type: TextItem['type']): TextItem => {
    const i = Number(index);
    const found = items.get(i);
    if (found && found.type !== 'function_call') return found;
    const item: TextItem = { type, text: '' };
    items.set(i, item);
    return item;
  };
  const setFunctionCall = (index: unknown, it: Json): void => {
    const prev = items.get(Number(index));
    const args = typeof it.arguments === 'string' && it.arguments !== '' ? it.arguments : prev?.type === 'function_call' ? prev.args : '';
    items.set(Number(index), { type: 'function_call', call_id: String(it.call_id ?? it.id), name: String(it.name), args });
  };
  let served = '';
  let replyId = '';
  const complete = (r: Json): void => {
    if (typeof r.model === 'string') served = r.model;
    if (typeof r.id === 'string') replyId = r.id;
    const u = (r.usage ?? {}) as Json;
    usage.input_tokens = count(u.input_tokens);
    usage.output_tokens = count(u.output_tokens);
    const cached = (u.input_tokens_details as Json | undefined)?.cached_tokens;
    if (typeof cached === 'number') usage.cache_read_tokens = count(cached);
    done = true;
  };

  return {
    onEvent(ev: EventSourceMessage) {
      const d = parseData(P, model, ev.data);
      switch (d.type) {
        case 'response.output_item.added':
        case 'response.output_item.done': {
          const it = (d.item ?? {}) as Json;
          if (it.type === 'function_call') setFunctionCall(d.output_index, it);
          else if (it.type === 'message' || it.type === 'reasoning') itemAt(d.output_index, it.type);
          break;
        }
        case 'response.output_text.delta': {
          const delta = String(d.delta ?? '');
          itemAt(d.output_index, 'message').text += delta;
          emit({ type: 'text_delta', delta });
          break;
        }
        case 'response.reasoning_summary_text.delta':
        case 'response.reasoning_text.delta': {
          const delta = String(d.delta ?? '');
          itemAt(d.output_index, 'reasoning').text += delta;
          emit({ type: 'reasoning_delta', delta });
          break;
        }
        case 'response.function_call_arguments.delta': {
          const item = items.get(Number(d.output_index));
          if (item?.type === 'function_call') item.args += String(d.delta ?? '');
          break;
        }
        case 'response.function_call_arguments.done': {
          const item = items.get(Number(d.output_index));
          if (item?.type === 'function_call' && typeof d.arguments === 'string') item.args = d.arguments;
          break;
        }
        case 'response.completed':
          complete((d.response ?? {}) as Json);
          break;
        case 'response.incomplete': {
          const r = (d.response ?? {}) as Json;
          const reason = (r.incomplete_details as Json | undefined)?.reason;
          stop = reason === 'content_filter' ? 'content_filter' : 'max_tokens';
          complete(r);
          break;
        }
        case 'response.failed': {
          const e = (((d.response ?? {}) as Json).error ?? {}) as Json;
          throw statusFailure(P, model, errorStatus(e.code), String(e.message ?? 'response failed'));
        }
        case 'error': {
          const e = (d.error && typeof d.error === 'object' ? d.error : d) as Json;
          throw statusFailure(P, model, errorStatus(e.code), String(e.message ?? 'stream error'));
        }
        default: // response.created/in_progress, content_part.*, *.done text events: nothing new.
      }
    },
    finish() {
      if (!done) throw streamFailure(P, model, 'ended before response.completed');
      const blocks: AssistantBlock[] = [];
      for (const [, it] of [...items].sort((a, b) => a[0] - b[0])) {
        if (it.type === 'reasoning' && it.text !== '') blocks.push({ block_type: 'reasoning', data: { text: it.text } });
        else if (it.type === 'message' && it.text !== '') blocks.push({ block_type: 'text', data: { text: it.text } });
        else if (it.type === 'function_call') {
          blocks.push({ block_type: 'tool_use', data: { id: it.call_id, name: it.name, args: parseToolArgs(P, model, it.args) } });
        }
      }
      if (stop === 'end_turn' && blocks.some((b) => b.block_type === 'tool_use')) stop = 'tool_use';
      return { blocks, stop_reason: stop, usage, ...servedBy(served, replyId) };
    },
  };
}
