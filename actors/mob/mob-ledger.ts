// actors/mob/mob-ledger.ts: the durable ledger of structural mob events. Each event is a Store record in
// namespace `mob.events`, keyed by its zero-padded cursor, committed together with the ledger head
// (`mob.meta`/`head`) in one atomic commit, on whatever backend the realm uses (lmdb, sqlite, jsonl,
// memory). Appends are chained, so cursors are monotonic and gapless in commit order. After an event is
// handed to the live subscribers (projected) the last projected cursor is written to `mob.meta`/
// `projected`; on open, events after it (committed but never projected before a crash) are projected
// again, so nothing written while the projector was down is lost. Readers resume from any cursor.
// Each append also checks that its cursor's key is still free (checkRecord), so two processes sharing a
// realm never overwrite each other's events: the loser catches up from the store and takes the next
// cursor. (Live subscribers see only this process's appends; a query first compares the stored head and
// catches up when another process appended.)
// Retention: the ledger keeps the newest `retain` events. Once the head is a batch past that, the older
// events are deleted in one commit and the floor (`mob.meta`/`floor`: the cursor of the newest deleted
// event) moves up. A reader's cursor must lie within [floor, head]: older (its events are gone) or
// beyond the head (it never existed) is refused as 410 STALE_CURSOR (JSON-RPC -32023) with
// `details: {watermark, requested, floor_cursor, head_cursor, reason}`.
import { randomUUID } from 'node:crypto';
import type { MobEvent, MobEventRecord, StructuralKind } from '../../contracts/mob.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { MOB_CURSOR_KIND, MOB_EVENT_KIND, namespaceOf, readRecord, readRecords } from '../../storage/record-kinds.ts';
import type { Store, StoreOp } from '../../storage/store.ts';

export const EVENTS_NS = namespaceOf(MOB_EVENT_KIND);
const META_NS = namespaceOf(MOB_CURSOR_KIND);
/** Most recent events kept in memory for cheap tails; older reads scan the store. */
const TAIL = 2048;
/** Events kept when no retention is configured (`[mob] event_retention`). */
const DEFAULT_EVENT_RETENTION = 100_000;

export interface MobEventFilter {
  mob_id?: string;
  kinds?: readonly string[];
  agent_identity?: string;
  run_id?: string;
}

export interface NewMobEvent {
  mob_id: string;
  kind: StructuralKind;
  run_id?: string | null;
  step_id?: string | null;
  agent_identity?: string | null;
  mob_labels?: Record<string, string>;
  run_labels?: Record<string, string>;
  data?: Record<string, unknown>;
}

const pad = (cursor: number) => String(cursor).padStart(16, '0');

export function matches(e: MobEvent, f: MobEventFilter): boolean {
  if (f.mob_id !== undefined && e.mob_id !== f.mob_id) return false;
  if (f.kinds && f.kinds.length > 0 && !f.kinds.includes(e.kind)) return false;
  if (f.agent_identity !== undefined && e.agent_identity !== f.agent_identity) return false;
  if (f.run_id !== undefined && e.run_id !== f.run_id) return false;
  return true;
}

function wire(rec: MobEventRecord): MobEvent {
  const { v: _v, ...rest } = rec;
  return rest;
}

export class MobLedger {
  private head = 0;
  /** Cursor of the newest deleted event (0: nothing deleted); readers may resume from here on. */
  private floor = 0;
  private projectedCursor = 0;
  private tail: MobEvent[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private readonly subscribers = new Set<(e: MobEvent) => void>();
  private projectTimer: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly retain = DEFAULT_EVENT_RETENTION,
  ) {}

  get headCursor(): number {
    return this.head;
  }

  get floorCursor(): number {
    return this.floor;
  }

  get projected(): number {
    return this.projectedCursor;
  }

  /**
   * Reads the head and the projected cursor, loads the tail and projects what was never projected. It runs
   * in the append chain: an append made before open() (another module starting first) completes before it,
   * and appends made after wait for it, so open() never interleaves with an append's commit (which would
   * leave that event twice in the in-memory tail).
   */
  open(): Promise<void> {
    const opened = this.chain.then(() => this.load());
    this.chain = opened.catch(() => undefined);
    return opened;
  }

  private async load(): Promise<void> {
    const head = await this.cursor('head');
    const projected = await this.cursor('projected');
    const floor = await this.cursor('floor');
    const all = await this.readAll();
    this.head = Math.max(head?.cursor ?? 0, all.at(-1)?.cursor ?? 0);
    this.floor = Math.min(floor?.cursor ?? 0, this.head);
    this.projectedCursor = Math.min(projected?.cursor ?? 0, this.head);
    this.tail = all.slice(-TAIL);
    // Events after the projected cursor were committed but never projected: project them now.
    for (const e of all) if (e.cursor > this.projectedCursor) this.project(e);
  }

  /** Appends one event; resolves with it once it is durable (and handed to live subscribers). */
  append(input: NewMobEvent): Promise<MobEvent> {
    const next = this.chain.then(async () => {
      let rec: MobEventRecord;
      for (let attempt = 0; ; attempt++) {
        const cursor = this.head + 1;
        rec = {
          v: 1,
          event_id: randomUUID(),
          cursor,
          mob_id: input.mob_id,
          timestamp_ms: this.now(),
          kind: input.kind,
          run_id: input.run_id ?? null,
          step_id: input.step_id ?? null,
          agent_identity: input.agent_identity ?? null,
          mob_labels: input.mob_labels ?? {},
          run_labels: input.run_labels ?? {},
          data: input.data ?? {},
        };
        try {
          // The cursor's key must still be free: another process sharing the realm may have taken it.
          await this.store.commit([
            { op: 'checkRecord', ns: EVENTS_NS, key: pad(cursor), rev: null },
            { op: 'putRecord', ns: EVENTS_NS, key: pad(cursor), value: rec },
            { op: 'putRecord', ns: META_NS, key: 'head', value: { v: 1, cursor } },
          ]);
          break;
        } catch (err) {
          // Only a taken cursor is caught up with; any other refusal (a cluster node's lost lease) is final.
          const onCursor =
            err instanceof ServiceError && err.code === 'CONFLICT' && (err.details as { ns?: unknown } | undefined)?.ns === EVENTS_NS;
          if (!onCursor || attempt >= 16) throw err;
          // Catch up with the other writer: its events are in the store, not in this process's tail.
          this.adopt(await this.readAll());
        }
      }
      const e = wire(rec);
      // A concurrent range() may have caught up from the store after this commit and already holds it.
      this.adopt([e]);
      this.project(e);
      // A failed trim leaves the old events in place; the next append tries again.
      await this.trim().catch(() => undefined);
      return e;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Deletes the events older than the newest `retain`, once a batch of them (an eighth of the retention,
   * at least 16) has gathered: one commit with the new floor. Runs in the append chain.
   */
  private async trim(): Promise<void> {
    const keepFrom = this.head - this.retain;
    if (keepFrom - this.floor < Math.max(16, Math.floor(this.retain / 8))) return;
    const ops: StoreOp[] = [];
    for (let c = this.floor + 1; c <= keepFrom; c++) ops.push({ op: 'deleteRecord', ns: EVENTS_NS, key: pad(c) });
    ops.push({ op: 'putRecord', ns: META_NS, key: 'floor', value: { v: 1, cursor: keepFrom } });
    await this.store.commit(ops);
    this.setFloor(keepFrom);
  }

  private setFloor(cursor: number): void {
    if (cursor <= this.floor) return;
    this.floor = cursor;
    this.tail = this.tail.filter((e) => e.cursor > cursor);
  }

  /** Another process on the realm may have appended or trimmed: the stored head and floor say so. */
  private async catchUp(): Promise<void> {
    const floor = await this.cursor('floor');
    if (floor) this.setFloor(floor.cursor);
    const stored = await this.cursor('head');
    if (stored && stored.cursor > this.head) this.adopt(await this.readAll());
  }

  /**
   * The cursor a reader resumes after: `requested`, checked against what the ledger holds now, or the
   * floor (the oldest retained event follows it) when none was given. A cursor below the floor or beyond
   * the head is refused: 410 STALE_CURSOR.
   */
  async resolveCursor(requested: number | undefined): Promise<number> {
    await this.catchUp();
    if (requested === undefined) return this.floor;
    if (requested >= this.floor && requested <= this.head) return requested;
    const trimmed = requested < this.floor;
    throw new ServiceError(
      'STALE_CURSOR',
      trimmed
        ? `cursor ${requested} is older than the mob event ledger retains (oldest resumable cursor ${this.floor})`
        : `cursor ${requested} is beyond the mob event ledger head ${this.head}`,
      {
        watermark: trimmed ? this.floor : this.head,
        requested,
        floor_cursor: this.floor,
        head_cursor: this.head,
        reason: trimmed ? 'trimmed' : 'beyond_head',
      },
    );
  }

  /** Events with cursor > after matching the filter, oldest first, at most `limit`. */
  async range(after: number, limit: number, filter: MobEventFilter = {}): Promise<MobEvent[]> {
    await this.catchUp();
    const inTail = this.tail.length > 0 && this.tail[0].cursor <= after + 1;
    const source = inTail || this.head === 0 ? this.tail : await this.readAll();
    const out: MobEvent[] = [];
    for (const e of source) {
      if (e.cursor <= after || !matches(e, filter)) continue;
      out.push(e);
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Live events from now on; returns the unsubscribe function. */
  subscribe(fn: (e: MobEvent) => void): () => void {
    this.subscribers.add(fn);
    return () => this.subscribers.delete(fn);
  }

  /** Resolves once every append so far is durable and its projected cursor written. */
  async flushed(): Promise<void> {
    await this.chain;
    await this.projectTimer;
  }

  private project(e: MobEvent): void {
    for (const fn of this.subscribers) fn(e);
    if (e.cursor <= this.projectedCursor) return;
    this.projectedCursor = e.cursor;
    // The projected cursor is written behind the events, coalesced: one write per burst.
    this.projectTimer ??= Promise.resolve().then(async () => {
      this.projectTimer = null;
      await this.store
        .commit([{ op: 'putRecord', ns: META_NS, key: 'projected', value: { v: 1, cursor: this.projectedCursor } }])
        .catch(() => undefined);
    });
  }

  /**
   * Merges events read from the store (or just committed) into the in-memory tail by cursor, so a catch-up
   * read racing an append's commit neither duplicates that event nor drops one the append already added.
   */
  private adopt(events: readonly MobEvent[]): void {
    const last = this.tail.at(-1)?.cursor ?? 0;
    if (events.length === 1 && events[0].cursor > last) {
      // The common case: this process's own next event.
      this.tail.push(events[0]);
      if (this.tail.length > TAIL) this.tail.shift();
      this.head = Math.max(this.head, events[0].cursor);
      return;
    }
    const byCursor = new Map<number, MobEvent>();
    for (const e of this.tail) byCursor.set(e.cursor, e);
    for (const e of events) byCursor.set(e.cursor, e);
    const merged = [...byCursor.values()].sort((a, b) => a.cursor - b.cursor);
    this.tail = merged.length > TAIL ? merged.slice(-TAIL) : merged;
    this.head = Math.max(this.head, this.tail.at(-1)?.cursor ?? 0);
  }

  /** A stored cursor of the ledger (`head`, `projected` or `floor`). */
  private cursor(name: 'head' | 'projected' | 'floor'): Promise<{ cursor: number } | undefined> {
    return readRecord<{ cursor: number }>(this.store, MOB_CURSOR_KIND, name);
  }

  private async readAll(): Promise<MobEvent[]> {
    const rows = await readRecords<MobEventRecord>(this.store, MOB_EVENT_KIND);
    return rows.map((r) => wire(r.value)).sort((a, b) => a.cursor - b.cursor);
  }
}
