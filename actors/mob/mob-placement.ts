// actors/mob/mob-placement.ts: where a mob's members live and which of its wiring routes are installed
// (GET /mob/{id}/hosts and /route-installs). A member is materialized on the host holding its session:
// this process, or, on a cluster (postgres realm), the node whose lease holds the session (read through
// the cluster's read-only route(); a session leased nowhere else is here). The host running the mob
// actor is always listed (`controlling: true`). A wired pair's route is installed once both members
// were told of each other (MobHost.installRoutes); until then it is outstanding, with the reason.
import { MOB_HOST_PROTOCOL, type HostCapabilities } from '../../contracts/routes-mob.ts';
import { WARREN_VERSION } from '../../contracts/routes-system.ts';
import type { CapabilityRegistry } from '../capability-registry.ts';
import type { MobActor } from './mob-actor.ts';
import type { MobHost } from './mob-host.ts';
import { isInstalled } from './mob-wiring.ts';

/**
 * This host's capability flags in the reference's shape: the mob host protocol range, the engine version,
 * durable sessions (a persistent store), autonomous members (members run on kickoff and on peer messages
 * without a controlling turn), hard member cancel (members/{m}/cancel), and whether the memory store, MCP
 * and approval forwarding are available here.
 */
export function hostCapabilities(host: { capabilities: CapabilityRegistry; deps: { store: { persistent: boolean } } }): HostCapabilities {
  const caps = host.capabilities;
  return {
    protocol_min: MOB_HOST_PROTOCOL.min,
    protocol_max: MOB_HOST_PROTOCOL.max,
    engine_version: WARREN_VERSION,
    durable_sessions: host.deps.store.persistent,
    autonomous_members: true,
    hard_cancel_member: true,
    memory_store: caps.status('memory_store') === 'Available',
    mcp: caps.status('mcp_live') === 'Available',
    approval_forwarding: caps.runtime().features.approvals,
  };
}

export interface PlacementDeps {
  /** This process's host id, as /runtime/host_info reports it. */
  hostId(): string;
  baseUrl(): string;
  now(): number;
  /** This host's capability flags (the reference's host capability flags). */
  capabilities(): HostCapabilities;
  /** Cluster nodes only: this node, its peers, and where a session's lease lives. */
  cluster?: {
    report(): { node_id: string; peers: Array<{ node_id: string; url: string; alive: boolean; heartbeat_age_ms: number }> };
    route?(sessionId: string): Promise<{ local: true } | { local: false; nodeId: string; url: string }>;
  };
}

export interface MobHostEntry {
  host_id: string;
  bind_phase: 'requested' | 'bound';
  materialized_member_count: number;
  members: string[];
  pending_members: string[];
  controlling: boolean;
  capabilities?: HostCapabilities;
  control_reachability: 'reachable' | 'unreachable' | 'unknown';
  endpoint?: string;
  last_seen_ms?: number;
  node_id?: string;
}

export interface RouteInstalls {
  complete: boolean;
  outstanding: Array<{ host: string; edge_a: string; edge_b: string; reason: 'member_not_ready' | 'notice_pending' }>;
}

/** A member on another cluster node is reported under that node's id (its process id is its own to report). */
const clusterHostId = (nodeId: string): string => `cluster-node:${nodeId}`;

export class MobPlacement {
  constructor(
    private readonly host: MobHost,
    private readonly deps: PlacementDeps,
  ) {}

  /** Where each live member's session is: its host id (this one when it is not materialized elsewhere). */
  private async placements(mob: MobActor): Promise<Map<string, { hostId: string; nodeId?: string; url?: string; materialized: boolean }>> {
    const out = new Map<string, { hostId: string; nodeId?: string; url?: string; materialized: boolean }>();
    for (const m of mob.members.values()) {
      if (m.state === 'retired') continue;
      const sid = m.record.session_id;
      const materialized = sid !== null && (await this.host.sessions.exists(sid));
      const where = materialized && this.deps.cluster?.route ? await this.deps.cluster.route(sid!) : { local: true as const };
      out.set(
        m.record.agent_identity,
        where.local
          ? { hostId: this.deps.hostId(), materialized }
          : { hostId: clusterHostId(where.nodeId), nodeId: where.nodeId, url: where.url, materialized },
      );
    }
    return out;
  }

  async hosts(mob: MobActor): Promise<MobHostEntry[]> {
    const local = this.deps.hostId();
    const report = this.deps.cluster?.report();
    const now = this.deps.now();
    const entries = new Map<string, MobHostEntry>();
    entries.set(local, {
      host_id: local,
      bind_phase: 'bound',
      materialized_member_count: 0,
      members: [],
      pending_members: [],
      controlling: true,
      capabilities: this.deps.capabilities(),
      control_reachability: 'reachable',
      endpoint: this.deps.baseUrl(),
      last_seen_ms: now,
      ...(report ? { node_id: report.node_id } : {}),
    });
    for (const [identity, p] of await this.placements(mob)) {
      let e = entries.get(p.hostId);
      if (!e) {
        const peer = report?.peers.find((x) => x.node_id === p.nodeId);
        e = {
          host_id: p.hostId,
          bind_phase: 'bound',
          materialized_member_count: 0,
          members: [],
          pending_members: [],
          controlling: false,
          control_reachability: peer ? (peer.alive ? 'reachable' : 'unreachable') : 'unknown',
          ...(p.url ? { endpoint: p.url } : {}),
          ...(peer ? { last_seen_ms: now - peer.heartbeat_age_ms } : {}),
          ...(p.nodeId ? { node_id: p.nodeId } : {}),
        };
        entries.set(p.hostId, e);
      }
      if (p.materialized) {
        e.materialized_member_count++;
        e.members.push(identity);
      } else e.pending_members.push(identity);
    }
    // A host only asked to hold members (none materialized yet) is `requested`.
    for (const e of entries.values()) if (e.materialized_member_count === 0 && e.pending_members.length > 0) e.bind_phase = 'requested';
    return [...entries.values()];
  }

  async routeInstalls(mob: MobActor): Promise<RouteInstalls> {
    const placed = await this.placements(mob);
    const outstanding: RouteInstalls['outstanding'] = [];
    for (const [a, b] of mob.record.edges) {
      if (isInstalled(mob.record, a, b)) continue;
      const notReady = [a, b].find((id) => mob.members.get(id)?.record.kickoff !== 'completed' || !placed.get(id)?.materialized);
      const at = placed.get(notReady ?? a)?.hostId ?? this.deps.hostId();
      outstanding.push({ host: at, edge_a: a, edge_b: b, reason: notReady ? 'member_not_ready' : 'notice_pending' });
    }
    return { complete: outstanding.length === 0, outstanding };
  }
}
