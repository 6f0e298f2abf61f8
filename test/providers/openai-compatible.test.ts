import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chatBody, chatBodyJson, createOpenAICompatibleProvider } from '../../providers/openai-compatible.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { adapterSuite, baseRequest, harness, run, type AdapterSuiteSpec } from './adapter-suite.ts';
import { frame, sseReply } from './fake-vendor.ts';
import { toolRoundTripRequest } from './fixtures.ts';

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  frame({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
const usageChunk = frame({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  choices: [],
  usage: { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25, prompt_tokens_details: { cached_tokens: 4 } },
});

const spec: AdapterSuiteSpec = {
  name: 'self_hosted',
  envVar: 'SELF_HOSTED_API_KEY',
  create: (o) => createOpenAICompatibleProvider({ ...o, requireApiKey: true }),
  format: {
    head: (chunks) => [chunk({ role: 'assistant', content: '' }), ...chunks.map((content) => chunk({ content }))],
    tail: () => [chunk({}, 'stop'), usageChunk, frame('[DONE]')],
    errorBody: (status) => ({ error: { message: `status ${status}`, type: 'server_error', code: null } }),
  },
};

adapterSuite(spec);

describe('openai-compatible adapter: Chat Completions wire format', () => {
  it('sends system/user/assistant(tool_calls)/tool messages, tools, include_usage and Bearer auth', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    await run(h.provider, toolRoundTripRequest());
    const [req] = h.vendor.requests;
    assert.equal(req.url, '/v1/chat/completions');
    assert.equal(req.headers.authorization, 'Bearer test-key');
    assert.deepEqual(req.body, {
      model: 'm-1',
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 1000,
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'what is the weather?' },
        {
          role: 'assistant',
          content: 'checking',
          tool_calls: [{ id: 'tu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'tu_1', content: 'sunny' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'thanks' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', description: 'Weather for a city', parameters: toolRoundTripRequest().tools[0].input_schema },
        },
      ],
    });
  });

  it('does not double /v1 for Ollama-style bases and sends no auth without a key', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    const ollama = createOpenAICompatibleProvider({ baseUrl: `${h.vendor.url}/v1/` });
    t.after(() => ollama.close?.());
    const out = await run(ollama);
    assert.equal(out.error, undefined);
    assert.equal(h.vendor.requests[0].url, '/v1/chat/completions');
    assert.equal(h.vendor.requests[0].headers.authorization, undefined);
  });

  it('asks for JSON through response_format', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['{}']), ...spec.format.tail()])]);
    const schema = { type: 'object' };
    await run(h.provider, baseRequest({ json_schema: { name: 'o', schema, strict: true } }));
    assert.deepEqual(h.vendor.requests[0].body.response_format, { type: 'json_schema', json_schema: { name: 'o', schema, strict: true } });
  });

  it('maps text, the final usage chunk and finish_reason', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['a', 'b']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.deepEqual(out.result, {
      blocks: [{ block_type: 'text', data: { text: 'ab' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 5, cache_read_tokens: 4 },
      model: 'm',
      id: 'chatcmpl-1',
    });
  });

  it('assembles parallel tool calls from indexed argument fragments', async (t) => {
    const h = await harness(t, spec, [
      sseReply([
        chunk({ role: 'assistant', reasoning_content: 'two cities' }),
        chunk({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
        chunk({
          tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Bern"}' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"Kyiv"}' } }] }),
        chunk({}, 'tool_calls'),
        usageChunk,
        frame('[DONE]'),
      ]),
    ]);
    const out = await run(h.provider);
    assert.deepEqual(out.events, [{ type: 'reasoning_delta', delta: 'two cities' }]);
    assert.deepEqual(out.result?.blocks, [
      { block_type: 'reasoning', data: { text: 'two cities' } },
      { block_type: 'tool_use', data: { id: 'call_a', name: 'get_weather', args: { city: 'Kyiv' } } },
      { block_type: 'tool_use', data: { id: 'call_b', name: 'get_weather', args: { city: 'Bern' } } },
    ]);
    assert.equal(out.result?.stop_reason, 'tool_use');
  });

  it('maps finish_reason length to max_tokens and accepts a stream without [DONE]', async (t) => {
    const h = await harness(t, spec, [sseReply([chunk({ content: 'x' }), chunk({}, 'length')])]);
    const out = await run(h.provider);
    assert.equal(out.result?.stop_reason, 'max_tokens');
    assert.equal(h.vendor.requests.length, 1);
  });
});

describe('chatBodyJson', () => {
  it('parses to chatBody(req): with and without tools, with a schema, and again with the same tool objects', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const signal = new AbortController().signal;
    const tools = [
      { name: 'echo', description: 'echoes "x"', input_schema: { type: 'object', properties: { a: { type: 'string' } } } },
      { name: 'now', description: 'the time', input_schema: { type: 'object' } },
    ];
    const messages = [{ role: 'user', content: 'héllo', created_at: at }] as ProviderRequest['messages'];
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    const requests: ProviderRequest[] = [
      { model: 'm', system: 'be brief', messages, tools: [], max_tokens: 10, signal },
      { model: 'm', messages, tools, max_tokens: 10, signal },
      { model: 'm', messages, tools, max_tokens: 7, json_schema: { name: 'out', schema, strict: true }, signal },
      { model: 'm2', messages, tools: tools.slice(1), max_tokens: 3, signal },
    ];
    for (const req of requests) assert.deepEqual(JSON.parse(chatBodyJson(req)), JSON.parse(JSON.stringify(chatBody(req))));
  });
});
