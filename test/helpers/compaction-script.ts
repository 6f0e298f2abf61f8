// test/helpers/compaction-script.ts: a scripted model for compaction tests. Summary requests (they
// carry the compaction instruction) get `summary()`; every other call answers a short text.
import type { ProviderRequest } from '../../providers/provider.ts';
import type { ScriptedReply } from '../../providers/scripted.ts';

export function isSummaryRequest(req: Pick<ProviderRequest, 'messages'>): boolean {
  const last = req.messages.at(-1);
  return last?.role === 'user' && typeof last.content === 'string' && last.content.includes('CONTEXT COMPACTION');
}

export function compactionScript(summary: () => ScriptedReply = () => ({ text: 'SUMMARY: the user is collecting facts.' })) {
  return (req: ProviderRequest): ScriptedReply => (isSummaryRequest(req) ? summary() : { text: 'noted' });
}
