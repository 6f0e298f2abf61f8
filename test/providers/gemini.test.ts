import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { GEMINI_CALL_ID_PREFIX, createGeminiProvider } from '../../providers/gemini.ts';
import { adapterSuite, baseRequest, harness, run, type AdapterSuiteSpec } from './adapter-suite.ts';
import { frame, jsonError, sseReply } from './fake-vendor.ts';
import { toolRoundTripRequest } from './fixtures.ts';

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}, candidate: Record<string, unknown> = {}): string =>
  frame({ candidates: [{ content: { role: 'model', parts }, index: 0, ...candidate }], responseId: 'r-1', modelVersion: 'm', ...extra });
const usageMetadata = {
  promptTokenCount: 30,
  candidatesTokenCount: 8,
  thoughtsTokenCount: 2,
  cachedContentTokenCount: 10,
  totalTokenCount: 40,
};

const spec: AdapterSuiteSpec = {
  name: 'gemini',
  envVar: 'GEMINI_API_KEY',
  create: (o) => createGeminiProvider(o),
  format: {
    head: (chunks) => chunks.map((text) => chunk([{ text }])),
    tail: () => [chunk([{ text: '' }], { usageMetadata }, { finishReason: 'STOP' })],
    errorBody: (status) => ({
      error: { code: status, message: `status ${status}`, status: status === 401 ? 'UNAUTHENTICATED' : 'INTERNAL' },
    }),
  },
};

adapterSuite(spec);

describe('gemini adapter: streamGenerateContent wire format', () => {
  it('sends systemInstruction, contents with functionCall/functionResponse, tools and the key header', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    await run(h.provider, toolRoundTripRequest());
    const [req] = h.vendor.requests;
    assert.equal(req.url, '/v1beta/models/m-1:streamGenerateContent?alt=sse');
    assert.equal(req.headers['x-goog-api-key'], 'test-key');
    assert.deepEqual(req.body, {
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: { maxOutputTokens: 1000 },
      contents: [
        { role: 'user', parts: [{ text: 'what is the weather?' }] },
        {
          role: 'model',
          parts: [
            { text: 'checking' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'skip_thought_signature_validator' },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { output: 'sunny' } } },
            { text: 'thanks' },
            { inlineData: { mimeType: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            { name: 'get_weather', description: 'Weather for a city', parametersJsonSchema: toolRoundTripRequest().tools[0].input_schema },
          ],
        },
      ],
    });
  });

  it('asks for JSON through responseMimeType and responseJsonSchema', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['{}']), ...spec.format.tail()])]);
    const schema = { type: 'object' };
    await run(h.provider, baseRequest({ json_schema: { name: 'o', schema, strict: true } }));
    assert.deepEqual(h.vendor.requests[0].body.generationConfig, {
      maxOutputTokens: 256,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
  });

  it('maps text, usage (thoughts count as output, cached as cache reads) and STOP', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['a', 'b']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.deepEqual(out.result, {
      blocks: [{ block_type: 'text', data: { text: 'ab' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 30, output_tokens: 10, cache_read_tokens: 10 },
      model: 'm',
      id: 'r-1',
    });
  });

  it('returns function calls with stable synthesized ids, thoughts as reasoning, and tool_use', async (t) => {
    const frames = [
      chunk([{ text: 'plan', thought: true }]),
      chunk([{ functionCall: { name: 'get_weather', args: { city: 'Lima' } }, thoughtSignature: 'c2ln' }]),
      chunk([{ functionCall: { name: 'get_weather', args: { city: 'Quito' } } }], { usageMetadata }, { finishReason: 'STOP' }),
    ];
    const h = await harness(t, spec, [sseReply(frames)]);
    const first = await run(h.provider);
    const second = await run(h.provider);
    assert.deepEqual(first.events, [{ type: 'reasoning_delta', delta: 'plan' }]);
    const calls = first.result!.blocks.filter((b) => b.block_type === 'tool_use');
    assert.equal(calls.length, 2);
    const ids = calls.map((b) => (b.block_type === 'tool_use' ? b.data.id : ''));
    assert.ok(ids.every((id) => id.startsWith(GEMINI_CALL_ID_PREFIX)));
    assert.notEqual(ids[0], ids[1]);
    assert.deepEqual(second.result, first.result, 'the same reply yields the same ids');
    assert.deepEqual(first.result!.blocks[0], { block_type: 'reasoning', data: { text: 'plan' } });
    assert.equal(first.result!.stop_reason, 'tool_use');
  });

  it('maps MAX_TOKENS and SAFETY finish reasons', async (t) => {
    const h = await harness(t, spec, [
      sseReply([chunk([{ text: 'x' }], {}, { finishReason: 'MAX_TOKENS' })]),
      sseReply([chunk([], {}, { finishReason: 'SAFETY' })]),
    ]);
    assert.equal((await run(h.provider)).result?.stop_reason, 'max_tokens');
    assert.equal((await run(h.provider)).result?.stop_reason, 'content_filter');
  });

  it('treats 400 API_KEY_INVALID as an auth failure (PROVIDER_ERROR)', async (t) => {
    const h = await harness(t, spec, [
      jsonError(400, {
        error: {
          code: 400,
          message: 'API key not valid.',
          status: 'INVALID_ARGUMENT',
          details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'API_KEY_INVALID' }],
        },
      }),
    ]);
    const out = await run(h.provider);
    assert.equal(out.error?.code, 'PROVIDER_ERROR');
  });

  it('honours RetryInfo.retryDelay in a 429 body', async (t) => {
    const h = await harness(t, spec, [
      jsonError(429, {
        error: {
          code: 429,
          message: 'quota',
          status: 'RESOURCE_EXHAUSTED',
          details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' }],
        },
      }),
      sseReply([...spec.format.head(['ok']), ...spec.format.tail()]),
    ]);
    const out = await run(h.provider);
    assert.equal(out.retries[0].plan.retry_after_hint_ms, 7000);
    assert.deepEqual(h.sleeps, [7000]);
  });
});
