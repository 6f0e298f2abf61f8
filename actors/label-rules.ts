// actors/label-rules.ts: label keys reserved for Warren's own use (wire-notes §11 item 13): `mob_id`,
// `role`, `agent_identity`, and `warren` / `warren.*`, compared case-insensitively. Mobs rely on them, so a
// caller may not set them through `labels` or `peer_meta.labels` on create or continue (400).
import { ServiceError } from '../contracts/errors.ts';

const RESERVED = new Set(['mob_id', 'role', 'agent_identity', 'warren']);

/** True when `key` is reserved. */
function isReservedLabelKey(key: string): boolean {
  const k = key.toLowerCase();
  return RESERVED.has(k) || k.startsWith('warren.');
}

/** Throws 400 BAD_REQUEST naming the first reserved key in `labels` or `peer_meta.labels`. */
export function refuseReservedLabels(body: {
  labels?: Record<string, string> | null;
  peer_meta?: { labels?: Record<string, string> } | null;
}): void {
  const sources: Array<[string, Record<string, string> | null | undefined]> = [
    ['labels', body.labels],
    ['peer_meta.labels', body.peer_meta?.labels],
  ];
  for (const [field, labels] of sources) {
    for (const key of Object.keys(labels ?? {})) {
      if (isReservedLabelKey(key)) {
        throw new ServiceError(
          'BAD_REQUEST',
          `label key '${key}' in ${field} is reserved (mob_id, role, agent_identity, warren, warren.*)`,
          { field, key },
        );
      }
    }
  }
}
