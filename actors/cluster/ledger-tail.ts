// actors/cluster/ledger-tail.ts: event streams of sessions another node hosts, served from the shared
// ledger. A cluster node streams `GET /sessions/{id}/events` of a session it does not host by tailing that
// session's ledger in the database: one tail per session per node, shared by all of the node's subscribers
// of that session, polling `readLedger(after the last seq read)` every `[cluster] tail_poll_ms` and handing
// what it reads to an EventHub (so the subscribers get exactly the local streams' rules: seq order, the
// 256-entry buffer and `stream_truncated`, heartbeats, `done`). The tail follows the session wherever it
// is hosted: when its owner dies and another node takes it over, the new owner's commits land in the same
// ledger and the stream goes on without a reconnect. A tail with no subscriber stops after `idleMs`.
//
// What a remote subscriber sees is the ledger: every committed event (run_started, turn and tool events,
// text_complete, run_completed/run_failed...), at most one poll period late. Text deltas are in the ledger
// while their turn runs and are dropped by its commit (unless `[ledger] keep_text_deltas`), so a remote
// subscriber gets those the tail read before the commit; text_complete always carries the whole text.
//
// DB load: with `heads` (postgres: PostgresCluster.ledgerHeads) a node makes ONE query per poll period for
// all the sessions it tails (each one's newest seq and archived flag), and reads a session's ledger only
// when its head moved; an archived or deleted session ends its streams. Without it (other stores) each
// tail polls its own ledger and checks its session every ARCHIVE_CHECK_MS.
import type { Logger } from 'pino';
import { ServiceError } from '../../contracts/errors.ts';
import type { Store } from '../../storage/store.ts';
import { EventHub, type EventSubscriber } from '../event-hub.ts';

/** Entries read per ledger query (a backlog is paged in at this size, paced by the hub). */
const TAIL_PAGE = 256;
/** How often a tail checks that its session still exists and is not archived (ms). */
const ARCHIVE_CHECK_MS = 1_000;
/** Default time a tail with no subscriber keeps running, so that a reconnect finds it (ms). */
const TAIL_IDLE_MS = 5_000;

export interface LedgerTailsOptions {
  store: Store;
  log: Logger;
  /** Interval between ledger reads of one tail (ms). */
  pollMs(): number;
  /** How long a tail without subscribers lives on (ms; default TAIL_IDLE_MS). */
  idleMs?: number;
  /** True when this node hosts the session itself (its local hub is the stream source). */
  hostsHere(sessionId: string): boolean;
  now(): number;
  /** Newest seq and archived flag (null: no such session) of many sessions in one read; see the header. */
  heads?(sessionIds: readonly string[]): Promise<Map<string, { head: number; archived: boolean | null }>>;
}

/** One session's tail: its hub (the subscribers' source) and the poll loop feeding it. */
export class LedgerTail {
  readonly hub: EventHub;
  /** Highest seq read from the ledger (handed to the hub, possibly still being paced out). */
  #cursor: number;
  #timer: NodeJS.Timeout | null = null;
  #idle: NodeJS.Timeout | null = null;
  #polling: Promise<void> | null = null;
  #lastArchiveCheck = Date.now();
  #failing = false;
  #stopped = false;

  constructor(
    readonly sessionId: string,
    lastSeq: number,
    private readonly o: LedgerTailsOptions,
    private readonly onStop: (tail: LedgerTail) => void,
  ) {
    this.#cursor = lastSeq;
    // A persistent hub (a no-op persist): entries reach it durable, there is no replay ring.
    this.hub = new EventHub(sessionId, lastSeq, () => undefined, o.now);
    // With shared heads, LedgerTails decides when this tail reads (catchUp).
    if (!o.heads) this.#arm();
    this.#armIdle();
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Highest seq read from the ledger. */
  get cursor(): number {
    return this.#cursor;
  }

  /** Reads what the ledger holds after the cursor (the shared poller saw the head move). */
  catchUp(): Promise<void> {
    return this.#poll(false);
  }

  /** Adds a subscriber; the returned function removes it (idempotent). No await in between: see events.ts. */
  subscribe(s: EventSubscriber): () => void {
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = null;
    const off = this.hub.subscribe(s);
    return () => {
      off();
      if (this.hub.subscriberCount === 0) this.#armIdle();
    };
  }

  /**
   * Reads the ledger now when it may hold `minSeq` (a reconnect whose Last-Event-ID is newer than what the
   * tail has read), then waits until everything read is handed out, so that `hub.deliveredSeq` is current.
   */
  async settle(minSeq: number): Promise<void> {
    if (this.#cursor < minSeq) {
      await this.#polling;
      await this.#poll(false);
    }
    for (let i = 0; i < 1000 && this.hub.pacing; i++) await new Promise((resolve) => setImmediate(resolve));
  }

  /** Ends every stream (reason) and stops polling. */
  stop(reason: 'archived' | 'shutdown'): void {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    if (this.#idle) clearTimeout(this.#idle);
    this.#timer = this.#idle = null;
    this.hub.closeAll(reason);
    this.onStop(this);
  }

  #armIdle(): void {
    if (this.#stopped) return;
    if (this.#idle) clearTimeout(this.#idle);
    this.#idle = setTimeout(() => {
      this.#idle = null;
      if (this.hub.subscriberCount === 0) this.stop('shutdown');
    }, this.o.idleMs ?? TAIL_IDLE_MS);
    this.#idle.unref();
  }

  #arm(delayMs = this.o.pollMs()): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#poll(true)
        .finally(() => this.#arm(this.#failing ? Math.min(2_000, this.o.pollMs() * 4) : undefined))
        .catch((err: unknown) => this.o.log.warn({ err, sessionId: this.sessionId }, 'ledger tail poll failed'));
    }, delayMs);
    this.#timer.unref();
  }

  /** One poll: pages in every entry after the cursor (waiting for the hub to pace each page out). */
  #poll(checkArchive: boolean): Promise<void> {
    this.#polling ??= (async () => {
      try {
        if (checkArchive && Date.now() - this.#lastArchiveCheck >= ARCHIVE_CHECK_MS) {
          this.#lastArchiveCheck = Date.now();
          const record = await this.o.store.getSession(this.sessionId);
          if (!record || record.archived) {
            this.stop('archived');
            return;
          }
        }
        for (;;) {
          if (this.#stopped) return;
          const page = await this.o.store.readLedger(this.sessionId, this.#cursor, TAIL_PAGE);
          if (this.#stopped || page.length === 0) break;
          this.#cursor = page[page.length - 1].seq;
          this.hub.deliver(page);
          if (page.length < TAIL_PAGE) break;
          // A backlog: the next page waits until this one is handed out (memory stays bounded).
          while (this.hub.pacing && !this.#stopped) await new Promise((resolve) => setImmediate(resolve));
        }
        if (this.#failing) this.o.log.info({ sessionId: this.sessionId }, 'ledger tail reads again');
        this.#failing = false;
      } catch (err) {
        if (!this.#failing)
          this.o.log.warn({ err: (err as Error).message, sessionId: this.sessionId }, 'ledger tail read failed; retrying');
        this.#failing = true;
      }
    })().finally(() => {
      this.#polling = null;
    });
    return this.#polling;
  }
}

/** This node's ledger tails, one per session that has remote subscribers here. */
export class LedgerTails {
  readonly #tails = new Map<string, LedgerTail>();
  readonly #opening = new Map<string, Promise<LedgerTail>>();
  #closed = false;
  #timer: NodeJS.Timeout | null = null;
  #failing = false;

  constructor(private readonly o: LedgerTailsOptions) {}

  /** The shared poller (with `heads`): runs while any tail does. */
  #arm(delayMs = this.o.pollMs()): void {
    if (this.#timer || this.#closed || !this.o.heads || this.#tails.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#pollHeads()
        .finally(() => {
          this.#timer = null;
          this.#arm(this.#failing ? Math.min(2_000, this.o.pollMs() * 4) : undefined);
        })
        .catch((err: unknown) => this.o.log.warn({ err }, 'ledger heads poll failed'));
    }, delayMs);
    this.#timer.unref();
  }

  async #pollHeads(): Promise<void> {
    const tails = [...this.#tails.values()];
    if (tails.length === 0 || !this.o.heads) return;
    try {
      const heads = await this.o.heads(tails.map((t) => t.sessionId));
      const reads: Array<Promise<void>> = [];
      for (const tail of tails) {
        const h = heads.get(tail.sessionId);
        if (!h || h.archived !== false) tail.stop('archived');
        else if (h.head > tail.cursor) reads.push(tail.catchUp());
      }
      await Promise.all(reads);
      if (this.#failing) this.o.log.info({ tails: tails.length }, 'ledger heads read again');
      this.#failing = false;
    } catch (err) {
      if (!this.#failing) this.o.log.warn({ err: (err as Error).message, tails: tails.length }, 'ledger heads read failed; retrying');
      this.#failing = true;
    }
  }

  /** True when this node hosts the session (its events stream from the local actor, not a tail). */
  hostsHere(sessionId: string): boolean {
    return this.o.hostsHere(sessionId);
  }

  /** Tails running now (host_info, tests). */
  get size(): number {
    return this.#tails.size;
  }

  /** The session's tail (started when there is none), settled up to `minSeq` (see LedgerTail.settle). */
  async open(sessionId: string, minSeq = 0): Promise<LedgerTail> {
    // A tail may stop (idle) while a caller waits for it to settle: the caller gets a fresh one.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.#closed) break;
      const tail = await this.#open(sessionId);
      await tail.settle(minSeq);
      if (!tail.stopped) return tail;
    }
    throw new ServiceError('SERVICE_UNAVAILABLE', 'server is shutting down');
  }

  async #open(sessionId: string): Promise<LedgerTail> {
    let tail = this.#tails.get(sessionId);
    if (!tail) {
      let opening = this.#opening.get(sessionId);
      if (!opening) {
        opening = (async () => {
          const last = await this.o.store.lastLedgerSeq(sessionId);
          const t = new LedgerTail(sessionId, last, this.o, (gone) => {
            if (this.#tails.get(sessionId) === gone) this.#tails.delete(sessionId);
          });
          if (this.#closed) t.stop('shutdown');
          else {
            this.#tails.set(sessionId, t);
            this.#arm();
          }
          return t;
        })().finally(() => this.#opening.delete(sessionId));
        this.#opening.set(sessionId, opening);
      }
      tail = await opening;
    }
    return tail;
  }

  /** Ends every tailed stream with `done` (server shutdown). */
  close(): void {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    for (const tail of [...this.#tails.values()]) tail.stop('shutdown');
  }
}
