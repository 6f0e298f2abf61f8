// storage/label-filter.ts: the label filter of ListSessionsOptions, shared by every backend: whether a
// record carries every (key, value), and the index key of one label.
import { createHash } from 'node:crypto';
import type { SessionRecord } from './store.ts';

export type LabelFilters = ReadonlyArray<readonly [string, string]>;

/** True when the record carries every label of `filters` (AND). */
export function matchesLabels(record: SessionRecord, filters: LabelFilters): boolean {
  for (const [k, v] of filters) if (!Object.hasOwn(record.labels, k) || record.labels[k] !== v) return false;
  return true;
}

/**
 * A fixed-size, control-character-free key for one label (labels are unbounded user strings; index keys
 * are not). Distinct labels may in theory share a key, so index hits are always checked with matchesLabels.
 */
export function labelKey(key: string, value: string): string {
  return createHash('sha256')
    .update(JSON.stringify([key, value]))
    .digest('base64url')
    .slice(0, 22);
}
