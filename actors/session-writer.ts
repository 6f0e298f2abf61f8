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
    this.events.push(entry);
    this.schedule();
  }

  /** Queues ops; resolves once they (and every earlier write) are durable. */
  commit(ops: StoreOp[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.ops.push(...ops);
      this.waiters.push({ resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once nothing is queued or in flight. */
  async flushed(): Promise<void> {
    while (this.inFlight || this.scheduled || this.ops.length || this.events.length) {
      if (this.inFlight) await this.inFlight;
      else await new Promise<void>((r) => queueMicrotask(r));
    }
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
    const ops = this.ops;
    const events = this.events;
    const waiters = this.waiters;
    this.ops = [];
    this.events = [];
    this.waiters = [];
    const withLedger = events.length && !this.ledgerHalted
      ? [...ops, { op: 'appendLedger' as const, sessionId: this.sessionId, entries: events.map(plainEntry) }]
      : ops;
    try {
      if (withLedger.length) await this.store.commit(withLedger);
    } catch (err) {
      if (withLedger === ops || events.length === 0) {
        for (const w of waiters) w.reject(err);
        this.onDurable(events);
        return;
      }
      // The ledger part may be the fault: halt the audit and retry the state ops alone.
      this.ledgerHalted = true;
      this.log.error({ err, sessionId: this.sessionId }, 'ledger append failed; later appends halted');
      try {
        if (ops.length) await this.store.commit(ops);
      } catch (err2) {
        for (const w of waiters) w.reject(err2);
        this.onDurable(events);
        return;
      }
    }
    for (const w of waiters) w.resolve();
    this.onDurable(events);
  }
}

function plainEntry(e: HubEntry): HubEntry {
  return { seq: e.seq, kind: e.kind, timestamp_ms: e.timestamp_ms, payload: e.payload };
}
