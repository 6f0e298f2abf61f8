// actors/cluster/cluster-node.ts: this process as one node of a Warren cluster on a realm several processes
// share (postgres, lmdb or sqlite; storage/cluster-backend.ts is what each backend provides).
// It advertises itself in the nodes table with heartbeats, holds and renews ownership leases (LeaseBook),
// gates the actor registry's hydration on them (ActorOwnership: a session lives on one node at a time),
// tells the HTTP layer where a session's requests go (route()), and reports node, peers and database
// state for /runtime/host_info and /runtime/health. app.ts builds one for every such backend.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { ClusterReport } from '../../contracts/cluster.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { Config } from '../../contracts/config.ts';
import type { ClusterBackend, NodeRow } from '../../storage/cluster-backend.ts';
import { PostgresCluster } from '../../storage/postgres-nodes.ts';
import { RecordCluster } from '../../storage/record-cluster.ts';
import type { Store } from '../../storage/store.ts';
import type { ActorOwnership } from '../actor-registry.ts';
import { MOB_KIND } from '../mob/mob-actor.ts';
import { BINDING_KIND } from '../work-bindings/binding-actor.ts';
import { LeaseBook, fencedStore, type LeaseValue } from './lease-book.ts';

/**
 * The kinds whose actors are leased to one node at a time: sessions, mobs (their members' sessions are
 * claimed on the node driving the mob) and work bindings. WorkGraph namespaces and schedules are not: any
 * node hosts them, and each of their writes is a compare-and-set on the revision it read (the namespace's
 * head, the schedule's or occurrence's record), which refuses a node that fell behind the same way.
 */
const LEASED_KINDS: ReadonlySet<string> = new Set(['session', MOB_KIND, BINDING_KIND]);

/**
 * Kinds with work of their own (a mob's flow runs, a binding following its run): when their owner dies, a
 * survivor brings them back without waiting for a request (the orphan sweep). Sessions wait for one.
 */
const ORPHAN_KINDS: readonly string[] = [MOB_KIND, BINDING_KIND];
const ORPHAN_BATCH = 50;

export interface ClusterOptions {
  sql: ClusterBackend;
  /** The store leases are claimed through (unfenced). */
  store: Store;
  log: Logger;
  leaseMs: number;
  nodeId?: string;
  /** Where peers reach this node; default: the listening URL (set once the server listens). */
  advertiseUrl?: string;
  /** Leases renewed per commit (LeaseBookOptions.renewChunk). */
  renewChunk?: number;
}

/** Where a session request goes. */
export type Route = { local: true } | { local: false; nodeId: string; url: string; lease: LeaseValue };

export class ClusterNode implements ActorOwnership {
  readonly nodeId: string;
  readonly leases: LeaseBook;
  readonly leaseMs: number;
  forwarded = 0;
  #url = '';
  #offsetMs = 0;
  #peers: NodeRow[] = [];
  #dbOkAt: number | null = null;
  #dbError: string | undefined;
  #timer: NodeJS.Timeout | null = null;
  #ticking: Promise<void> | null = null;
  #startedMs = Date.now();
  #onLost: (kind: string, id: string) => void = () => undefined;
  #onTakeover: (kind: string, id: string) => void = () => undefined;
  #onOrphan: (kind: string, id: string) => Promise<unknown> = async () => undefined;

  constructor(private readonly o: ClusterOptions) {
    this.nodeId = o.nodeId ?? `node-${randomUUID().slice(0, 8)}`;
    this.leaseMs = o.leaseMs;
    this.#url = o.advertiseUrl ?? '';
    this.leases = new LeaseBook({
      store: o.store,
      sql: o.sql,
      nodeId: this.nodeId,
      url: () => this.#url,
      leaseMs: o.leaseMs,
      now: () => this.now(),
      onLost: (kind, id) => this.#onLost(kind, id),
      renewChunk: o.renewChunk,
    });
  }

  /** The database clock as estimated here. */
  now(): number {
    return Date.now() + this.#offsetMs;
  }

  get url(): string {
    return this.#url;
  }

  /** The backend's bulk read of ledger heads (one read per poll for every tailed session), when it has one. */
  get heads(): ((ids: readonly string[]) => Promise<Map<string, { head: number; archived: boolean | null }>>) | undefined {
    const sql = this.o.sql;
    return sql.ledgerHeads ? (ids) => sql.ledgerHeads!(ids) : undefined;
  }

  /** Wraps the actors' store so that session writes are fenced by this node's leases. */
  fence(store: Store): Store {
    return fencedStore(store, this.leases);
  }

  /** Who to tell when a lease is lost (the actor registry drops the actor). */
  onLost(cb: (kind: string, id: string) => void): void {
    this.#onLost = cb;
  }

  /** Who to tell when this node took a lease over from an owner whose term ran out (the actor resumes its work). */
  onTakeover(cb: (kind: string, id: string) => void): void {
    this.#onTakeover = cb;
  }

  /** Who brings back an actor whose lease ran out with nobody renewing it (the registry hydrates it here). */
  onOrphan(cb: (kind: string, id: string) => Promise<unknown>): void {
    this.#onOrphan = cb;
  }

  /** Joins the cluster once the server listens: first heartbeat, then renewals every third of the lease. */
  async start(listenUrl: string): Promise<void> {
    if (!this.#url) this.#url = listenUrl;
    await this.#tick();
    this.o.log.info({ node: this.nodeId, url: this.#url, leaseMs: this.leaseMs, database: this.o.sql.redactedUrl }, 'cluster node joined');
    this.#timer = setInterval(() => void this.#tick(), Math.max(50, Math.floor(this.leaseMs / 3)));
    this.#timer.unref();
  }

  #tick(): Promise<void> {
    this.#ticking ??= (async () => {
      try {
        const before = Date.now();
        const dbNow = await this.o.sql.dbNow();
        this.#offsetMs = dbNow - Math.round((before + Date.now()) / 2);
        await this.o.sql.heartbeat({
          nodeId: this.nodeId,
          url: this.#url,
          startedMs: this.#startedMs,
          info: { pid: process.pid, ...this.o.sql.stamp },
        });
        await this.leases.renewAll();
        this.#peers = await this.o.sql.nodes(Math.max(60_000, this.leaseMs * 20));
        this.#dbOkAt = Date.now();
        this.#dbError = undefined;
        await this.#adoptOrphans();
      } catch (err) {
        this.#dbError = err instanceof Error ? err.message : String(err);
        this.o.log.warn({ err: this.#dbError, node: this.nodeId }, 'cluster heartbeat failed');
      }
    })().finally(() => {
      this.#ticking = null;
    });
    return this.#ticking;
  }

  /**
   * Hydrates here the actors whose leases expired unrenewed (their node died): every live node races for
   * them, the claim's compare-and-set picks one. One sweep at a time, never blocking the heartbeat.
   */
  #sweeping = false;
  async #adoptOrphans(): Promise<void> {
    if (this.#sweeping) return;
    const orphans = await this.o.sql.expiredLeases(ORPHAN_KINDS, ORPHAN_BATCH);
    if (orphans.length === 0) return;
    this.#sweeping = true;
    (async () => {
      for (const [kind, id] of orphans) {
        if (this.leases.holds(kind, id)) continue;
        // Another node won the race (503 naming it), or the actor is gone: nothing to do here.
        await this.#onOrphan(kind, id).catch((err: unknown) =>
          this.o.log.debug({ err: (err as Error).message, kind, id }, 'orphan not adopted'),
        );
      }
    })()
      .finally(() => {
        this.#sweeping = false;
      })
      .catch((err: unknown) => this.o.log.warn({ err }, 'orphan sweep failed'));
  }

  // ActorOwnership: the registry asks before it hydrates an actor and tells after one left.
  async claim(kind: string, id: string): Promise<void> {
    if (!LEASED_KINDS.has(kind) || this.leases.holds(kind, id)) return;
    const result = await this.leases.claim(kind, id);
    if (result.ok) {
      if (result.takeover) {
        this.o.log.info({ kind, id, node: this.nodeId }, 'lease taken over');
        // After the hydration this claim gates: the actor's kind resumes what the dead owner left running.
        setImmediate(() => this.#onTakeover(kind, id));
      }
      return;
    }
    throw new ServiceError('SERVICE_UNAVAILABLE', `${kind} ${id} is hosted by node ${result.owner.node_id}`, {
      owner_node: result.owner.node_id,
      owner_url: result.owner.url,
    });
  }

  async release(kind: string, id: string): Promise<void> {
    if (!LEASED_KINDS.has(kind)) return;
    await this.leases.release(kind, id).catch(() => undefined);
  }

  /** The rev of this node's lease on a resource while it holds it well within its term, else undefined. */
  leaseRev(kind: string, id: string): number | undefined {
    return this.leases.trustedRev(kind, id);
  }

  /** Where a request for `id` (a session by default) is served: here, or on the live node holding its lease. */
  async route(id: string, kind = 'session'): Promise<Route> {
    if (this.leases.holds(kind, id)) return { local: true };
    const lease = await this.leases.read(kind, id);
    if (!lease || !this.leases.heldElsewhere(lease) || !lease.url || lease.url === this.#url) return { local: true };
    return { local: false, nodeId: lease.node_id, url: lease.url, lease };
  }

  /** Milliseconds until `lease` expires on the database clock (0 when it already has). */
  remainingMs(lease: LeaseValue): number {
    return Math.max(0, lease.expires_at_ms - this.now());
  }

  report(): ClusterReport {
    const peerAliveMs = this.leaseMs * 2;
    const report: ClusterReport = {
      node_id: this.nodeId,
      url: this.#url,
      lease_ms: this.leaseMs,
      leases_held: this.leases.held.size,
      lease_takeovers: this.leases.takeovers,
      leases_lost: this.leases.lost,
      forwarded_requests: this.forwarded,
      database: {
        url: this.o.sql.redactedUrl,
        state: this.#dbError === undefined && this.#dbOkAt !== null ? 'ok' : 'unreachable',
        last_ok_age_ms: this.#dbOkAt === null ? null : Date.now() - this.#dbOkAt,
      },
      peers: this.#peers
        .filter((p) => p.node_id !== this.nodeId)
        .map((p) => ({
          node_id: p.node_id,
          url: p.url,
          alive: p.age_ms <= peerAliveMs,
          heartbeat_age_ms: Math.max(0, p.age_ms),
        })),
    };
    if (this.#dbError !== undefined) report.database.error = this.#dbError;
    return report;
  }

  /** Leaves the cluster: stops renewing and removes the node row (leases were released as actors stopped). */
  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#ticking;
    await this.o.sql.leave(this.nodeId).catch(() => undefined);
  }
}

/** Default ownership lease term (ms): a dead node's sessions move within about this long. */
const DEFAULT_LEASE_MS = 5_000;

/**
 * A cluster node for every store several processes can open (postgres, lmdb, sqlite): a realm shared by
 * several processes is a cluster, and a lone process is a cluster of one. Undefined for jsonl and memory
 * (single-process backends). Started once the server listens.
 */
export function startCluster(store: Store, config: Config, log: Logger): ClusterNode | undefined {
  const sql = PostgresCluster.of(store) ?? RecordCluster.of(store);
  if (!sql) return undefined;
  return new ClusterNode({
    sql,
    store,
    log: log.child({ component: 'cluster' }),
    leaseMs: config.cluster?.lease_ms ?? DEFAULT_LEASE_MS,
    nodeId: config.cluster?.node_id,
    advertiseUrl: config.cluster?.advertise_url,
  });
}
