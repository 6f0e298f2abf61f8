// actors/replay/hook-summary.ts: a run's hooks as a turn's recording keeps them. What decides when and how a
// hook runs (id, point, mode, capability, priority, timeout, runtime type, command or in-process name) is
// kept in clear, so a replay names the changed field; the rest of the runtime (arguments, URL, in-process
// config, each env value and header) only as a short hash, so no credential a hook carries is recorded.
// An exported recording keeps a `hooks_override` the same way (redactOverride): each entry's runtime is
// replaced by `{type: "redacted", summary}`, which summarizes to what the original did, and which a replay
// checks but cannot run.
//
// An export keys every hash of a hook summary (keySummary): `hmac:<16 hex>`, HMAC-SHA256 of the realm's
// `sha256:<16 hex>` under a random per-export salt the file carries (the recording's `hook_salt`). The same
// credential hashes differently in every export and in the realm's store, so exports cannot be linked or
// looked up in a precomputed table; a replay of the import computes its own hooks' summary under that salt
// to compare. (Anyone holding the file and a candidate value can still test it: docs/replay.md.)
import { createHmac } from 'node:crypto';
import type { HookEntryConfig, HookRunOverrides } from '../../contracts/turn-features.ts';
import { canonicalJson, sha256 } from './canonical.ts';

const CLEAR = new Set(['type', 'command', 'name']);
const PER_KEY = new Set(['env', 'headers']);

const UNKEYED = /^sha256:[0-9a-f]{16}$/;

function keyed(unkeyed: string, salt: string): string {
  return `hmac:${createHmac('sha256', salt).update(unkeyed).digest('hex').slice(0, 16)}`;
}

function digest(value: unknown, salt?: string): string {
  const d = `sha256:${sha256(canonicalJson(value)).slice(0, 16)}`;
  return salt ? keyed(d, salt) : d;
}

/** A runtime an export replaced by its summary (no secret left; it cannot run). */
interface RedactedRuntime {
  type: 'redacted';
  summary: Record<string, unknown>;
}

function isRedacted(runtime: unknown): runtime is RedactedRuntime {
  return (runtime as { type?: unknown } | null)?.type === 'redacted';
}

function runtimeSummary(runtime: HookEntryConfig['runtime'] | RedactedRuntime, salt?: string): Record<string, unknown> {
  if (isRedacted(runtime)) return runtime.summary;
  const rt: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(runtime)) {
    if (v === undefined) continue;
    if (CLEAR.has(k)) rt[k] = v;
    else if (PER_KEY.has(k) && v && typeof v === 'object')
      rt[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, x]) => [name, digest(x, salt)]));
    else rt[k] = digest(v, salt);
  }
  return rt;
}

/** The recorded form of a run's hook entries (in the order they run); `salt` keys the hashes (an imported recording's). */
export function hookSummary(entries: readonly HookEntryConfig[], salt?: string): unknown[] {
  return entries.map((entry) => {
    const { runtime, ...rest } = entry;
    return { ...rest, runtime: runtimeSummary(runtime, salt) };
  });
}

/** A runtime summary with each `sha256:` hash keyed under `salt` (already keyed hashes and clear fields kept). */
function keyRuntime(summary: Record<string, unknown>, salt: string): Record<string, unknown> {
  const key = (v: unknown): unknown => (typeof v === 'string' && UNKEYED.test(v) ? keyed(v, salt) : v);
  const rt: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(summary)) {
    if (CLEAR.has(k)) rt[k] = v;
    else if (PER_KEY.has(k) && v && typeof v === 'object')
      rt[k] = Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([name, x]) => [name, key(x)]));
    else rt[k] = key(v);
  }
  return rt;
}

/** Whether a recording blob is a hook summary (a tool definition list's entries have no `runtime`). */
export function isHookSummary(value: unknown): value is Array<Record<string, unknown>> {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((e) => e && typeof e === 'object' && typeof (e as { runtime?: unknown }).runtime === 'object' && 'point' in e)
  );
}

/** A recorded hook summary with its hashes keyed under `salt`: what hookSummary(entries, salt) gives. */
export function keySummary(summary: ReadonlyArray<Record<string, unknown>>, salt: string): unknown[] {
  return summary.map((e) => ({ ...e, runtime: keyRuntime(e.runtime as Record<string, unknown>, salt) }));
}

/** A `hooks_override` as an export writes it: each entry's runtime replaced by its summary, keyed under `salt`. */
export function redactOverride(override: HookRunOverrides, salt: string): HookRunOverrides {
  if (!override.entries) return override;
  return {
    ...override,
    entries: override.entries.map((e) => ({
      ...e,
      runtime: { type: 'redacted', summary: keyRuntime(runtimeSummary(e.runtime), salt) } as unknown as HookEntryConfig['runtime'],
    })),
  };
}

/** The override without its redacted entries: what a replay of an imported recording can run. */
export function runnableOverride(override: HookRunOverrides | null | undefined): HookRunOverrides | null | undefined {
  if (!override?.entries?.some((e) => isRedacted(e.runtime))) return override;
  return { ...override, entries: override.entries.filter((e) => !isRedacted(e.runtime)) };
}
