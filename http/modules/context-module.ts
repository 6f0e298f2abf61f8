// http/modules/context-module.ts: the context module. Context compaction at turn boundaries
// (`[compaction]`, actors/compaction.ts, the session_compaction capability) and the session-scoped
// semantic memory fed by what compaction discards (`[memory]`, actors/memory/*, the memory_store
// capability and the memory_search tool).
import { Compactor } from '../../actors/compaction.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function contextModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  const compactor = new Compactor(deps.store);
  deps.compactor = compactor;
  return {
    name: 'context',
    configKeys: ['compaction'],
    capabilities: [{ id: 'session_compaction', gate: null }],
  };
}
