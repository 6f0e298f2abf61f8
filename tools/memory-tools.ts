// tools/memory-tools.ts: the `memory_search {query, limit?}` tool over a session's semantic memory (what
// compaction removed from its context). Contributed by the context module to sessions created with
// enable_memory; the search itself is actors/memory/memory-store.ts, passed in.
import { Type } from 'typebox';
import { compileArgs, invalidArgs, jsonResult } from './tool-args.ts';
import type { Tool } from './tool.ts';

export type MemorySearch = (query: string, limit: number, signal: AbortSignal) => Promise<{ hits: unknown[]; mode: string }>;

const SearchInput = Type.Object(
  { query: Type.String({ minLength: 1 }), limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })) },
  { additionalProperties: false },
);

export function createMemorySearchTool(search: MemorySearch): Tool {
  const args = compileArgs(SearchInput);
  return {
    name: 'memory_search',
    description:
      "Search this session's memory: earlier parts of the conversation that context compaction removed. Returns the best matching passages first.",
    input_schema: args.jsonSchema,
    async execute(raw, ctx) {
      const p = args.parse(raw);
      if (!p.ok) return invalidArgs('memory_search', p.message);
      const { hits, mode } = await search(p.value.query, p.value.limit ?? 5, ctx.signal);
      return jsonResult({ results: hits, mode });
    },
  };
}
