// actors/replay/hook-summary.ts: a run's hooks as a turn's recording keeps them. What decides when and how a
// hook runs (id, point, mode, capability, priority, timeout, runtime type, command or in-process name) is
// kept in clear, so a replay names the changed field; the rest of the runtime (arguments, URL, in-process
// config, each env value and header) only as a short hash, so no credential a hook carries is recorded.
import type { HookEntryConfig } from '../../contracts/turn-features.ts';
import { canonicalJson, sha256 } from './canonical.ts';

const CLEAR = new Set(['type', 'command', 'name']);
const PER_KEY = new Set(['env', 'headers']);

function digest(value: unknown): string {
  return `sha256:${sha256(canonicalJson(value)).slice(0, 16)}`;
}

/** The recorded form of a run's hook entries (in the order they run). */
export function hookSummary(entries: readonly HookEntryConfig[]): unknown[] {
  return entries.map((entry) => {
    const { runtime, ...rest } = entry;
    const rt: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(runtime)) {
      if (v === undefined) continue;
      if (CLEAR.has(k)) rt[k] = v;
      else if (PER_KEY.has(k) && v && typeof v === 'object')
        rt[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, x]) => [name, digest(x)]));
      else rt[k] = digest(v);
    }
    return { ...rest, runtime: rt };
  });
}
