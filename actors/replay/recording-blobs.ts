// actors/replay/recording-blobs.ts: the content-addressed parts of turn recordings (tool definition lists,
// hook lists). A blob is keyed by the sha256 of its canonical JSON, so one stored copy serves every session
// that offered the same tools: they live realm-wide (RECORDING_BLOB_NS), written once per process per hash.
// Recordings written before blobs were shared keep theirs in the session's own namespace, read as a
// fallback. A session's blobs are the ones its recordings name, so an export carries only those.
import { RECORDING_BLOB_NS, recordingBlobNs, type TurnRecording } from '../../contracts/replay.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

/** The blob hashes a session's recordings name (tool lists and hook lists), sorted. */
export function referencedBlobs(recs: Iterable<TurnRecording>): string[] {
  const out = new Set<string>();
  for (const rec of recs)
    for (const call of rec.calls) {
      out.add(call.request.tools_hash);
      if (call.request.hooks_hash) out.add(call.request.hooks_hash);
    }
  return [...out].sort();
}

/** The named blobs: realm-wide, else in the session's own namespace (older recordings); missing ones left out. */
export async function readBlobs(store: Store, sessionId: string, hashes: readonly string[]): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  const missing: string[] = [];
  for (const hash of hashes) {
    const value = await store.getRecord<unknown>(RECORDING_BLOB_NS, hash);
    if (value === undefined) missing.push(hash);
    else out.set(hash, value);
  }
  if (missing.length) {
    const own = new Map((await store.listRecords<unknown>(recordingBlobNs(sessionId))).map((r) => [r.key, r.value]));
    for (const hash of missing) if (own.has(hash)) out.set(hash, own.get(hash));
  }
  return out;
}

/** The ops storing blobs realm-wide (idempotent: the same hash always carries the same value). */
export function blobPuts(blobs: Iterable<readonly [string, unknown]>): StoreOp[] {
  return [...blobs].map(([key, value]): StoreOp => ({ op: 'putRecord', ns: RECORDING_BLOB_NS, key, value }));
}
