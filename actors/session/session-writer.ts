// actors/session/session-writer.ts: the one writer of a session. Writes are group-committed: everything queued
// in one synchronous run goes into a single store.commit (one LMDB transaction), ledger entries
// included. Up to PIPELINE batches may be in flight at once: LMDB applies and syncs transactions in
// issue order, so a turn's pending-input write and its final commit overlap instead of paying two
// serial fsyncs. Callers and subscribers still see completions strictly in issue order.
// A ledger append fault halts later ledger appends but never undoes or blocks the state it rode with
// (SPEC.md "Events": audit append faults).
import type { Logger } from 'pino';
import { isServiceError } from '../../contracts/errors.ts';
import type { LedgerEntry, Store, StoreOp } from '../../storage/store.ts';
import type { HubEntry } from '../event-hub.ts';

/**
 * Ops that must commit in the same transaction as the ledger entries they report (the webhook outbox,
 * actors/webhooks/). Installed on RuntimeDeps by the module that owns it.
 */
export interface LedgerOutbox {
  /** Extra ops for these entries of one session; [] when nothing subscribes. Synchronous. */
  opsFor(session: { id: string; labels: Record<string, string> }, entries: readonly LedgerEntry[]): StoreOp[];
  /** The ops opsFor returned are durable. */
  committed(ops: StoreOp[]): void;
}

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

/** Batches in flight at once. */
const PIPELINE = 2;

/**
 * Deferred writers and their deadlines, swept by one shared interval while any is waiting (no timer
 * per turn). A deferral ends between its deadline and one sweep period later.
 */
const DEFERRED = new Map<SessionWriter, number>();
const SWEEP_MS = 5;
let sweeper: ReturnType<typeof setInterval> | null = null;

function deferUntil(w: SessionWriter, ms: number): void {
  DEFERRED.set(w, performance.now() + ms);
  if (sweeper) return;
  sweeper = setInterval(() => {
    const now = performance.now();
    for (const [writer, at] of DEFERRED) if (at <= now) writer.release();
    if (DEFERRED.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = null;
    }
  }, SWEEP_MS);
  sweeper.unref?.();
}

export class SessionWriter {
  private ops: StoreOp[] = [];
  private events: HubEntry[] = [];
  private waiters: Waiter[] = [];
  private scheduled = false;
  private inFlight = 0;
  /** Completion chain: each batch settles (resolves waiters, delivers events) after the one before. */
  private tail: Promise<void> = Promise.resolve();
  private ledgerHalted = false;
  /** Number of batches that carried state ops; a failed batch may retry its ops only if it is the latest. */
  private stateBatches = 0;
  /** Writes queued so far, and how many of them have settled. */
  private queued = 0;
  private settled = 0;
  private flushWaiters: Array<{ target: number; resolve(): void }> = [];

  constructor(
    private readonly store: Store,
    private readonly sessionId: string,
    private readonly onDurable: (entries: HubEntry[]) => void,
    private readonly log: Logger,
    private readonly outbox: { tap: LedgerOutbox; labels(): Record<string, string> } | null = null,
  ) {}

  get halted(): boolean {
    return this.ledgerHalted;
  }

  /** Nothing queued, nothing in flight, and the ledger healthy (a halted writer is kept for its state). */
  get idle(): boolean {
    return this.settled >= this.queued && this.inFlight === 0 && !this.ledgerHalted;
  }

  /** Writes queued but not yet settled (the session's mailbox depth as the viewer and metrics see it). */
  get backlog(): number {
    return this.queued - this.settled;
  }

  /** Queues a ledger entry; it is delivered live once durable. */
  appendEvent(entry: HubEntry): void {
    this.queued++;
    this.events.push(entry);
    this.schedule();
  }

  /** Queues ops; resolves once they (and every earlier write) are durable. */
  commit(ops: StoreOp[]): Promise<void> {
    this.release();
    return this.enqueue(ops);
  }

  /**
   * Queues ops like commit(), but lets them (and the events published meanwhile) wait up to `ms` for
   * the next write: a fast turn's pending input then rides in one transaction, one fsync, with the turn's
   * commit. Any other commit, flushed() or release() issues them at once. A crash before they are durable
   * loses only what no caller was answered for (the turn had not been acknowledged).
   */
  commitDeferred(ops: StoreOp[], ms: number): Promise<void> {
    if (!this.deferring) {
      this.deferring = true;
      deferUntil(this, ms);
    }
    return this.enqueue(ops);
  }

  /** Ends a deferral (commitDeferred): everything queued is issued now. */
  release(): void {
    if (!this.deferring) return;
    this.deferring = false;
    DEFERRED.delete(this);
    this.schedule();
  }

  /** A deferral is running (DEFERRED holds its deadline). */
  private deferring = false;

  private enqueue(ops: StoreOp[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued++;
      this.ops.push(...ops);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * Resolves once every write queued before this call has settled. Writes queued later (a turn that
   * keeps streaming events) do not hold it up.
   */
  flushed(): Promise<void> {
    if (this.settled >= this.queued) return Promise.resolve();
    this.release();
    return new Promise<void>((resolve) => this.flushWaiters.push({ target: this.queued, resolve }));
  }

  private schedule(): void {
    if (this.scheduled || this.deferring || this.inFlight >= PIPELINE) return;
    // Ledger-only batches wait for the batch in flight: events streamed during a fast turn then ride
    // with its commit instead of paying a transaction (and an fsync) of their own.
    if (this.inFlight > 0 && this.ops.length === 0) return;
    this.scheduled = true;
    // A microtask lets everything published in this synchronous run join one transaction.
    queueMicrotask(() => {
      this.scheduled = false;
      this.issue();
    });
  }

  /** The session's creation failed: every write not yet issued is refused (no orphan rows or ledger). */
  abandon(err: unknown): void {
    this.abandoned = err;
  }

  private abandoned: unknown = undefined;

  /** Starts one batch with everything queued; its completion is chained after the batches before it. */
  private issue(): void {
    if (this.ops.length === 0 && this.events.length === 0) return;
    if (this.abandoned !== undefined) {
      for (const w of this.waiters) w.reject(this.abandoned);
      this.settled = this.queued;
      this.ops = [];
      this.events = [];
      this.waiters = [];
      for (const w of this.flushWaiters) w.resolve();
      this.flushWaiters = [];
      return;
    }
    if (this.deferring) {
      this.deferring = false;
      DEFERRED.delete(this);
    }
    const upTo = this.queued;
    const ops = this.ops;
    const events = this.events;
    const waiters = this.waiters;
    this.ops = [];
    this.events = [];
    this.waiters = [];
    const batch = ops.length ? ++this.stateBatches : 0;
    this.inFlight++;
    const attempt = this.write(ops, events, batch).then(
      () => undefined,
      (err: unknown) => err ?? new Error('store commit failed'),
    );
    const prev = this.tail;
    this.tail = (async () => {
      const failure = await attempt;
      await prev;
      if (failure === undefined) for (const w of waiters) w.resolve();
      else for (const w of waiters) w.reject(failure);
      // Events are delivered live even when their ledger write failed (the stream is best-effort;
      // a replay then reports the gap rather than inventing it).
      this.onDurable(events);
      this.settled = upTo;
      const ready = this.flushWaiters.filter((w) => w.target <= upTo);
      this.flushWaiters = this.flushWaiters.filter((w) => w.target > upTo);
      for (const w of ready) w.resolve();
      this.inFlight--;
      if (this.ops.length || this.events.length) this.schedule();
    })();
  }

  /** One transaction of state ops plus ledger entries; a ledger fault halts the audit, not the state. */
  private async write(batchOps: StoreOp[], events: HubEntry[], batch: number): Promise<void> {
    let ops = latestRecordOnly(batchOps);
    // Outbox ops ride in the transaction of the entries they report: a committed event always has its delivery.
    const extra = events.length && this.outbox ? this.outbox.tap.opsFor({ id: this.sessionId, labels: this.outbox.labels() }, events) : [];
    if (events.length === 0 || this.ledgerHalted) {
      if (ops.length || extra.length) await this.store.commit(extra.length ? [...ops, ...extra] : ops);
      if (extra.length) this.outbox!.tap.committed(extra);
      return;
    }
    // Entries this same transaction drops (a committed turn's text deltas) are never written at all,
    // and the drop itself then only has to look below them.
    const kept = droppedHere(ops, this.sessionId, events);
    if (kept !== events) ops = clipDrops(ops, this.sessionId, events[0].seq);
    try {
      const batch = ops.length || extra.length ? [...ops, ...extra] : [];
      if (kept.length) batch.push({ op: 'appendLedger', sessionId: this.sessionId, entries: ledgerEntries(kept) });
      await this.store.commit(batch);
    } catch (err) {
      // Retry the state ops alone: only if that succeeds was the ledger part at fault. A later state
      // batch already issued supersedes these ops, so replaying them after it would write stale state.
      if (ops.length && batch !== this.stateBatches) throw err;
      if (ops.length || extra.length) await this.store.commit([...ops, ...extra]);
      // The medium refused the write (full disk...): these entries are lost (a replay reports the gap),
      // but later appends go on, so the ledger resumes by itself once the store takes writes again.
      if (refusedByMedium(err)) {
        this.log.warn({ err, sessionId: this.sessionId, dropped: events.length }, 'ledger append refused by the store; entries dropped');
        if (extra.length) this.outbox!.tap.committed(extra);
        return;
      }
      this.ledgerHalted = true;
      this.log.error({ err, sessionId: this.sessionId }, 'ledger append failed; later appends halted');
    }
    if (extra.length) this.outbox!.tap.committed(extra);
  }
}

/**
 * A batch that carries several writes of one session's record (a deferred pending-input write and the
 * turn's commit) keeps the last: each is the whole record, so the earlier ones would only be encoded and
 * overwritten in the same transaction.
 */
function latestRecordOnly(ops: StoreOp[]): StoreOp[] {
  let records = 0;
  for (const op of ops) if (op.op === 'putSession') records++;
  if (records < 2) return ops;
  const last = new Map<string, StoreOp>();
  for (const op of ops) if (op.op === 'putSession') last.set(op.session.session_id, op);
  return ops.filter((op) => op.op !== 'putSession' || last.get(op.session.session_id) === op);
}

/** The events not removed by a dropLedger op of the same batch (the store applies drops last). */
function droppedHere(ops: StoreOp[], sessionId: string, events: HubEntry[]): HubEntry[] {
  let ranges: Array<[number, number]> | null = null;
  for (const op of ops) if (op.op === 'dropLedger' && op.sessionId === sessionId) (ranges ??= []).push(...op.ranges);
  if (!ranges) return events;
  const r = ranges;
  return events.filter((e) => !r.some(([from, to]) => e.seq >= from && e.seq <= to));
}

/**
 * Drop ranges clipped below `firstNew`, the first seq of this batch's entries: nothing at or above it is
 * in the store yet (earlier batches hold only lower seqs), so a range there would scan for nothing.
 */
function clipDrops(ops: StoreOp[], sessionId: string, firstNew: number): StoreOp[] {
  return ops.flatMap((op): StoreOp[] => {
    if (op.op !== 'dropLedger' || op.sessionId !== sessionId) return [op];
    const ranges = op.ranges.filter(([from]) => from < firstNew).map(([from, to]): [number, number] => [from, Math.min(to, firstNew - 1)]);
    return ranges.length ? [{ ...op, ranges }] : [];
  });
}

/**
 * The entries as the ledger stores them. A hub entry is written as it is while it has no frame yet (the
 * usual case: frames are built on delivery, after this commit); one that has a frame is copied without it.
 */
function ledgerEntries(entries: HubEntry[]): LedgerEntry[] {
  for (const e of entries) if (e.frame !== undefined) return entries.map(plainEntry);
  return entries;
}

function plainEntry(e: HubEntry): HubEntry {
  return { seq: e.seq, kind: e.kind, timestamp_ms: e.timestamp_ms, payload: e.payload };
}

/** A store failure caused by the medium (storage/store-failure.ts sets details.cause_code), not by the data. */
function refusedByMedium(err: unknown): boolean {
  return isServiceError(err) && typeof (err.details as { cause_code?: unknown } | undefined)?.cause_code === 'string';
}
