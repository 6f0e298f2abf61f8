// actors/ledger-retention.ts: what a turn commit removes from its session's event ledger (SPEC.md
// "Events": the log is derived state, not a guaranteed replay). The turn's own text deltas go once its
// text is committed: text_complete carries the same text and every other event of the turn stays, so a
// Last-Event-ID replay still gives the same text and the same final events. Beyond that `[ledger]`
// bounds each session: seqs more than max_entries_per_session behind the newest, and entries older than
// max_age_days, are pruned; a replay asking for a pruned range gets stream_truncated (http/handlers/events.ts).
// The turn recordings follow: a turn's recording goes with its run_completed event (actors/replay/recording-retention.ts).
import type { Config } from '../contracts/config.ts';
import type { Store, StoreOp } from '../storage/store.ts';
import { recordingTrimOps, type RecordingMemo } from './replay/recording-retention.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** Entries read at most per commit to find the age cut (pruning catches up over later commits). */
const AGE_SCAN = 1000;

/**
 * A session's age-pruning memo: until its oldest entry can have passed the age limit, commits skip the
 * ledger read.
 */
export interface AgeCheck extends RecordingMemo {
  /** No entry of the session is older than this (ms); -Infinity when unknown. */
  oldestMs: number;
}

/** Sorted seqs as inclusive [from, to] runs. */
function seqRanges(seqs: readonly number[]): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const seq of seqs) {
    const last = out.at(-1);
    if (last && seq === last[1] + 1) last[1] = seq;
    else out.push([seq, seq]);
  }
  return out;
}

/**
 * The prune range for a session whose newest seq will be `lastSeq` after this commit, or undefined.
 * Never reaches `lastSeq` itself (the next seq is derived from the last entry).
 */
export async function retentionCut(
  store: Store,
  sessionId: string,
  lastSeq: number,
  cfg: Config['ledger'],
  now: number,
  age: AgeCheck = { oldestMs: -Infinity },
): Promise<number | undefined> {
  let cut = 0;
  if (cfg.max_entries_per_session > 0) cut = lastSeq - cfg.max_entries_per_session;
  const limit = now - cfg.max_age_days * DAY_MS;
  if (cfg.max_age_days > 0 && age.oldestMs < limit) {
    const [first] = await store.readLedger(sessionId, cut, 1);
    // Entries not yet durable (this turn's) may be older than the one read by up to a turn's length,
    // hence the hour of margin.
    age.oldestMs = Math.min(first?.timestamp_ms ?? now, now - HOUR_MS);
    if (first && first.timestamp_ms < limit) {
      age.oldestMs = -Infinity;
      for (const e of await store.readLedger(sessionId, cut, AGE_SCAN)) {
        if (e.timestamp_ms >= limit) break;
        cut = e.seq;
      }
    }
  }
  cut = Math.min(cut, lastSeq - 1);
  return cut >= 1 ? cut : undefined;
}

/** The dropLedger op of a commit (the turn's delta seqs plus the retention cut) and the removal of the recordings of the turns it cuts. */
export async function ledgerTrimOps(
  store: Store,
  sessionId: string,
  deltaSeqs: readonly number[],
  lastSeq: number,
  cfg: Config['ledger'],
  now: number,
  age?: AgeCheck,
): Promise<StoreOp[]> {
  if (!store.persistent) return [];
  const ranges = cfg.keep_text_deltas ? [] : seqRanges(deltaSeqs.filter((s) => s < lastSeq));
  const cut = await retentionCut(store, sessionId, lastSeq, cfg, now, age);
  if (cut === undefined) return ranges.length ? [{ op: 'dropLedger', sessionId, ranges }] : [];
  ranges.unshift([1, cut]);
  return [{ op: 'dropLedger', sessionId, ranges }, ...(await recordingTrimOps(store, sessionId, cut, now, age ?? {}))];
}
