// actors/replay/hook-summary.ts: a run's hooks as a turn's recording keeps them. What decides when and how a
// hook runs (id, point, mode, capability, priority, timeout, runtime type, command or in-process name) is
// kept in clear, so a replay names the changed field; the rest of the runtime (arguments, URL, in-process
// config, each env value and header) only as a short hash, so no credential a hook carries is recorded.
// An exported recording keeps a `hooks_override` the same way (redactOverride): each entry's runtime is
// replaced by `{type: "redacted", summary}`, which summarizes to what the original did, and which a replay
// checks but cannot run.
import type { HookEntryConfig, HookRunOverrides } from '../../contracts/turn-features.ts';
import { canonicalJson, sha256 } from './canonical.ts';

const CLEAR = new Set(['type', 'command', 'name']);
const PER_KEY = new Set(['env', 'headers']);

function digest(value: unknown): string {
  return `sha256:${sha256(canonicalJson(value)).slice(0, 16)}`;
}

/** A runtime an export replaced by its summary (no secret left; it cannot run). */
interface RedactedRuntime {
  type: 'redacted';
  summary: Record<string, unknown>;
}

function isRedacted(runtime: unknown): runtime is RedactedRuntime {
  return (runtime as { type?: unknown } | null)?.type === 'redacted';
}

function runtimeSummary(runtime: HookEntryConfig['runtime'] | RedactedRuntime): Record<string, unknown> {
  if (isRedacted(runtime)) return runtime.summary;
  const rt: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(runtime)) {
    if (v === undefined) continue;
    if (CLEAR.has(k)) rt[k] = v;
    else if (PER_KEY.has(k) && v && typeof v === 'object')
      rt[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, x]) => [name, digest(x)]));
    else rt[k] = digest(v);
  }
  return rt;
}

/** The recorded form of a run's hook entries (in the order they run). */
export function hookSummary(entries: readonly HookEntryConfig[]): unknown[] {
  return entries.map((entry) => {
    const { runtime, ...rest } = entry;
    return { ...rest, runtime: runtimeSummary(runtime) };
  });
}

/** A `hooks_override` as an export writes it: each entry's runtime replaced by its summary. */
export function redactOverride(override: HookRunOverrides): HookRunOverrides {
  if (!override.entries) return override;
  return {
    ...override,
    entries: override.entries.map((e) => ({
      ...e,
      runtime: { type: 'redacted', summary: runtimeSummary(e.runtime) } as unknown as HookEntryConfig['runtime'],
    })),
  };
}

/** The override without its redacted entries: what a replay of an imported recording can run. */
export function runnableOverride(override: HookRunOverrides | null | undefined): HookRunOverrides | null | undefined {
  if (!override?.entries?.some((e) => isRedacted(e.runtime))) return override;
  return { ...override, entries: override.entries.filter((e) => !isRedacted(e.runtime)) };
}
