// actors/replay/recording-retention.ts: turn recordings follow the ledger's retention (`[ledger]`
// max_entries_per_session and max_age_days, actors/ledger-retention.ts). A turn's recording is removed in
// the commit that prunes the turn's run_completed event, and the session's marker (RECORDING_PRUNED_NS)
// counts the turns that lost theirs, so a replay can say why it cannot start at the first turn.
//
// Which recordings: a session's turns run one after another, and a recording is keyed by its turn's start
// time. When the newest run_completed being pruned was stamped at C, every turn that started before C has
// completed by then, so its run_completed is pruned too. (A turn that starts in the very millisecond of C
// keeps its recording until a later cut: the rule never removes one whose run_completed is kept.)
import { RECORDING_PRUNED_NS, recordingNs, type RecordingPruned } from '../../contracts/replay.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { readRecord, RECORDING_PRUNED_KIND } from '../../storage/record-kinds.ts';

/**
 * A session's memo: its oldest recording keys (oldest first, at most MEMO_KEYS) as of the last listing,
 * less those removed since; undefined when unknown. Recordings made after the listing are newer than all
 * of them, so while the newest remembered one stays, the removals are found without listing again.
 */
export interface RecordingMemo {
  recordingKeys?: string[];
}

const MEMO_KEYS = 64;
/** Entries read per page, and pages at most, looking back from the cut for the newest run_completed. */
const PAGE = 64;
const PAGES = 4;

/** The turn start time a recording key begins with (`<zero-padded ms>-<request id>`). */
function startOf(key: string): number {
  return Number(key.slice(0, key.indexOf('-')));
}

/**
 * The time of the newest run_completed entry with seq <= cut, or undefined. Only entries still stored count:
 * those of earlier cuts are gone, so the look is from the ledger's first entry to the cut (a few pages back
 * at most).
 */
async function newestCompletedBefore(store: Store, sessionId: string, cut: number): Promise<number | undefined> {
  const [lowest] = await store.readLedger(sessionId, 0, 1);
  if (!lowest || lowest.seq > cut) return undefined;
  for (let to = cut, page = 0; to >= lowest.seq && page < PAGES; to -= PAGE, page++) {
    const entries = await store.readLedger(sessionId, Math.max(lowest.seq - 1, to - PAGE), PAGE);
    const done = entries.filter((e) => e.seq <= to && e.kind === 'run_completed').at(-1);
    if (done) return done.timestamp_ms;
  }
  return undefined;
}

/** The ops removing the recordings of the turns whose run_completed the ledger cut (seq <= `cut`) prunes; [] when none. */
export async function recordingTrimOps(store: Store, sessionId: string, cut: number, now: number, memo: RecordingMemo): Promise<StoreOp[]> {
  const completed = await newestCompletedBefore(store, sessionId, cut);
  if (completed === undefined) return [];
  const ns = recordingNs(sessionId);
  let keys = memo.recordingKeys;
  // Unknown, or every remembered recording goes (newer ones may too): list them.
  if (!keys?.length || startOf(keys[keys.length - 1]) < completed) keys = (await store.listRecords(ns)).map((r) => r.key).sort();
  let gone = 0;
  while (gone < keys.length && startOf(keys[gone]) < completed) gone++;
  memo.recordingKeys = keys.slice(gone, gone + MEMO_KEYS);
  if (!gone) return [];
  const before = await readRecord<RecordingPruned>(store, RECORDING_PRUNED_KIND, sessionId);
  const marker: RecordingPruned = {
    v: 1,
    turns: (before?.turns ?? 0) + gone,
    through_started_at_ms: startOf(keys[gone - 1]),
    at_ms: now,
  };
  return [
    ...keys.slice(0, gone).map((key): StoreOp => ({ op: 'deleteRecord', ns, key })),
    { op: 'putRecord', ns: RECORDING_PRUNED_NS, key: sessionId, value: marker },
  ];
}
