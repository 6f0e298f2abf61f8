// http/modules/context-module.ts: the context module. Context compaction at turn boundaries
// (`[compaction]`, actors/compaction.ts, the session_compaction capability) and the session-scoped
// semantic memory fed by what compaction discards (`[memory]`, actors/memory/*, the memory_store
// capability and the memory_search tool of sessions created with enable_memory).
import { Compactor } from '../../actors/compaction.ts';
import { createEmbedder, type Embedder } from '../../actors/memory/embeddings.ts';
import { MemoryStore } from '../../actors/memory/memory-store.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function contextModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const compactor = new Compactor(deps.store);
  deps.compactor = compactor;
  // The embedder follows the live config (rebuilt only when `[memory.embeddings]` changes).
  let embedder: { key: string; fn: Embedder | undefined } = { key: '', fn: undefined };
  const currentEmbedder = (): Embedder | undefined => {
    const cfg = ctx.config.current().memory.embeddings;
    const key = JSON.stringify(cfg ?? null);
    if (key !== embedder.key) embedder = { key, fn: cfg ? createEmbedder(cfg, ctx.env, deps.outbound?.fetch) : undefined };
    return embedder.fn;
  };
  const memory = new MemoryStore(deps.store, currentEmbedder);
  compactor.addDiscardSink(memory);
  return {
    name: 'context',
    configKeys: ['compaction', 'memory'],
    capabilities: [
      { id: 'session_compaction', gate: null },
      {
        id: 'memory_store',
        gate: null,
        description: () =>
          ctx.config.current().memory.embeddings
            ? 'Semantic memory store: hybrid search (full-text plus vector embeddings) over what compaction removed'
            : 'Semantic memory store: full-text search only (no embeddings endpoint configured) over what compaction removed',
      },
    ],
    tools: { flag: 'memory', tools: memory },
  };
}
