// providers/openai-compatible.ts: the Chat Completions adapter for OpenAI-compatible servers
// (self_hosted: Ollama, vLLM, llama.cpp; `other`). POST {base}/v1/chat/completions, stream:true with
// stream_options.include_usage. Built by providers/registry.ts.
import type { EventSourceMessage } from 'eventsource-parser';
import type { AssistantBlock, StopReason, ProviderUsage } from '../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from './provider.ts';
import { servedBy } from './provider.ts';
import type { ProviderName } from '../contracts/session.ts';
import { missingApiKey, statusFailure, streamFailure } from './errors.ts';
import { count, contentParts, parseData, parseToolArgs, systemText } from './transcript-map.ts';
import { authHeaders, createWireCaller, endpointUrl, type AdapterOptions, type StreamDecoder } from './wire-call.ts';

type Json = Record<string, unknown>;

export interface OpenAICompatibleOptions extends AdapterOptions {
  /**
   * Server root. `http://host:8000` and `http://host:11434/v1` both work: when the base already
   * ends in `/v1` only `/chat/completions` is appended (see endpointUrl). Required.
   */
  baseUrl: string;
  /** Name this adapter reports (and uses in errors); default 'self_hosted'. */
  name?: Extract<ProviderName, 'self_hosted' | 'other' | 'openai'>;
  /** When true, a missing apiKey fails the call (PROVIDER_ERROR naming apiKeyEnv). Default false. */
  requireApiKey?: boolean;
}

/** Creates a Chat Completions adapter. Without apiKey no Authorization header is sent. */
export function createOpenAICompatibleProvider(opts: OpenAICompatibleOptions): Provider {
  const name = opts.name ?? 'self_hosted';
  const caller = createWireCaller(name, opts);
  const url = endpointUrl(opts.baseUrl, 'v1', 'chat/completions');
  const preflight = (model: string) =>
    !opts.apiKey && opts.requireApiKey ? missingApiKey(name, model, opts.apiKeyEnv ?? 'SELF_HOSTED_API_KEY') : undefined;
  return {
    name,
    preflight,
    async call(req, onEvent, onRetry) {
      const problem = preflight(req.model);
      if (problem) throw problem;
      return caller.call({
        model: req.model,
        url,
        signal: req.signal,
        onEvent,
        onRetry,
        body: chatBodyJson(req),
        headers: opts.apiKey ? authHeaders(opts, opts.apiKey, { authorization: `Bearer ${opts.apiKey}` }) : {},
        decoder: (emit) => chatDecoder(name, req.model, emit),
      });
    },
    close: () => caller.close(),
  };
}

/** @internal The Chat Completions request body for `req`. */
export function chatBody(req: ProviderRequest): Json {
  const body: Json = {
    model: req.model,
    messages: chatMessages(req),
    stream: true,
    stream_options: { include_usage: true },
    max_tokens: req.max_tokens,
  };
  if (req.tools.length > 0) {
    body.tools = req.tools.map((t) => ({
      type: 'function',
      function: { name: t.name, description: t.description, parameters: t.input_schema },
    }));
  }
  if (req.json_schema) {
    const { name, schema, strict } = req.json_schema;
    body.response_format = { type: 'json_schema', json_schema: { name, schema, strict } };
  }
  return body;
}

const jsonOfTool = new WeakMap<object, string>();

/** A tool's Chat Completions declaration as JSON text, made once per tool spec object. */
function chatToolJson(t: ProviderRequest['tools'][number]): string {
  let text = jsonOfTool.get(t);
  if (text === undefined) {
    text = JSON.stringify({ type: 'function', function: { name: t.name, description: t.description, parameters: t.input_schema } });
    jsonOfTool.set(t, text);
  }
  return text;
}

/**
 * @internal The request body as JSON text: JSON.stringify(chatBody(req)) with the tool declarations
 * spliced in from their remembered text (a session's tools are the same objects turn after turn).
 */
export function chatBodyJson(req: ProviderRequest): string {
  if (req.tools.length === 0) return JSON.stringify(chatBody(req));
  const text = JSON.stringify(chatBody({ ...req, tools: [] }));
  return `${text.slice(0, -1)},"tools":[${req.tools.map(chatToolJson).join(',')}]}`;
}

function chatMessages(req: ProviderRequest): Json[] {
  const out: Json[] = [];
  const system = systemText(req);
  if (system) out.push({ role: 'system', content: system });
  for (const m of req.messages) {
    if (m.role === 'user') {
      const parts = contentParts(m.content);
      const content = parts.every((p) => p.kind === 'text')
        ? parts.map((p) => (p as { text: string }).text).join('')
        : parts.map((p) =>
            p.kind === 'text'
              ? { type: 'text', text: p.text }
              : { type: 'image_url', image_url: { url: `data:${p.media_type};base64,${p.data}` } },
          );
      out.push({ role: 'user', content });
    } else if (m.role === 'block_assistant') {
      const text = m.blocks.map((b) => (b.block_type === 'text' ? b.data.text : '')).join('');
      const calls = m.blocks.flatMap((b) =>
        b.block_type === 'tool_use'
          ? [{ id: b.data.id, type: 'function', function: { name: b.data.name, arguments: JSON.stringify(b.data.args ?? {}) } }]
          : [],
      );
      const msg: Json = { role: 'assistant', content: text === '' && calls.length > 0 ? null : text };
      if (calls.length > 0) msg.tool_calls = calls;
      out.push(msg);
    } else if (m.role === 'tool_results') {
      for (const r of m.results) out.push({ role: 'tool', tool_call_id: r.tool_use_id, content: r.content });
    }
  }
  return out;
}

const FINISH: Record<string, StopReason> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  function_call: 'tool_use',
  content_filter: 'content_filter',
};

interface Call {
  id: string;
  name: string;
  args: string;
}

/**
 * @internal Decodes one Chat Completions SSE stream. The stream is complete at `data: [DONE]`; a
 * body that ends after a finish_reason but without [DONE] is accepted too (some servers omit it).
 */
function chatDecoder(provider: string, model: string, emit: (e: StreamEvent) => void): StreamDecoder<ProviderResponse> {
  let text = '';
  let reasoning = '';
  const calls = new Map<number, Call>();
  const usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  let finish: string | undefined;
  let sawDone = false;
  let completionId = '';
  let served = '';

  return {
    onEvent(ev: EventSourceMessage) {
      if (ev.data.trim() === '[DONE]') {
        sawDone = true;
        return;
      }
      const d = parseData(provider, model, ev.data);
      if (d.error) {
        const e = (typeof d.error === 'object' ? d.error : { message: d.error }) as Json;
        const status = typeof e.code === 'number' ? e.code : typeof e.status === 'number' ? e.status : 500;
        throw statusFailure(provider, model, status, String(e.message ?? 'stream error'));
      }
      if (typeof d.id === 'string' && completionId === '') completionId = d.id;
      if (typeof d.model === 'string' && served === '') served = d.model;
      const u = d.usage as Json | undefined | null;
      if (u) {
        usage.input_tokens = count(u.prompt_tokens);
        usage.output_tokens = count(u.completion_tokens);
        const cached = (u.prompt_tokens_details as Json | undefined)?.cached_tokens;
        if (typeof cached === 'number') usage.cache_read_tokens = count(cached);
      }
      const choice = Array.isArray(d.choices) ? (d.choices[0] as Json | undefined) : undefined;
      if (!choice) return;
      const delta = (choice.delta ?? {}) as Json;
      if (typeof delta.content === 'string' && delta.content !== '') {
        text += delta.content;
        emit({ type: 'text_delta', delta: delta.content });
      }
      // vLLM/DeepSeek stream `reasoning_content`; Ollama/OpenRouter stream `reasoning`.
      const thought = typeof delta.reasoning_content === 'string' ? delta.reasoning_content : delta.reasoning;
      if (typeof thought === 'string' && thought !== '') {
        reasoning += thought;
        emit({ type: 'reasoning_delta', delta: thought });
      }
      if (Array.isArray(delta.tool_calls)) {
        for (const tc of delta.tool_calls as Json[]) {
          const index = typeof tc.index === 'number' ? tc.index : calls.size;
          const fn = (tc.function ?? {}) as Json;
          let call = calls.get(index);
          if (!call) calls.set(index, (call = { id: '', name: '', args: '' }));
          if (typeof tc.id === 'string' && tc.id !== '' && call.id === '') call.id = tc.id;
          if (typeof fn.name === 'string' && call.name === '') call.name = fn.name;
          if (typeof fn.arguments === 'string') call.args += fn.arguments;
          else if (fn.arguments && typeof fn.arguments === 'object') call.args = JSON.stringify(fn.arguments);
        }
      }
      if (typeof choice.finish_reason === 'string') finish = choice.finish_reason;
    },
    finish() {
      if (!sawDone && finish === undefined) throw streamFailure(provider, model, 'ended before [DONE]');
      const blocks: AssistantBlock[] = [];
      if (reasoning !== '') blocks.push({ block_type: 'reasoning', data: { text: reasoning } });
      if (text !== '') blocks.push({ block_type: 'text', data: { text } });
      for (const [index, c] of [...calls].sort((a, b) => a[0] - b[0])) {
        blocks.push({
          block_type: 'tool_use',
          data: {
            id: c.id || `call_${completionId ? `${completionId}_` : ''}${index}`,
            name: c.name,
            args: parseToolArgs(provider, model, c.args),
          },
        });
      }
      let stop = FINISH[finish ?? ''] ?? 'end_turn';
      if (stop === 'end_turn' && calls.size > 0) stop = 'tool_use';
      return { blocks, stop_reason: stop, usage, ...servedBy(served, completionId) };
    },
  };
}
