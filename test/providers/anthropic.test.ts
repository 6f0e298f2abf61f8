import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { anthropicBody, anthropicBodyJson, createAnthropicProvider } from '../../providers/anthropic.ts';
import type { Message } from '../../contracts/transcript.ts';
import type { ToolSpec } from '../../contracts/tool.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { adapterSuite, baseRequest, harness, run, type AdapterSuiteSpec } from './adapter-suite.ts';
import { frame, jsonError, sseReply } from './fake-vendor.ts';
import { toolRoundTripRequest } from './fixtures.ts';

const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);

const messageStart = ev({
  type: 'message_start',
  message: {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'm',
    content: [],
    stop_reason: null,
    usage: { input_tokens: 25, output_tokens: 1, cache_creation_input_tokens: 3, cache_read_input_tokens: 7 },
  },
});
const stopFrames = (reason: string, outputTokens: number): string[] => [
  ev({ type: 'message_delta', delta: { stop_reason: reason, stop_sequence: null }, usage: { output_tokens: outputTokens } }),
  ev({ type: 'message_stop' }),
];

const spec: AdapterSuiteSpec = {
  name: 'anthropic',
  envVar: 'ANTHROPIC_API_KEY',
  create: (o) => createAnthropicProvider(o),
  format: {
    head: (chunks) => [
      messageStart,
      ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      ev({ type: 'ping' }),
      ...chunks.map((text) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    ],
    tail: () => [ev({ type: 'content_block_stop', index: 0 }), ...stopFrames('end_turn', 9)],
    errorBody: (status) => ({
      type: 'error',
      error: { type: status === 401 ? 'authentication_error' : 'api_error', message: `status ${status}` },
    }),
  },
};

adapterSuite(spec);

describe('anthropic adapter: Messages wire format', () => {
  it('sends the system prompt, merged messages, tool results, tools and auth headers', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    await run(h.provider, toolRoundTripRequest());
    const [req] = h.vendor.requests;
    assert.equal(req.url, '/v1/messages');
    assert.equal(req.headers['x-api-key'], 'test-key');
    assert.equal(req.headers['anthropic-version'], '2023-06-01');
    assert.deepEqual(req.body, {
      model: 'm-1',
      max_tokens: 1000,
      stream: true,
      system: 'be brief',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'what is the weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'checking' },
            { type: 'tool_use', id: 'tu_1', name: 'get_weather', input: { city: 'Paris' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'tu_1', content: 'sunny' },
            { type: 'text', text: 'thanks' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
          ],
        },
      ],
      tools: [{ name: 'get_weather', description: 'Weather for a city', input_schema: toolRoundTripRequest().tools[0].input_schema }],
    });
  });

  it('asks for JSON through output_config.format', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['{}']), ...spec.format.tail()])]);
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    await run(h.provider, baseRequest({ json_schema: { name: 'out', schema, strict: true } }));
    assert.deepEqual(h.vendor.requests[0].body.output_config, { format: { type: 'json_schema', schema } });
  });

  it('maps text, usage with cache counts and the stop reason', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['a', 'b']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.deepEqual(out.result, {
      blocks: [{ block_type: 'text', data: { text: 'ab' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 25, output_tokens: 9, cache_creation_tokens: 3, cache_read_tokens: 7 },
      model: 'm',
      id: 'msg_1',
    });
  });

  it('assembles thinking and a tool call from input_json_delta fragments', async (t) => {
    const h = await harness(t, spec, [
      sseReply([
        messageStart,
        ev({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
        ev({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'let me look' } }),
        ev({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
        ev({ type: 'content_block_stop', index: 0 }),
        ev({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: 'toolu_9', name: 'get_weather', input: {} } }),
        ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
        ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"ci' } }),
        ev({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: 'ty": "Oslo"}' } }),
        ev({ type: 'content_block_stop', index: 1 }),
        ...stopFrames('tool_use', 30),
      ]),
    ]);
    const out = await run(h.provider);
    assert.deepEqual(out.events, [{ type: 'reasoning_delta', delta: 'let me look' }]);
    assert.deepEqual(out.result?.blocks, [
      { block_type: 'reasoning', data: { text: 'let me look' } },
      { block_type: 'tool_use', data: { id: 'toolu_9', name: 'get_weather', args: { city: 'Oslo' } } },
    ]);
    assert.equal(out.result?.stop_reason, 'tool_use');
  });

  it('retries an overloaded error event sent before any delta', async (t) => {
    const overloaded = sseReply([messageStart, ev({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })]);
    const h = await harness(t, spec, [overloaded, sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.equal(out.error, undefined);
    assert.equal(out.retries[0].failure.kind, 'retryable_provider_error');
  });

  it('treats 529 overloaded as retryable', async (t) => {
    const h = await harness(t, spec, [
      jsonError(529, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      sseReply([...spec.format.head(['ok']), ...spec.format.tail()]),
    ]);
    const out = await run(h.provider);
    assert.equal(out.error, undefined);
    assert.equal(h.vendor.requests.length, 2);
  });
});

describe('anthropicBodyJson', () => {
  it('is JSON.stringify(anthropicBody(req)) for every row kind, merges, tools, system and schema, also when rows repeat', () => {
    const at = '2026-01-01T00:00:00.000Z';
    const rows: Message[] = [
      { role: 'system', content: 'sys row', created_at: at },
      { role: 'user', content: 'héllo "x"', created_at: at },
      {
        role: 'block_assistant',
        blocks: [
          { block_type: 'reasoning', data: { text: 'hm' } },
          { block_type: 'text', data: { text: 'calling' } },
          { block_type: 'tool_use', data: { id: 'c1', name: 'echo', args: { a: 1 } } },
        ],
        stop_reason: 'tool_use',
        created_at: at,
      },
      {
        role: 'tool_results',
        results: [
          { tool_use_id: 'c1', content: 'ok' },
          { tool_use_id: 'c2', content: 'bad', is_error: true },
        ],
        created_at: at,
      },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'and an image' },
          { type: 'image', source: 'inline', media_type: 'image/png', data: 'AAAA' },
        ],
        created_at: at,
      },
      { role: 'block_assistant', blocks: [{ block_type: 'text', data: { text: '' } }], stop_reason: 'end_turn', created_at: at },
      { role: 'user', content: 'last', created_at: at },
    ] as Message[];
    const schema = { type: 'object', properties: { q: { type: 'string' } } };
    const signal = new AbortController().signal;
    const requests: ProviderRequest[] = [
      { model: 'm', messages: rows.slice(1, 2), tools: [], max_tokens: 10, signal },
      {
        model: 'm',
        system: 'top',
        messages: rows,
        tools: [
          { name: 'echo', description: 'Echo ✓', input_schema: schema },
          { name: 'two', input_schema: schema } as unknown as ToolSpec,
        ],
        max_tokens: 100,
        signal,
      },
      { model: 'm', messages: rows, tools: [], max_tokens: 5, json_schema: { name: 'out', schema, strict: true }, signal },
    ];
    for (let round = 0; round < 2; round++) {
      for (const req of requests) assert.equal(anthropicBodyJson(req), JSON.stringify(anthropicBody(req)));
    }
    // A session's requests grow by rows: the text of the previous request is extended, except where the
    // first new row merges into its last message (tool results then a user row), or a row changed.
    const grown = (n: number, list = rows): ProviderRequest => ({
      model: 'm',
      messages: list.slice(1, n),
      tools: [],
      max_tokens: 1,
      signal,
    });
    for (const n of [2, 3, 4, 5, 6, 7, 8, 2, 8, 4, 5])
      assert.equal(anthropicBodyJson(grown(n)), JSON.stringify(anthropicBody(grown(n))), `${n} rows`);
    const edited = rows.map((r, i) => (i === 4 ? { ...r, content: 'changed' } : r)) as Message[];
    assert.equal(anthropicBodyJson(grown(8, edited)), JSON.stringify(anthropicBody(grown(8, edited))));
  });
});
