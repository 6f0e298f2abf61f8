// tools/mcp/mcp-result.ts: turns an MCP tools/call result into the tool outcome the turn runner feeds
// back to the model (text; images, audio and binary resources are named, not inlined).
import type { ToolOutcome } from '../tool.ts';

type Item = { type: string; [k: string]: unknown };

function render(item: Item): string {
  switch (item.type) {
    case 'text':
      return String(item.text ?? '');
    case 'image':
    case 'audio':
      return `[${item.type}: ${String(item.mimeType ?? 'unknown')}]`;
    case 'resource': {
      const r = (item.resource ?? {}) as { uri?: string; text?: string; mimeType?: string };
      return typeof r.text === 'string' ? r.text : `[resource: ${r.uri ?? '?'}${r.mimeType ? ` (${r.mimeType})` : ''}]`;
    }
    case 'resource_link':
      return `[resource link: ${String(item.uri ?? '?')}]`;
    default:
      return JSON.stringify(item);
  }
}

/** The outcome of one MCP tool result (`isError` results become `is_error` outcomes). */
export function mcpResultOutcome(result: {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  toolResult?: unknown;
}): ToolOutcome {
  const items = Array.isArray(result.content) ? (result.content as Item[]) : [];
  let content = items.map(render).join('\n');
  if (!content && result.structuredContent !== undefined) content = JSON.stringify(result.structuredContent);
  // Servers on the 2024-10-07 protocol answer `toolResult` instead of `content`.
  if (!content && result.toolResult !== undefined) content = JSON.stringify(result.toolResult);
  const outcome: ToolOutcome = { content };
  if (result.isError === true) outcome.is_error = true;
  return outcome;
}
