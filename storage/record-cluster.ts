// storage/record-cluster.ts: the cluster backend of the file stores several processes can open (lmdb, sqlite).
// Node rows are records (ns NODES_NS) and leases are records (ns LEASE_NS), renewed with the Store's own
// compare-and-set ops, so a renewal never overwrites a lease another node took over. The processes share one
// machine (both stores are local files), hence one clock (Date.now) and one process table: a lease whose
// owner's pid is gone on this host is free at once, without waiting for its term (a kill -9 or a crash).
import { hostname } from 'node:os';
import { isServiceError } from '../contracts/errors.ts';
import type { StoredClusterNode as NodeValue } from '../contracts/stored-records.ts';
import { LEASE_NS, type ClusterBackend, type LeaseValue, type NodeRow } from './cluster-backend.ts';
import { CLUSTER_NODE_KIND, LEASE_KIND, namespaceOf, readValidRecords } from './record-kinds.ts';
import type { Store, StoreOp } from './store.ts';

/** The records namespace of node rows: key node id (read through CLUSTER_NODE_KIND). */
const NODES_NS = namespaceOf(CLUSTER_NODE_KIND);

/** The orphan scan lists every lease record: at most once per this period (ms). */
const ORPHAN_SCAN_MS = 2_000;

const HOST = hostname();

/** This process's identity on its host, stamped on its leases and node row. */
const PROCESS_STAMP: Readonly<{ pid: number; host: string }> = { pid: process.pid, host: HOST };

/** True when `pid` names no process on this host (a pid that exists under another user counts as alive). */
function pidGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** True when the lease's owner was a process on this host that no longer exists. */
function ownerProcessGone(lease: Pick<LeaseValue, 'node_id'> & { pid?: unknown; host?: unknown }): boolean {
  if (lease.node_id === '' || typeof lease.pid !== 'number' || lease.host !== HOST) return false;
  return lease.pid !== process.pid && pidGone(lease.pid);
}

export class RecordCluster implements ClusterBackend {
  #lastScan = 0;
  readonly stamp = PROCESS_STAMP;
  readonly ownerGone = ownerProcessGone;
  constructor(private readonly store: Store) {}

  /** A cluster backend for the stores several processes may open on one machine (lmdb, sqlite). */
  static of(store: Store): RecordCluster | undefined {
    return store.backend === 'lmdb' || store.backend === 'sqlite' ? new RecordCluster(store) : undefined;
  }

  get redactedUrl(): string {
    return this.store.backend;
  }

  async dbNow(): Promise<number> {
    return Date.now();
  }

  async heartbeat(node: { nodeId: string; url: string; startedMs: number; info: unknown }): Promise<void> {
    const value: NodeValue = { v: 1, url: node.url, started_ms: node.startedMs, heartbeat_ms: Date.now(), info: node.info };
    await this.store.commit([{ op: 'putRecord', ns: NODES_NS, key: node.nodeId, value }]);
  }

  async nodes(forgetMs: number): Promise<NodeRow[]> {
    const now = Date.now();
    // A corrupt node row is logged as refused and left out (it ages out of no listing, but breaks none).
    const rows = await readValidRecords<NodeValue>(this.store, CLUSTER_NODE_KIND);
    const gone = (r: { value: NodeValue }): boolean => {
      const pid = (r.value.info as { pid?: unknown; host?: unknown } | null)?.pid;
      const host = (r.value.info as { host?: unknown } | null)?.host;
      return typeof pid === 'number' && host === HOST && pid !== process.pid && pidGone(pid);
    };
    const stale = rows.filter((r) => now - r.value.heartbeat_ms > forgetMs || gone(r));
    if (stale.length) {
      await this.store.commit(stale.map((r): StoreOp => ({ op: 'deleteRecord', ns: NODES_NS, key: r.key }))).catch(() => undefined);
    }
    return rows
      .filter((r) => !stale.includes(r))
      .map((r) => ({
        node_id: r.key,
        url: r.value.url,
        started_ms: r.value.started_ms,
        heartbeat_ms: r.value.heartbeat_ms,
        age_ms: now - r.value.heartbeat_ms,
      }))
      .sort((a, b) => (a.node_id < b.node_id ? -1 : a.node_id > b.node_id ? 1 : 0));
  }

  async leave(nodeId: string): Promise<void> {
    await this.store.commit([{ op: 'deleteRecord', ns: NODES_NS, key: nodeId }]);
  }

  /**
   * One compare-and-set commit for every lease; when one was taken over meanwhile, one commit per lease.
   * Nothing is read first: the check on the lease's rev is the test (a rev is only ever this node's while
   * the node holds it: a claim by any other node raises it), and the renewed value is this node's own.
   */
  async renew(
    _nodeId: string,
    leases: ReadonlyArray<{ key: string; rev: number }>,
    _leaseMs: number,
    fresh: (rev: number) => LeaseValue,
  ): Promise<Set<string>> {
    const renewed = new Set<string>();
    const ops = leases.map(({ key, rev }) => ({
      key,
      ops: [
        { op: 'checkRecord', ns: LEASE_NS, key, rev },
        { op: 'putRecord', ns: LEASE_NS, key, value: fresh(rev) },
      ] satisfies StoreOp[],
    }));
    if (ops.length === 0) return renewed;
    try {
      await this.store.commit(ops.flatMap((o) => o.ops));
      for (const o of ops) renewed.add(o.key);
      return renewed;
    } catch (err) {
      if (!isServiceError(err) || err.code !== 'CONFLICT') throw err;
    }
    for (const o of ops) {
      try {
        await this.store.commit(o.ops);
        renewed.add(o.key);
      } catch (err) {
        if (!isServiceError(err) || err.code !== 'CONFLICT') throw err;
      }
    }
    return renewed;
  }

  async expiredLeases(kinds: readonly string[], limit: number): Promise<Array<[string, string]>> {
    if (kinds.length === 0 || Date.now() - this.#lastScan < ORPHAN_SCAN_MS) return [];
    this.#lastScan = Date.now();
    const now = Date.now();
    const out: Array<[string, string]> = [];
    for (const { key, value } of await readValidRecords<LeaseValue>(this.store, LEASE_KIND)) {
      const at = key.indexOf(':');
      if (at <= 0 || !kinds.includes(key.slice(0, at)) || value.node_id === '') continue;
      if (value.expires_at_ms >= now && !ownerProcessGone(value)) continue;
      out.push([key.slice(0, at), key.slice(at + 1)]);
      if (out.length >= limit) break;
    }
    return out;
  }

  async ledgerHeads(sessionIds: readonly string[]): Promise<Map<string, { head: number; archived: boolean | null }>> {
    const out = new Map<string, { head: number; archived: boolean | null }>();
    for (const id of sessionIds) {
      const [head, session] = await Promise.all([this.store.lastLedgerSeq(id), this.store.getSession(id)]);
      out.set(id, { head, archived: session ? session.archived : null });
    }
    return out;
  }

  async ping(): Promise<void> {
    await this.store.getRecord(NODES_NS, '-');
  }
}
