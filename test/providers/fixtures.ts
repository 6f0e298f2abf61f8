// test/providers/fixtures.ts: one conversation with a tool round-trip, used by every adapter's
// request-shape test so the four vendor mappings are checked against the same transcript.
import type { ToolSpec } from '../../contracts/tool.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { baseRequest } from './adapter-suite.ts';

const at = '2026-01-01T00:00:00Z';

const weatherTool: ToolSpec = {
  name: 'get_weather',
  description: 'Weather for a city',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

/** system + user → assistant(text, tool_use) → tool_results → user(text + inline image). */
export function toolRoundTripRequest(overrides: Partial<ProviderRequest> = {}): ProviderRequest {
  return baseRequest({
    model: 'm-1',
    system: 'be brief',
    max_tokens: 1000,
    tools: [weatherTool],
    messages: [
      { role: 'user', content: 'what is the weather?', created_at: at },
      {
        role: 'block_assistant',
        stop_reason: 'tool_use',
        created_at: at,
        blocks: [
          { block_type: 'reasoning', data: { text: 'hmm' } },
          { block_type: 'text', data: { text: 'checking' } },
          { block_type: 'tool_use', data: { id: 'tu_1', name: 'get_weather', args: { city: 'Paris' } } },
        ],
      },
      { role: 'tool_results', results: [{ tool_use_id: 'tu_1', content: 'sunny' }], created_at: at },
      {
        role: 'user',
        created_at: at,
        content: [
          { type: 'text', text: 'thanks' },
          { type: 'image', media_type: 'image/png', source: 'inline', data: 'AAAA' },
        ],
      },
    ],
    ...overrides,
  });
}
