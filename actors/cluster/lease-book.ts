// actors/cluster/lease-book.ts: the ownership leases this node holds. A lease is a record (ns LEASE_NS,
// key `<kind>:<id>`) whose `rev` is the fencing token: claiming a free or expired lease is a compare-and-set
// that bumps it, renewal keeps it, and every commit touching a leased resource (a session, a mob with its
// flow runs and ledger events, a work binding: leaseOf) carries a checkRecord on the token (fencedStore),
// so a node whose lease was taken over can never commit over the new owner. The same on every backend several
// processes can open (postgres, lmdb, sqlite): the fence is a read inside the commit's own transaction. A
// released lease stays as a tombstone (`node_id: ''`) keeping its token, so tokens never repeat.
import { ServiceError, isServiceError } from '../../contracts/errors.ts';
import { LEASE_NS, type ClusterBackend, type LeaseValue } from '../../storage/cluster-backend.ts';
import { LEASE_KIND, readRecord } from '../../storage/record-kinds.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { MOB_KIND, MOB_NS } from '../mob/mob-actor.ts';
import { EVENTS_NS as MOB_EVENTS_NS } from '../mob/mob-ledger.ts';
import { RUNS_NS as MOB_RUNS_NS } from '../mob/flow-runner.ts';
import { BINDING_KIND, BINDINGS_NS } from '../work-bindings/binding-actor.ts';

export { LEASE_NS, type LeaseValue };

/** What a claim found: this node owns it now, or another live node does. */
export type ClaimResult = { ok: true; takeover: boolean } | { ok: false; owner: LeaseValue };

interface Held {
  rev: number;
  /** Local clock deadline (a margin before the database deadline) after which the lease is not trusted. */
  trustUntil: number;
}

export interface LeaseBookOptions {
  store: Store;
  sql: ClusterBackend;
  nodeId: string;
  url(): string;
  leaseMs: number;
  /** The database clock, estimated locally (ms). */
  now(): number;
  /** Called when a held lease turned out to be taken over (renewal or fenced commit failed). */
  onLost(kind: string, id: string): void;
  /** Leases renewed per commit (renewAll); default RENEW_CHUNK. */
  renewChunk?: number;
}

const keyOf = (kind: string, id: string): string => `${kind}:${id}`;

/** Leases renewed per commit (renewAll). */
const RENEW_CHUNK = 500;

/** The leased resource one write belongs to. */
interface LeaseRef {
  kind: string;
  id: string;
}

/**
 * Which lease a write is made under: a session's rows, ledger and record (kind `session`); a mob's record,
 * its flow runs (`<mob_id>/<run_id>`) and its events in the realm's mob ledger (kind `mob`: a mob's members
 * are sessions with leases of their own, claimed on the node that drives them, the mob's); a work binding's
 * record (kind `work_binding`). Other records (the WorkGraph, schedules, chains and keys) are guarded by
 * compare-and-set on their own revisions instead.
 */
function leaseOf(op: StoreOp): LeaseRef | undefined {
  if (op.op === 'putSession')
    return typeof op.session?.session_id === 'string' ? { kind: 'session', id: op.session.session_id } : undefined;
  if ('sessionId' in op) return typeof op.sessionId === 'string' ? { kind: 'session', id: op.sessionId } : undefined;
  if (op.op !== 'putRecord' && op.op !== 'deleteRecord') return undefined;
  switch (op.ns) {
    case MOB_NS:
      return { kind: MOB_KIND, id: op.key };
    case MOB_RUNS_NS: {
      const at = op.key.indexOf('/');
      return at > 0 ? { kind: MOB_KIND, id: op.key.slice(0, at) } : undefined;
    }
    case MOB_EVENTS_NS: {
      // `*`: a realm-wide event (a scope grant or revoke), under no mob's lease.
      const mobId = op.op === 'putRecord' ? (op.value as { mob_id?: unknown } | null)?.mob_id : undefined;
      return typeof mobId === 'string' && mobId !== '*' ? { kind: MOB_KIND, id: mobId } : undefined;
    }
    case BINDINGS_NS:
      return { kind: BINDING_KIND, id: op.key };
    default:
      return undefined;
  }
}

export class LeaseBook {
  readonly held = new Map<string, Held>();
  /** The renewal in flight (settled, never rejecting), which a release waits for. */
  #renewing: Promise<void> = Promise.resolve();
  takeovers = 0;
  lost = 0;
  constructor(private readonly o: LeaseBookOptions) {}

  get nodeId(): string {
    return this.o.nodeId;
  }

  /** True while this node holds the lease and it is well within its term. */
  holds(kind: string, id: string): boolean {
    return this.trustedRev(kind, id) !== undefined;
  }

  /** The rev of this node's lease while it holds it well within its term, else undefined. */
  trustedRev(kind: string, id: string): number | undefined {
    const h = this.held.get(keyOf(kind, id));
    return h !== undefined && h.trustUntil > Date.now() ? h.rev : undefined;
  }

  async read(kind: string, id: string): Promise<LeaseValue | undefined> {
    return readRecord<LeaseValue>(this.o.store, LEASE_KIND, keyOf(kind, id));
  }

  /** True when `lease` is held by a node other than this one, has not expired and its owner is not known dead. */
  heldElsewhere(lease: LeaseValue | undefined): boolean {
    return (
      lease !== undefined &&
      lease.node_id !== '' &&
      lease.node_id !== this.o.nodeId &&
      lease.expires_at_ms > this.o.now() &&
      !this.o.sql.ownerGone?.(lease)
    );
  }

  #value(rev: number): LeaseValue {
    return { v: 1, rev, node_id: this.o.nodeId, url: this.o.url(), expires_at_ms: this.o.now() + this.o.leaseMs, ...this.o.sql.stamp };
  }

  /** Takes the lease when it is free, expired or already ours; answers the owner otherwise. */
  async claim(kind: string, id: string): Promise<ClaimResult> {
    const key = keyOf(kind, id);
    for (let attempt = 0; attempt < 3; attempt++) {
      const current = await readRecord<LeaseValue>(this.o.store, LEASE_KIND, key);
      if (current && this.heldElsewhere(current)) return { ok: false, owner: current };
      const mine = current?.node_id === this.o.nodeId;
      const rev = mine ? current.rev : (current?.rev ?? 0) + 1;
      const started = Date.now();
      const value = this.#value(rev);
      try {
        await this.o.store.commit([
          { op: 'checkRecord', ns: LEASE_NS, key, rev: current?.rev ?? null },
          { op: 'putRecord', ns: LEASE_NS, key, value },
        ]);
      } catch (err) {
        if (isServiceError(err) && err.code === 'CONFLICT') continue;
        throw err;
      }
      this.held.set(key, { rev, trustUntil: started + this.o.leaseMs * 0.8 });
      // A tombstone (released cleanly) is no takeover: nothing was left running.
      const takeover = current !== undefined && !mine && current.node_id !== '';
      if (takeover) this.takeovers++;
      return { ok: true, takeover };
    }
    const owner = await readRecord<LeaseValue>(this.o.store, LEASE_KIND, key);
    if (owner && this.heldElsewhere(owner)) return { ok: false, owner };
    throw new ServiceError('SERVICE_UNAVAILABLE', `could not claim ${key}: contended`, { lease: key });
  }

  /**
   * Ops that claim a lease nobody has held yet (a session being created) inside the commit that first
   * writes it, saving a transaction; `landed()` records it once that commit succeeded. When the lease
   * exists after all, the commit fails with CONFLICT on it and the caller claims the usual way.
   */
  freshClaim(kind: string, id: string): { key: string; ops: StoreOp[]; landed(): void } {
    const key = keyOf(kind, id);
    const started = Date.now();
    const value = this.#value(1);
    return {
      key,
      ops: [
        { op: 'checkRecord', ns: LEASE_NS, key, rev: null },
        { op: 'putRecord', ns: LEASE_NS, key, value },
      ],
      landed: () => this.held.set(key, { rev: 1, trustUntil: started + this.o.leaseMs * 0.8 }),
    };
  }

  /**
   * Gives the lease up (the actor left this node), leaving a tombstone with the same token: the next owner's
   * token is higher, so a token once given up can never fence a commit again. Losing a race here is harmless.
   */
  async release(kind: string, id: string): Promise<void> {
    const key = keyOf(kind, id);
    const h = this.held.get(key);
    if (!h) return;
    this.held.delete(key);
    // A renewal in flight may rewrite this lease (its check is on the same rev): the tombstone goes after it.
    await this.#renewing;
    const tombstone: LeaseValue = { v: 1, rev: h.rev, node_id: '', url: '', expires_at_ms: 0 };
    await this.o.store
      .commit([
        { op: 'checkRecord', ns: LEASE_NS, key, rev: h.rev },
        { op: 'putRecord', ns: LEASE_NS, key, value: tombstone },
      ])
      .catch(() => undefined);
  }

  /**
   * Extends every held lease; a lease no longer ours is dropped and reported through onLost. In commits of
   * at most RENEW_CHUNK leases, one after another, so a node holding many leases never blocks its event
   * loop for the whole set at once (each commit's checks and writes run synchronously in the transaction).
   */
  async renewAll(): Promise<void> {
    if (this.held.size === 0) return;
    const all = [...this.held].map(([key, h]) => ({ key, rev: h.rev }));
    const chunk = this.o.renewChunk ?? RENEW_CHUNK;
    for (let at = 0; at < all.length; at += chunk) {
      // Still held as listed: a lease released (or lost) while earlier chunks were renewed is left alone,
      // since its check is on a rev its tombstone keeps. Filtered just before the commit is issued; a release
      // after that waits for this chunk (#renewing).
      const batch = all.slice(at, at + chunk).filter(({ key, rev }) => this.held.get(key)?.rev === rev);
      if (batch.length === 0) continue;
      const started = Date.now();
      const renewing = this.o.sql.renew(this.o.nodeId, batch, this.o.leaseMs, (rev) => this.#value(rev));
      this.#renewing = renewing.then(
        () => undefined,
        () => undefined,
      );
      const renewed = await renewing;
      for (const { key, rev } of batch) {
        const h = this.held.get(key);
        if (!h || h.rev !== rev) continue;
        if (renewed.has(key)) h.trustUntil = started + this.o.leaseMs * 0.8;
        else this.drop(key);
      }
    }
  }

  /** Forgets a lease found taken over and tells the owner of the actor. */
  drop(key: string): void {
    if (!this.held.delete(key)) return;
    this.lost++;
    const at = key.indexOf(':');
    this.o.onLost(key.slice(0, at), key.slice(at + 1));
  }

  /** Ops that make a commit fail unless this node still holds the leases it writes under (of leasesOf(ops)). */
  fenceOps(leases: readonly KeyedLease[]): StoreOp[] {
    const fences: StoreOp[] = [];
    for (const l of leases) {
      const h = this.held.get(l.key);
      if (h) fences.push({ op: 'checkRecord', ns: LEASE_NS, key: l.key, rev: h.rev });
    }
    return fences;
  }

  /** The leased resources of leasesOf(ops) this node holds no lease for. */
  unleased(leases: readonly KeyedLease[]): KeyedLease[] {
    return leases.filter((l) => !this.held.has(l.key));
  }
}

/** A leased resource with its lease's record key. */
type KeyedLease = LeaseRef & { key: string };

/**
 * The distinct leases a batch writes under. One pass; a run of ops under the same resource (a turn's rows,
 * ledger entries and record, or a streamed delta's one entry) costs one comparison per op after the first.
 */
function leasesOf(ops: readonly StoreOp[]): KeyedLease[] {
  const out: KeyedLease[] = [];
  let last: LeaseRef | undefined;
  for (const op of ops) {
    const ref = leaseOf(op);
    if (!ref || (last !== undefined && ref.id === last.id && ref.kind === last.kind)) continue;
    last = ref;
    const key = keyOf(ref.kind, ref.id);
    if (!out.some((l) => l.key === key)) out.push({ kind: ref.kind, id: ref.id, key });
  }
  return out;
}

/**
 * The store every actor writes through on a cluster node: a write to a leased resource carries a fence on
 * the node's lease of it (claimed first when the node holds none, e.g. a session or mob being created); a
 * write refused by its fence drops the lease, so the actor leaves this node.
 */
export function fencedStore(inner: Store, book: LeaseBook): Store {
  const fenced: Store = Object.create(inner) as Store;
  return Object.assign(fenced, {
    backend: inner.backend,
    persistent: inner.persistent,
    getSession: inner.getSession.bind(inner),
    listSessions: inner.listSessions.bind(inner),
    countSessions: inner.countSessions.bind(inner),
    readRows: inner.readRows.bind(inner),
    readLedger: inner.readLedger.bind(inner),
    lastLedgerSeq: inner.lastLedgerSeq.bind(inner),
    getRecord: inner.getRecord.bind(inner),
    listRecords: inner.listRecords.bind(inner),
    close: inner.close.bind(inner),
    async commit(ops: StoreOp[]): Promise<void> {
      if (!Array.isArray(ops)) return inner.commit(ops);
      const leases = leasesOf(ops);
      // Resources this node writes without holding their lease: first try claiming them in the same commit.
      const fresh = book.unleased(leases).map((r) => book.freshClaim(r.kind, r.id));
      try {
        await commitFenced(
          inner,
          book,
          ops,
          leases,
          fresh.flatMap((f) => f.ops),
        );
        for (const f of fresh) f.landed();
        return;
      } catch (err) {
        const failed = leaseConflict(err);
        if (!failed || !fresh.some((f) => f.key === failed.key && failed.expected === null)) throw err;
      }
      // A lease was there already (taken by another node, or ours from before): claim it the usual way.
      for (const { kind, id } of book.unleased(leases)) {
        const claim = await book.claim(kind, id);
        if (!claim.ok) {
          const ids = kind === 'session' ? { session_id: id } : { kind, id };
          throw new ServiceError('CONFLICT', `${kind} ${id} is hosted by node ${claim.owner.node_id}`, {
            ...ids,
            owner_node: claim.owner.node_id,
          });
        }
      }
      await commitFenced(inner, book, ops, leases, []);
    },
  });
}

/** The lease a CONFLICT is about (its checkRecord details), if it is one. */
function leaseConflict(err: unknown): { key: string; expected: number | null } | undefined {
  if (!isServiceError(err) || err.code !== 'CONFLICT') return undefined;
  const d = err.details as { ns?: unknown; key?: unknown; expected_rev?: unknown } | undefined;
  if (d?.ns !== LEASE_NS || typeof d.key !== 'string') return undefined;
  return { key: d.key, expected: typeof d.expected_rev === 'number' ? d.expected_rev : null };
}

/** Commits `ops` behind `claims` and a fence on every held lease they write under; a failed fence drops its lease. */
async function commitFenced(
  inner: Store,
  book: LeaseBook,
  ops: StoreOp[],
  leases: readonly KeyedLease[],
  claims: StoreOp[],
): Promise<void> {
  const guards = claims.length ? [...claims, ...book.fenceOps(leases)] : book.fenceOps(leases);
  try {
    await inner.commit(guards.length ? guards.concat(ops) : ops);
  } catch (err) {
    const failed = leaseConflict(err);
    // A stale lease must not be trusted any longer: the actor leaves this node.
    if (failed && failed.expected !== null && book.held.get(failed.key)?.rev === failed.expected) book.drop(failed.key);
    throw err;
  }
}
