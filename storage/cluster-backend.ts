// storage/cluster-backend.ts: what a cluster node needs from the realm's store beside the Store interface:
// the node table (where each node is reached, its heartbeat), the shared clock, the bulk renewal of the
// ownership leases a node holds, and the orphan scan. Leases themselves are records (ns LEASE_NS) so that a
// commit fences on them with the Store's own checkRecord op, inside the commit's transaction, on every backend.
// Implementations: PostgresCluster (storage/postgres-nodes.ts) and RecordCluster (storage/record-cluster.ts:
// lmdb and sqlite, whose processes share one machine and so one clock).

import type { StoredLease } from '../contracts/stored-records.ts';
import { LEASE_KIND, namespaceOf } from './record-kinds.ts';

/** The records namespace of ownership leases: key `<kind>:<id>`, value LeaseValue (read through LEASE_KIND). */
export const LEASE_NS = namespaceOf(LEASE_KIND);

/**
 * A stored lease (its schema: StoredLease). `rev` is the fencing token: it grows by one at each change of
 * owner and never goes back (a released lease stays as a tombstone with `node_id: ''`), so a token names one
 * owner's term.
 */
export type LeaseValue = StoredLease;

export interface NodeRow {
  node_id: string;
  url: string;
  started_ms: number;
  heartbeat_ms: number;
  /** Shared-clock time of the read minus the heartbeat (ms). */
  age_ms: number;
}

export interface ClusterBackend {
  /** How the store is named in /runtime/host_info (no secret, no path). */
  readonly redactedUrl: string;
  /** The shared clock (epoch ms): leases and heartbeats are measured on it. */
  dbNow(): Promise<number>;
  /** Upserts this node's row with a fresh heartbeat. */
  heartbeat(node: { nodeId: string; url: string; startedMs: number; info: unknown }): Promise<void>;
  /** Every node row with its heartbeat's age; rows older than `forgetMs` are deleted first. */
  nodes(forgetMs: number): Promise<NodeRow[]>;
  /** Removes this node's row (clean shutdown). */
  leave(nodeId: string): Promise<void>;
  /**
   * Extends the listed leases `nodeId` still holds with unchanged tokens; answers the keys renewed. `fresh`
   * is the node's lease value under a rev with a new term, for a backend that writes the whole value.
   */
  renew(
    nodeId: string,
    leases: ReadonlyArray<{ key: string; rev: number }>,
    leaseMs: number,
    fresh: (rev: number) => LeaseValue,
  ): Promise<Set<string>>;
  /** Held (non-tombstone) leases of the given kinds whose term ran out unrenewed, as [kind, id] pairs. */
  expiredLeases(kinds: readonly string[], limit: number): Promise<Array<[string, string]>>;
  /** For each session: newest ledger seq and archived flag (null when absent), for the ledger tails; optional. */
  ledgerHeads?(sessionIds: readonly string[]): Promise<Map<string, { head: number; archived: boolean | null }>>;
  /** True when the lease's owner is known dead without waiting for its term (same-host backends). */
  ownerGone?(lease: LeaseValue): boolean;
  /** Fields stamped on this node's leases (its pid and host on the file backends). */
  readonly stamp?: Readonly<Record<string, unknown>>;
  /** Answers whether the store takes a trivial read (for /runtime/health). */
  ping(): Promise<void>;
}
