// providers/gemini.ts: the Gemini adapter (POST {base}/v1beta/models/{model}:streamGenerateContent
// ?alt=sse). Maps our transcript to contents (user/model parts, functionCall, functionResponse) and
// decodes the GenerateContentResponse chunks. Built by providers/registry.ts.
import { createHash } from 'node:crypto';
import type { EventSourceMessage } from 'eventsource-parser';
import type { AssistantBlock, StopReason, ProviderUsage } from '../contracts/transcript.ts';
import type { Provider, ProviderRequest, ProviderResponse, StreamEvent } from './provider.ts';
import { servedBy } from './provider.ts';
import { missingApiKey, parseJsonObject, statusFailure, streamFailure } from './errors.ts';
import { count, contentParts, parseData, pushMerged, systemText, toolNamesById } from './transcript-map.ts';
import { authHeaders, createWireCaller, endpointUrl, type AdapterOptions, type StreamDecoder } from './wire-call.ts';

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';
const P = 'gemini';
/**
 * Gemini 3 rejects a replayed functionCall without its thought signature. We do not store vendor
 * signatures, so replayed calls carry Google's documented placeholder that skips the check.
 */
const SKIP_SIGNATURE = 'skip_thought_signature_validator';
/** Prefix of the ids we synthesise for function calls (Gemini's calls usually have none). */
export const GEMINI_CALL_ID_PREFIX = 'gemini_call_';

type Json = Record<string, unknown>;
interface Content {
  role: 'user' | 'model';
  parts: Json[];
}

/** Creates the Gemini adapter. A missing apiKey fails each call with PROVIDER_ERROR. */
export function createGeminiProvider(opts: AdapterOptions = {}): Provider {
  const caller = createWireCaller('gemini', opts);
  const base = opts.baseUrl ?? GEMINI_DEFAULT_BASE_URL;
  const missingKey = (model: string) => missingApiKey(P, model, opts.apiKeyEnv ?? 'GEMINI_API_KEY');
  return {
    name: 'gemini',
    preflight: (model) => (opts.apiKey ? undefined : missingKey(model)),
    async call(req, onEvent, onRetry) {
      if (!opts.apiKey) throw missingKey(req.model);
      const url = endpointUrl(base, 'v1beta', `models/${encodeURIComponent(req.model)}:streamGenerateContent?alt=sse`);
      return caller.call({
        model: req.model,
        url,
        signal: req.signal,
        onEvent,
        onRetry,
        body: geminiBody(req),
        headers: authHeaders(opts, opts.apiKey, { 'x-goog-api-key': opts.apiKey }),
        decoder: (emit) => geminiDecoder(req.model, emit),
        mapStatus: invalidKeyAsAuth,
      });
    },
    close: () => caller.close(),
  };
}

/** Gemini answers a bad API key with 400 + reason API_KEY_INVALID; treat that as an auth failure. */
function invalidKeyAsAuth(status: number, bodyText: string): number {
  if (status !== 400) return status;
  const details = (parseJsonObject(bodyText)?.error as Json | undefined)?.details;
  const invalidKey = Array.isArray(details) && details.some((d) => (d as Json | null)?.reason === 'API_KEY_INVALID');
  return invalidKey ? 401 : status;
}

/** @internal The streamGenerateContent request body for `req`. */
function geminiBody(req: ProviderRequest): Json {
  const generationConfig: Json = { maxOutputTokens: req.max_tokens };
  if (req.json_schema) {
    generationConfig.responseMimeType = 'application/json';
    generationConfig.responseJsonSchema = req.json_schema.schema;
  }
  const body: Json = { contents: geminiContents(req), generationConfig };
  const system = systemText(req);
  if (system) body.systemInstruction = { parts: [{ text: system }] };
  if (req.tools.length > 0) {
    // parametersJsonSchema takes full JSON Schema (tool schemas from MCP servers often use
    // keywords that the OpenAPI-subset `parameters` field rejects).
    body.tools = [
      { functionDeclarations: req.tools.map((t) => ({ name: t.name, description: t.description, parametersJsonSchema: t.input_schema })) },
    ];
  }
  return body;
}

function geminiContents(req: ProviderRequest): Content[] {
  const names = toolNamesById(req.messages);
  const out: Content[] = [];
  const add = (c: Content): void => {
    if (c.parts.length > 0) pushMerged(out, c, (prev, next) => prev.parts.push(...next.parts));
  };
  for (const m of req.messages) {
    if (m.role === 'user') {
      add({
        role: 'user',
        parts: contentParts(m.content).map((p) =>
          p.kind === 'text' ? { text: p.text } : { inlineData: { mimeType: p.media_type, data: p.data } },
        ),
      });
    } else if (m.role === 'block_assistant') {
      const parts: Json[] = [];
      let signed = false;
      for (const b of m.blocks) {
        if (b.block_type === 'text' && b.data.text !== '') parts.push({ text: b.data.text });
        if (b.block_type === 'tool_use') {
          const part: Json = { functionCall: { name: b.data.name, args: b.data.args ?? {} } };
          // Only the first call of a step carries a signature (parallel calls follow unsigned).
          if (!signed) part.thoughtSignature = SKIP_SIGNATURE;
          signed = true;
          parts.push(part);
        }
      }
      add({ role: 'model', parts });
    } else if (m.role === 'tool_results') {
      add({
        role: 'user',
        parts: m.results.map((r) => ({
          functionResponse: {
            name: names.get(r.tool_use_id) ?? r.tool_use_id,
            response: r.is_error ? { error: r.content } : { output: r.content },
          },
        })),
      });
    }
  }
  return out;
}

const STOP: Record<string, StopReason> = {
  STOP: 'end_turn',
  MAX_TOKENS: 'max_tokens',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'content_filter',
};

type Piece =
  { kind: 'text'; text: string } | { kind: 'thought'; text: string } | { kind: 'call'; name: string; args: unknown; id?: string };

/** A deterministic id for the n-th call of a reply: same reply, same id (so retries and replays agree). */
function syntheticId(responseId: string, n: number, name: string, args: unknown): string {
  const h = createHash('sha256')
    .update(`${responseId}\u0000${n}\u0000${name}\u0000${JSON.stringify(args)}`)
    .digest('hex');
  return `${GEMINI_CALL_ID_PREFIX}${h.slice(0, 20)}`;
}

/** @internal Decodes one streamGenerateContent SSE stream. */
function geminiDecoder(model: string, emit: (e: StreamEvent) => void): StreamDecoder<ProviderResponse> {
  const pieces: Piece[] = [];
  const usage: ProviderUsage = { input_tokens: 0, output_tokens: 0 };
  let finish: string | undefined;
  let blocked = false;
  let responseId = '';
  let served = '';

  const appendText = (kind: 'text' | 'thought', text: string): void => {
    const last = pieces[pieces.length - 1];
    if (last && last.kind !== 'call' && last.kind === kind) last.text += text;
    else pieces.push({ kind, text });
    emit({ type: kind === 'text' ? 'text_delta' : 'reasoning_delta', delta: text });
  };

  return {
    onEvent(ev: EventSourceMessage) {
      const d = parseData(P, model, ev.data);
      if (d.error && typeof d.error === 'object') {
        const e = d.error as Json;
        throw statusFailure(P, model, typeof e.code === 'number' ? e.code : 500, String(e.message ?? 'stream error'));
      }
      if (typeof d.responseId === 'string') responseId = d.responseId;
      if (typeof d.modelVersion === 'string') served = d.modelVersion;
      if ((d.promptFeedback as Json | undefined)?.blockReason) blocked = true;
      const cand = Array.isArray(d.candidates) ? (d.candidates[0] as Json | undefined) : undefined;
      const parts = (cand?.content as Json | undefined)?.parts;
      if (Array.isArray(parts)) {
        for (const part of parts as Json[]) {
          if (typeof part.text === 'string' && part.text !== '') appendText(part.thought === true ? 'thought' : 'text', part.text);
          const fc = part.functionCall as Json | undefined;
          if (fc)
            pieces.push({ kind: 'call', name: String(fc.name), args: fc.args ?? {}, id: typeof fc.id === 'string' ? fc.id : undefined });
        }
      }
      if (typeof cand?.finishReason === 'string') finish = cand.finishReason;
      const u = d.usageMetadata as Json | undefined;
      if (u) {
        usage.input_tokens = count(u.promptTokenCount);
        usage.output_tokens = count(u.candidatesTokenCount) + count(u.thoughtsTokenCount);
        if (u.cachedContentTokenCount !== undefined) usage.cache_read_tokens = count(u.cachedContentTokenCount);
      }
    },
    finish() {
      // Gemini has no end-of-stream event: the chunk carrying finishReason (or a prompt block) is it.
      if (finish === undefined && !blocked) throw streamFailure(P, model, 'ended without a finishReason');
      const blocks: AssistantBlock[] = [];
      let calls = 0;
      for (const p of pieces) {
        if (p.kind === 'thought') blocks.push({ block_type: 'reasoning', data: { text: p.text } });
        else if (p.kind === 'text') blocks.push({ block_type: 'text', data: { text: p.text } });
        else
          blocks.push({
            block_type: 'tool_use',
            data: { id: p.id ?? syntheticId(responseId, calls, p.name, p.args), name: p.name, args: p.args },
          });
        if (p.kind === 'call') calls++;
      }
      let stop: StopReason = blocked ? 'content_filter' : (STOP[finish ?? ''] ?? 'end_turn');
      if (stop === 'end_turn' && calls > 0) stop = 'tool_use';
      return { blocks, stop_reason: stop, usage, ...servedBy(served, responseId) };
    },
  };
}
