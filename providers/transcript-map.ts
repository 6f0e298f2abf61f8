// providers/transcript-map.ts: vendor-neutral helpers the wire adapters share when they turn our
// transcript into a request body and SSE data back into blocks (system text, content parts,
// tool-name lookup, strict JSON parsing that fails as a classified stream error).
import type { ContentInput, Message } from '../contracts/transcript.ts';
import type { ProviderRequest } from './provider.ts';
import { streamFailure } from './errors.ts';

/** One piece of user content. Blob images (no bytes at hand) become a text placeholder. */
export type ContentPart = { kind: 'text'; text: string } | { kind: 'image'; media_type: string; data: string };

/** The request's system prompt plus any system rows left in the messages, joined by blank lines. */
export function systemText(req: ProviderRequest): string | undefined {
  const parts = [req.system, ...req.messages.filter((m) => m.role === 'system').map((m) => m.content)];
  const joined = parts.filter((p): p is string => typeof p === 'string' && p.length > 0).join('\n\n');
  return joined.length > 0 ? joined : undefined;
}

/** Normalises a user content input to parts. */
export function contentParts(content: ContentInput): ContentPart[] {
  if (typeof content === 'string') return [{ kind: 'text', text: content }];
  return content.map((b): ContentPart => {
    if (b.type === 'text') return { kind: 'text', text: b.text };
    if (b.type === 'skill_context')
      return { kind: 'text', text: `<skill_context skill="${b.skill_key.skill_name}">\n${b.text}\n</skill_context>` };
    if (b.source === 'inline' && b.data) return { kind: 'image', media_type: b.media_type, data: b.data };
    return { kind: 'text', text: `[image: ${b.media_type}]` };
  });
}

/** The text of a user content input (images ignored). */
export function plainText(content: ContentInput): string {
  return contentParts(content)
    .filter((p) => p.kind === 'text')
    .map((p) => (p as { text: string }).text)
    .join('');
}

/** Maps each tool_use id in the transcript to its tool name (tool results carry only the id). */
export function toolNamesById(messages: Message[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) {
    if (m.role !== 'block_assistant') continue;
    for (const b of m.blocks) if (b.block_type === 'tool_use') names.set(b.data.id, b.data.name);
  }
  return names;
}

/** Parses an SSE data payload; malformed JSON is a retryable stream failure. */
export function parseData(provider: string, model: string, data: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch (err) {
    throw streamFailure(provider, model, 'malformed JSON in event data', err);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw streamFailure(provider, model, 'event data is not a JSON object');
  return v as Record<string, unknown>;
}

/** Parses assembled tool-call arguments ('' means {}); malformed JSON is a retryable stream failure. */
export function parseToolArgs(provider: string, model: string, json: string): unknown {
  if (json.trim() === '') return {};
  try {
    return JSON.parse(json);
  } catch (err) {
    throw streamFailure(provider, model, 'malformed tool-call arguments', err);
  }
}

/** A non-negative integer from an unknown usage field, else 0. */
export function count(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;
}

/** Appends `item` to `list`, merging into the previous entry when both have the same role. */
export function pushMerged<T extends { role: string }>(list: T[], item: T, merge: (prev: T, next: T) => void): void {
  const prev = list[list.length - 1];
  if (prev && prev.role === item.role) merge(prev, item);
  else list.push(item);
}
