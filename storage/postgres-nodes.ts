// storage/postgres-nodes.ts: the cluster's SQL beside the Store interface, on the postgres backend's pool:
// the nodes table (where each node is reached, its heartbeat), the database clock, and the bulk renewal of
// the ownership leases a node holds (lease records live in warren_records, ns LEASE_NS, so that a commit
// can fence on them with the Store's own checkRecord op). actors/cluster/ is the only caller.
import type { Store } from './store.ts';
import { PostgresStore } from './postgres-store.ts';
import { LEASE_NS, type ClusterBackend, type LeaseValue, type NodeRow } from './cluster-backend.ts';

export { type NodeRow };

/** The cluster SQL of one postgres store. */
export class PostgresCluster implements ClusterBackend {
  constructor(private readonly store: PostgresStore) {}

  /** The postgres store behind `store`, when it is one (the cluster needs it). */
  static of(store: Store): PostgresCluster | undefined {
    return store instanceof PostgresStore ? new PostgresCluster(store) : undefined;
  }

  get redactedUrl(): string {
    return this.store.redactedUrl;
  }

  /** The database's clock (epoch ms): leases and heartbeats are measured on it, not on node clocks. */
  async dbNow(): Promise<number> {
    const { rows } = await this.store.pool.query<{ now: string }>('SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now');
    return Number(rows[0].now);
  }

  /** Upserts this node's row with a fresh heartbeat (database time). */
  async heartbeat(node: { nodeId: string; url: string; startedMs: number; info: unknown }): Promise<void> {
    await this.store.pool.query(
      `INSERT INTO warren_nodes (node_id, url, started_ms, heartbeat_ms, info)
      VALUES ($1, $2, $3, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, $4)
      ON CONFLICT (node_id) DO UPDATE SET url = excluded.url, heartbeat_ms = excluded.heartbeat_ms, info = excluded.info`,
      [node.nodeId, node.url, node.startedMs, JSON.stringify(node.info)],
    );
  }

  /** Every node row, with the age of its heartbeat; rows older than `forgetMs` are deleted first. */
  async nodes(forgetMs: number): Promise<NodeRow[]> {
    await this.store.pool.query(
      'DELETE FROM warren_nodes WHERE heartbeat_ms < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1',
      [forgetMs],
    );
    const { rows } = await this.store.pool.query<{
      node_id: string;
      url: string;
      started_ms: string;
      heartbeat_ms: string;
      age_ms: string;
    }>(
      `SELECT node_id, url, started_ms, heartbeat_ms, (extract(epoch FROM clock_timestamp()) * 1000)::bigint - heartbeat_ms AS age_ms
       FROM warren_nodes ORDER BY node_id`,
    );
    return rows.map((r) => ({
      node_id: r.node_id,
      url: r.url,
      started_ms: Number(r.started_ms),
      heartbeat_ms: Number(r.heartbeat_ms),
      age_ms: Number(r.age_ms),
    }));
  }

  /** Removes this node's row (clean shutdown). */
  async leave(nodeId: string): Promise<void> {
    await this.store.pool.query('DELETE FROM warren_nodes WHERE node_id = $1', [nodeId]);
  }

  /**
   * Extends every listed lease that `nodeId` still holds with its token unchanged to database time +
   * `leaseMs`; answers the keys renewed (a key missing from the answer was taken over or deleted).
   */
  async renew(nodeId: string, leases: ReadonlyArray<{ key: string; rev: number }>, leaseMs: number): Promise<Set<string>> {
    if (leases.length === 0) return new Set();
    const { rows } = await this.store.pool.query<{ key: string }>(
      `UPDATE warren_records r
       SET value = (r.value::jsonb || jsonb_build_object('expires_at_ms', (extract(epoch FROM clock_timestamp()) * 1000)::bigint + $3::bigint))::text
       FROM unnest($2::text[], $4::bigint[]) AS l(key, rev)
       WHERE r.ns = $5 AND r.key = l.key AND (r.value::jsonb ->> 'node_id') = $1 AND (r.value::jsonb ->> 'rev')::bigint = l.rev
       RETURNING r.key`,
      [nodeId, leases.map((l) => l.key), leaseMs, leases.map((l) => l.rev), LEASE_NS],
    );
    return new Set(rows.map((r) => r.key));
  }

  /**
   * For each session: the newest ledger seq (0 when it has none) and whether it is archived (null when
   * the session does not exist). One query for every session a node tails (actors/cluster/ledger-tail.ts).
   */
  async ledgerHeads(sessionIds: readonly string[]): Promise<Map<string, { head: number; archived: boolean | null }>> {
    const out = new Map<string, { head: number; archived: boolean | null }>();
    if (sessionIds.length === 0) return out;
    const { rows } = await this.store.pool.query<{ id: string; head: string | null; archived: boolean | null }>(
      `SELECT s.id,
              (SELECT l.seq FROM warren_ledger l WHERE l.session_id = s.id ORDER BY l.seq DESC LIMIT 1) AS head,
              (SELECT w.archived FROM warren_sessions w WHERE w.session_id = s.id) AS archived
       FROM unnest($1::text[]) AS s(id)`,
      [sessionIds],
    );
    for (const r of rows) out.set(r.id, { head: r.head === null ? 0 : Number(r.head), archived: r.archived });
    return out;
  }

  /**
   * Leases of the given kinds (`<kind>:<id>` keys) whose term ran out on the database clock and that no node
   * renewed: their owner died or stalled. At most `limit`, as [kind, id] pairs.
   */
  async expiredLeases(kinds: readonly string[], limit: number): Promise<Array<[string, string]>> {
    if (kinds.length === 0) return [];
    const { rows } = await this.store.pool.query<{ key: string }>(
      `SELECT key FROM warren_records
       WHERE ns = $1 AND split_part(key, ':', 1) = ANY($2::text[]) AND (value::jsonb ->> 'node_id') <> ''
         AND (value::jsonb ->> 'expires_at_ms')::bigint < (extract(epoch FROM clock_timestamp()) * 1000)::bigint
       ORDER BY key LIMIT $3`,
      [LEASE_NS, [...kinds], limit],
    );
    return rows.map((r) => {
      const at = r.key.indexOf(':');
      return [r.key.slice(0, at), r.key.slice(at + 1)];
    });
  }

  /** Answers whether the database takes a trivial query (for /runtime/health). */
  async ping(): Promise<void> {
    await this.store.pool.query('SELECT 1');
  }
}
