// actors/comms/inbox.ts: every session's bounded, durable inbox (comms messages, peer requests and
// responses, external events). Admission commits the entry to the store before it is acknowledged; a
// turn claims the pending entries as injected context (or pulls them as steering input) and deletes
// them in its own commit, so an admitted input is delivered exactly once, across kill -9 and restart.
// Only counts, claimed keys and steering keys are held in memory; the entries live in the store.
import type { InboxEntry } from '../../contracts/comms.ts';
import { INBOX_ENTRY_KIND, namespaceOf, readValidRecords } from '../../storage/record-kinds.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

/** The store namespace of one session's inbox. */
function inboxNs(sessionId: string): string {
  return namespaceOf(INBOX_ENTRY_KIND, sessionId);
}

/** The inbox is at its bound: admission is refused (503 on the webhook routes). */
export class InboxFullError extends Error {
  constructor(
    readonly sessionId: string,
    readonly capacity: number,
  ) {
    super(`event inbox full (${capacity} entries) for session ${sessionId}`);
    this.name = 'InboxFullError';
  }
}

/** What a claim took: entries as context, the woken entry (the prompt), and steering pulled later. */
export interface InboxClaim {
  context: InboxEntry[];
  wake: InboxEntry | undefined;
  /** Keys this claim holds (context, wake, and steering pulled so far). */
  readonly keys: string[];
  /** Steering entries admitted since, not yet claimed by anyone; claims them. */
  pullSteer(): InboxEntry[];
  deleteOps(): StoreOp[];
  settle(committed: boolean): void;
}

interface SessionInbox {
  /** Entries in the store (admitted, not yet consumed by a committed turn); null until counted. */
  count: number | null;
  counting: Promise<void> | null;
  /** Admissions in flight (reserved against the bound before their commit). */
  reserved: number;
  claimed: Set<string>;
  /** Steering entries admitted while this process ran and not yet claimed, oldest first. */
  steer: Array<{ key: string; entry: InboxEntry }>;
}

/** How many sessions the known-empty set remembers before it starts over (a miss only costs one store read). */
const KNOWN_EMPTY_MAX = 10_000;

export class Inboxes {
  private readonly boxes = new Map<string, SessionInbox>();
  /**
   * Sessions whose inbox this process read empty and has admitted nothing to since, so a turn does not
   * list an empty namespace (most turns of most sessions), each with the writer epoch it was read under
   * (opts.writerEpoch). On a cluster node only the node holding a session's lease admits to its inbox, so
   * the memo holds while that lease stays this node's: a lease that moved away and back has a higher rev,
   * and another node may have admitted meanwhile.
   */
  private readonly knownEmpty = new Map<string, number>();
  /** Bumped by every admission: a list read that began before one never marks its session empty. */
  private admissions = 0;
  private lastMs = 0;
  private seq = 0;

  constructor(
    private readonly store: Store,
    private readonly opts: {
      capacity(): number;
      now(): number;
      onSettled(sessionId: string): void;
      /**
       * A number that stays the same while this process remains the only writer of a session's inbox (a
       * sole process: always 0; a cluster node: the rev of its lease on the session), or undefined when it
       * cannot say (a cluster node not holding the lease): an inbox read empty is remembered only under it.
       */
      writerEpoch(sessionId: string): number | undefined;
    },
  ) {}

  /** A key ordered by admission: epoch ms then a per-ms counter (monotonic within the process). */
  nextKey(): string {
    const now = Math.max(this.opts.now(), this.lastMs);
    if (now === this.lastMs) this.seq++;
    else {
      this.lastMs = now;
      this.seq = 0;
    }
    return `${String(now).padStart(15, '0')}-${String(this.seq).padStart(6, '0')}`;
  }

  private box(sessionId: string): SessionInbox {
    let b = this.boxes.get(sessionId);
    if (!b) {
      b = { count: null, counting: null, reserved: 0, claimed: new Set(), steer: [] };
      this.boxes.set(sessionId, b);
    }
    return b;
  }

  private async counted(sessionId: string): Promise<SessionInbox> {
    const b = this.box(sessionId);
    if (b.count === null) {
      b.counting ??= this.store.listRecords(inboxNs(sessionId)).then((rows) => {
        b.count = rows.length;
        b.counting = null;
      });
      await b.counting;
    }
    return b;
  }

  /** Entries waiting for a turn (admitted and durable, not consumed), including claimed ones. */
  async depth(sessionId: string): Promise<number> {
    return (await this.counted(sessionId)).count ?? 0;
  }

  /**
   * Admits one entry: reserves a slot against the bound, then commits it (with `extraOps`, e.g. the
   * inbound-request record) in one atomic write. Resolves once durable; throws InboxFullError at the bound.
   */
  async admit(sessionId: string, entry: InboxEntry, key: string, extraOps: StoreOp[] = []): Promise<void> {
    const b = await this.counted(sessionId);
    const capacity = this.opts.capacity();
    // Checked and reserved synchronously: concurrent admissions never overshoot the bound.
    if ((b.count ?? 0) + b.reserved >= capacity) throw new InboxFullError(sessionId, capacity);
    b.reserved++;
    this.admissions++;
    this.knownEmpty.delete(sessionId);
    try {
      await this.store.commit([{ op: 'putRecord', ns: inboxNs(sessionId), key, value: entry }, ...extraOps]);
      b.count = (b.count ?? 0) + 1;
    } finally {
      b.reserved--;
    }
    if (entry.handling_mode === 'steer' && entry.wake) b.steer.push({ key, entry });
  }

  /** Unclaimed entries, oldest first (read through their record kind; a malformed one is logged as refused and skipped). */
  async pending(sessionId: string): Promise<Array<{ key: string; entry: InboxEntry }>> {
    const epoch = this.opts.writerEpoch(sessionId);
    if (epoch !== undefined && this.knownEmpty.get(sessionId) === epoch) return [];
    const before = this.admissions;
    // A malformed entry is logged as refused (storage/record-kinds.ts) and skipped: it never reaches a turn.
    const rows = await readValidRecords<InboxEntry>(this.store, INBOX_ENTRY_KIND, sessionId);
    if (rows.length === 0 && epoch !== undefined && before === this.admissions) {
      if (this.knownEmpty.size >= KNOWN_EMPTY_MAX) this.knownEmpty.clear();
      this.knownEmpty.set(sessionId, epoch);
    }
    const claimed = this.boxes.get(sessionId)?.claimed;
    const out: Array<{ key: string; entry: InboxEntry }> = [];
    for (const { key, value } of rows) {
      if (claimed?.has(key)) continue;
      out.push({ key, entry: value });
    }
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** The oldest unclaimed entry that wakes a keep-alive session, if any. */
  async nextWaking(sessionId: string): Promise<{ key: string; entry: InboxEntry } | undefined> {
    return (await this.pending(sessionId)).find((p) => p.entry.wake);
  }

  /**
   * Claims the pending entries for one turn: every unclaimed entry (up to and including `wakeKey`, whose
   * entry becomes the prompt). Claimed entries are invisible to other claims until settled.
   */
  async claim(sessionId: string, wakeKey?: string): Promise<InboxClaim> {
    const pending = await this.pending(sessionId);
    const b = this.box(sessionId);
    const keys: string[] = [];
    const context: InboxEntry[] = [];
    let wake: InboxEntry | undefined;
    for (const { key, entry } of pending) {
      if (b.claimed.has(key)) continue; // claimed by a concurrent claim while the list was read
      if (wakeKey !== undefined && key > wakeKey) break;
      b.claimed.add(key);
      keys.push(key);
      if (key === wakeKey) wake = entry;
      else context.push(entry);
    }
    if (b.steer.length) b.steer = b.steer.filter((s) => !b.claimed.has(s.key));
    let settled = false;
    const ns = inboxNs(sessionId);
    return {
      context,
      wake,
      keys,
      pullSteer: () => {
        if (settled) return [];
        const out: InboxEntry[] = [];
        for (const s of b.steer) {
          if (b.claimed.has(s.key)) continue;
          b.claimed.add(s.key);
          keys.push(s.key);
          out.push(s.entry);
        }
        b.steer = [];
        return out;
      },
      deleteOps: () => keys.map((key): StoreOp => ({ op: 'deleteRecord', ns, key })),
      settle: (committed) => {
        if (settled) return;
        settled = true;
        for (const key of keys) b.claimed.delete(key);
        if (committed && b.count !== null) b.count = Math.max(0, b.count - keys.length);
        // An empty (or never counted) inbox keeps no state in memory: it is recounted on next use.
        if (
          (b.count === null || b.count === 0) &&
          b.claimed.size === 0 &&
          b.reserved === 0 &&
          b.steer.length === 0 &&
          b.counting === null
        ) {
          this.boxes.delete(sessionId);
        }
        this.opts.onSettled(sessionId);
      },
    };
  }
}
