// contracts/cluster.ts: the config sections of the postgres backend and of multi-node clusters
// (`[storage]`, `[cluster]`), the wire shape of the cluster part of /runtime/host_info, and the one
// redaction of a database URL (logs, errors, GET /config).
import { Type, type Static } from 'typebox';

/** `[storage]`: where the postgres realm backend connects (WARREN_DATABASE_URL wins over postgres_url). */
export const StorageSection = Type.Object(
  {
    /** `postgres://user:password@host:port/database[?sslmode=require]`; its password is redacted in GET /config and logs. */
    postgres_url: Type.Optional(Type.String({ minLength: 1 })),
    /** Upper bound on this node's pooled database connections. */
    pool_max: Type.Integer({ minimum: 2, maximum: 1000, default: 10 }),
  },
  { additionalProperties: true },
);
export type StorageSection = Static<typeof StorageSection>;

/** `[cluster]`: ownership leases and how peers reach this node (postgres backend only). */
export const ClusterSection = Type.Object(
  {
    /** How long a node's ownership of a session lasts without renewal (ms); renewed every third of it. */
    lease_ms: Type.Integer({ minimum: 200, maximum: 600_000, default: 5000 }),
    /** How often a node reads the ledger of a session hosted elsewhere that it streams events of (ms). */
    tail_poll_ms: Type.Integer({ minimum: 10, maximum: 10_000, default: 200 }),
    /** URL peers forward requests to (default: the URL this node listens on). */
    advertise_url: Type.Optional(Type.String({ minLength: 1 })),
    /** This node's id (default: a random one per process start). */
    node_id: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: true },
);
export type ClusterSection = Static<typeof ClusterSection>;

/** One peer node as /runtime/host_info reports it. */
const ClusterPeer = Type.Object({
  node_id: Type.String(),
  url: Type.String(),
  alive: Type.Boolean(),
  heartbeat_age_ms: Type.Integer(),
});

/** The `cluster` member of /runtime/host_info and /runtime/health on a postgres realm: this node, its peers, the database. */
export const ClusterReport = Type.Object({
  node_id: Type.String(),
  url: Type.String(),
  lease_ms: Type.Integer(),
  leases_held: Type.Integer(),
  lease_takeovers: Type.Integer(),
  leases_lost: Type.Integer(),
  forwarded_requests: Type.Integer(),
  database: Type.Object({
    url: Type.String(),
    state: Type.Union([Type.Literal('ok'), Type.Literal('unreachable')]),
    last_ok_age_ms: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Optional(Type.String()),
  }),
  peers: Type.Array(ClusterPeer),
});
export type ClusterReport = Static<typeof ClusterReport>;

/** The URL with its password replaced by `***` (an unparseable URL is hidden whole). */
export function redactDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '[unparseable database url]';
  }
}
