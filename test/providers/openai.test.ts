import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createOpenAIProvider } from '../../providers/openai.ts';
import { adapterSuite, baseRequest, harness, run, type AdapterSuiteSpec } from './adapter-suite.ts';
import { frame, sseReply } from './fake-vendor.ts';
import { toolRoundTripRequest } from './fixtures.ts';

const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);
const created = ev({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } });
const completed = (usage: Record<string, unknown>, status = 'completed'): string =>
  ev({ type: 'response.completed', response: { id: 'resp_1', status, usage } });
const usage = { input_tokens: 40, input_tokens_details: { cached_tokens: 16 }, output_tokens: 12, total_tokens: 52 };

const spec: AdapterSuiteSpec = {
  name: 'openai',
  envVar: 'OPENAI_API_KEY',
  create: (o) => createOpenAIProvider(o),
  format: {
    head: (chunks) => [
      created,
      ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } }),
      ev({ type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } }),
      ...chunks.map((delta) => ev({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta })),
    ],
    tail: () => [
      ev({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text: '' }),
      ev({ type: 'response.output_item.done', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant' } }),
      completed(usage),
    ],
    errorBody: (status) => ({ error: { message: `status ${status}`, type: 'server_error', code: null } }),
  },
};

adapterSuite(spec);

describe('openai adapter: Responses wire format', () => {
  it('sends instructions, input items with the tool round-trip, tools, store:false and Bearer auth', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    await run(h.provider, toolRoundTripRequest());
    const [req] = h.vendor.requests;
    assert.equal(req.url, '/v1/responses');
    assert.equal(req.headers.authorization, 'Bearer test-key');
    assert.deepEqual(req.body, {
      model: 'm-1',
      stream: true,
      store: false,
      max_output_tokens: 1000,
      instructions: 'be brief',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'what is the weather?' }] },
        { type: 'message', role: 'assistant', content: 'checking' },
        { type: 'function_call', call_id: 'tu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'tu_1', output: 'sunny' },
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'thanks' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
          ],
        },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: toolRoundTripRequest().tools[0].input_schema,
          strict: false,
        },
      ],
    });
  });

  it('asks for JSON through text.format', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['{}']), ...spec.format.tail()])]);
    const schema = { type: 'object' };
    await run(h.provider, baseRequest({ json_schema: { name: 'output', schema, strict: false } }));
    assert.deepEqual(h.vendor.requests[0].body.text, { format: { type: 'json_schema', name: 'output', schema, strict: false } });
  });

  it('maps text, usage with cached tokens and end_turn', async (t) => {
    const h = await harness(t, spec, [sseReply([...spec.format.head(['x', 'y']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.deepEqual(out.result, {
      blocks: [{ block_type: 'text', data: { text: 'xy' } }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 40, output_tokens: 12, cache_read_tokens: 16 },
      id: 'resp_1',
    });
  });

  it('assembles function-call arguments from fragments and reports tool_use', async (t) => {
    const h = await harness(t, spec, [
      sseReply([
        created,
        ev({ type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } }),
        ev({ type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'thinking' }),
        ev({
          type: 'response.output_item.added',
          output_index: 1,
          item: { id: 'fc_1', type: 'function_call', call_id: 'call_A', name: 'get_weather', arguments: '' },
        }),
        ev({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '{"city":' }),
        ev({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 1, delta: '"Rome"}' }),
        ev({
          type: 'response.output_item.done',
          output_index: 1,
          item: { id: 'fc_1', type: 'function_call', call_id: 'call_A', name: 'get_weather' },
        }),
        completed(usage),
      ]),
    ]);
    const out = await run(h.provider);
    assert.deepEqual(out.events, [{ type: 'reasoning_delta', delta: 'thinking' }]);
    assert.deepEqual(out.result?.blocks, [
      { block_type: 'reasoning', data: { text: 'thinking' } },
      { block_type: 'tool_use', data: { id: 'call_A', name: 'get_weather', args: { city: 'Rome' } } },
    ]);
    assert.equal(out.result?.stop_reason, 'tool_use');
  });

  it('maps response.incomplete (max_output_tokens) to max_tokens', async (t) => {
    const h = await harness(t, spec, [
      sseReply([
        ...spec.format.head(['cut']),
        ev({ type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, usage } }),
      ]),
    ]);
    const out = await run(h.provider);
    assert.equal(out.result?.stop_reason, 'max_tokens');
  });

  it('retries a rate-limited response.failed sent before any delta', async (t) => {
    const failed = sseReply([
      created,
      ev({ type: 'response.failed', response: { status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } } }),
    ]);
    const h = await harness(t, spec, [failed, sseReply([...spec.format.head(['ok']), ...spec.format.tail()])]);
    const out = await run(h.provider);
    assert.equal(out.error, undefined);
    assert.equal(out.retries[0].failure.kind, 'rate_limited');
    assert.equal(out.retries[0].plan.rate_limit_floor_applied, true);
    assert.equal(out.retries[0].plan.selected_delay_ms, 30_000);
  });
});
