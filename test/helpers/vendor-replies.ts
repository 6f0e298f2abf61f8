// test/helpers/vendor-replies.ts: one plain text reply in each vendor's streaming wire format, for
// loopback fakes (test/providers/fake-vendor.ts) that the real server reaches through its base URLs.
import { frame, sseReply, type Responder } from '../providers/fake-vendor.ts';

export type Wire = 'anthropic' | 'openai' | 'gemini' | 'self_hosted';

const typed = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);

/** The SSE frames of a reply whose whole text is `text`. */
export function textFrames(wire: Wire, text: string): string[] {
  switch (wire) {
    case 'anthropic':
      return [
        typed({
          type: 'message_start',
          message: {
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'm',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 10, output_tokens: 1 },
          },
        }),
        typed({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
        typed({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
        typed({ type: 'content_block_stop', index: 0 }),
        typed({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
        typed({ type: 'message_stop' }),
      ];
    case 'openai':
      return [
        typed({ type: 'response.created', response: { id: 'resp_1', status: 'in_progress', output: [] } }),
        typed({
          type: 'response.output_item.added',
          output_index: 0,
          item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] },
        }),
        typed({ type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } }),
        typed({ type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: text }),
        typed({ type: 'response.output_text.done', item_id: 'msg_1', output_index: 0, content_index: 0, text }),
        typed({ type: 'response.output_item.done', output_index: 0, item: { id: 'msg_1', type: 'message', role: 'assistant' } }),
        typed({
          type: 'response.completed',
          response: { id: 'resp_1', status: 'completed', usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 } },
        }),
      ];
    case 'gemini':
      return [
        frame({ candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0 }], responseId: 'r-1', modelVersion: 'm' }),
        frame({
          candidates: [{ content: { role: 'model', parts: [{ text: '' }] }, index: 0, finishReason: 'STOP' }],
          usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
        }),
      ];
    case 'self_hosted': {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        frame({
          id: 'chatcmpl-1',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm',
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      return [
        chunk({ role: 'assistant', content: '' }),
        chunk({ content: text }),
        chunk({}, 'stop'),
        frame({
          id: 'chatcmpl-1',
          object: 'chat.completion.chunk',
          choices: [],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
        frame('[DONE]'),
      ];
    }
  }
}

/** A responder that answers `text`. */
export function textResponder(wire: Wire, text: string): Responder {
  return sseReply(textFrames(wire, text));
}

/** The SSE frames of a reply that is one tool call (`id` is the vendor's call id; Gemini synthesizes its own). */
export function toolCallFrames(wire: Wire, call: { id: string; name: string; args: Record<string, unknown> }): string[] {
  const args = JSON.stringify(call.args);
  switch (wire) {
    case 'anthropic':
      return [
        typed({
          type: 'message_start',
          message: {
            id: 'msg_t',
            type: 'message',
            role: 'assistant',
            model: 'm',
            content: [],
            stop_reason: null,
            usage: { input_tokens: 12, output_tokens: 1 },
          },
        }),
        typed({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } }),
        typed({ type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: args } }),
        typed({ type: 'content_block_stop', index: 0 }),
        typed({ type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 7 } }),
        typed({ type: 'message_stop' }),
      ];
    case 'openai':
      return [
        typed({ type: 'response.created', response: { id: 'resp_t', status: 'in_progress', output: [] } }),
        typed({
          type: 'response.output_item.added',
          output_index: 0,
          item: { id: 'fc_1', type: 'function_call', call_id: call.id, name: call.name, arguments: '' },
        }),
        typed({ type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 0, delta: args }),
        typed({
          type: 'response.output_item.done',
          output_index: 0,
          item: { id: 'fc_1', type: 'function_call', call_id: call.id, name: call.name, arguments: args },
        }),
        typed({
          type: 'response.completed',
          response: { id: 'resp_t', status: 'completed', usage: { input_tokens: 12, output_tokens: 7, total_tokens: 19 } },
        }),
      ];
    case 'gemini':
      return [
        frame({
          candidates: [
            { content: { role: 'model', parts: [{ functionCall: { name: call.name, args: call.args } }] }, index: 0, finishReason: 'STOP' },
          ],
          usageMetadata: { promptTokenCount: 12, candidatesTokenCount: 7, totalTokenCount: 19 },
          responseId: 'r-t',
          modelVersion: 'm',
        }),
      ];
    case 'self_hosted': {
      const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
        frame({
          id: 'chatcmpl-t',
          object: 'chat.completion.chunk',
          created: 1,
          model: 'm',
          choices: [{ index: 0, delta, finish_reason: finish }],
        });
      return [
        chunk({
          role: 'assistant',
          tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: args } }] }),
        chunk({}, 'tool_calls'),
        frame({
          id: 'chatcmpl-t',
          object: 'chat.completion.chunk',
          choices: [],
          usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
        }),
        frame('[DONE]'),
      ];
    }
  }
}

/** A responder that answers one tool call. */
export function toolCallResponder(wire: Wire, call: { id: string; name: string; args: Record<string, unknown> }): Responder {
  return sseReply(toolCallFrames(wire, call));
}
