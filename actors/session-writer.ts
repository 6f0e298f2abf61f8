// actors/session-writer.ts: the one writer of a session. Writes are chained and group-committed:
// everything queued while a commit is in flight goes into the next single store.commit (one LMDB
// transaction), ledger entries included. A ledger append fault halts later ledger appends but never
// undoes or blocks the turn commit it rode with (SPEC.md "Events": audit append faults).
import type { Logger } from 'pino';
import type { Store, StoreOp } from '../storage/store.ts';
import type { HubEntry } from './event-hub.ts';

interface Waiter {
  resolve(): void;
  reject(err: unknown): void;
}

export class SessionWriter {
  private ops: StoreOp[] = [];
  private events: HubEntry[] = [];
  private waiters: Waiter[] = [];
  private inFlight: Promise<void> | null = null;
  private scheduled = false;
  private ledgerHalted = false;
  /** Writes queued so far, and how many of them a finished drain has dealt with. */
  private queued = 0;
  private settled = 0;
  private flushWaiters: Array<{ target: number; resolve(): void }> = [];

  constructor(
    private readonly store: Store,
    private readonly sessionId: string,
    private readonly onDurable: (entries: HubEntry[]) => void,
    private readonly log: Logger,
  ) {}

  get halted(): boolean {
    return this.ledgerHalted;
  }

  /** Queues a ledger entry; it is delivered live once durable. */
  appendEvent(entry: HubEntry): void {
    this.queued++;
    this.events.push(entry);
    this.schedule();
  }

  /** Queues ops; resolves once they (and every earlier write) are durable. */
  commit(ops: StoreOp[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.queued++;
      this.ops.push(...ops);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /**
   * Resolves once every write queued before this call has been dealt with. Writes queued later (a turn
   * that keeps streaming events) do not hold it up.
   */
  flushed(): Promise<void> {
    if (this.settled >= this.queued) return Promise.resolve();
    return new Promise<void>((resolve) => this.flushWaiters.push({ target: this.queued, resolve }));
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight) return;
    this.scheduled = true;
    // A microtask lets everything published in this synchronous run join one transaction.
    queueMicrotask(() => {
      this.scheduled = false;
      this.inFlight = this.drain().finally(() => {
        this.inFlight = null;
        if (this.ops.length || this.events.length) this.schedule();
      });
    });
  }

  private async drain(): Promise<void> {
    const upTo = this.queued;
    const ops = this.ops;
    const events = this.events;
    const waiters = this.waiters;
    this.ops = [];
    this.events = [];
    this.waiters = [];
    try {
      await this.write(ops, events);
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    } finally {
      // Events are delivered live even when their ledger write failed (the stream is best-effort;
      // a replay then reports the gap rather than inventing it).
      this.onDurable(events);
      this.settled = upTo;
      const ready = this.flushWaiters.filter((w) => w.target <= upTo);
      this.flushWaiters = this.flushWaiters.filter((w) => w.target > upTo);
      for (const w of ready) w.resolve();
    }
  }

  /** One transaction of state ops plus ledger entries; a ledger fault halts the audit, not the state. */
  private async write(ops: StoreOp[], events: HubEntry[]): Promise<void> {
    if (events.length === 0 || this.ledgerHalted) {
      if (ops.length) await this.store.commit(ops);
      return;
    }
    try {
      await this.store.commit([...ops, { op: 'appendLedger', sessionId: this.sessionId, entries: events.map(plainEntry) }]);
    } catch (err) {
      // Retry the state ops alone: only if that succeeds was the ledger part at fault.
      if (ops.length) await this.store.commit(ops);
      this.ledgerHalted = true;
      this.log.error({ err, sessionId: this.sessionId }, 'ledger append failed; later appends halted');
    }
  }
}

function plainEntry(e: HubEntry): HubEntry {
  return { seq: e.seq, kind: e.kind, timestamp_ms: e.timestamp_ms, payload: e.payload };
}
