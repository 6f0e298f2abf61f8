// http/modules/cluster-setup.ts: the options of a cluster node's forwarding layer (postgres realms) and its
// /metrics counters (forwarded requests, lease takeovers, leases lost). app.ts calls it; the node itself is
// actors/cluster/ (startCluster) and the forwarding is http/cluster-forward.ts.
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { ClusterNode } from '../../actors/cluster/cluster-node.ts';
import { protocolTurnSession } from '../../actors/protocols/protocol-turns.ts';
import type { Observability } from '../../actors/observe/observability.ts';
import type { Supervisor } from '../../actors/supervisor.ts';
import type { ForwardOptions } from '../cluster-forward.ts';
import { protocolSessionOf } from '../cluster-protocols.ts';
import { leasedResourceOf } from '../cluster-resources.ts';

/** The forwarding layer's options: request ids known here, and the forwarded-requests counter. */
export function clusterForwardOptions(node: ClusterNode, supervisor: Supervisor, observe: Observability, log: Logger): ForwardOptions {
  const registers = [observe.metrics.registry];
  const forwarded = new Counter({
    name: 'warren_cluster_forwarded_requests_total',
    help: 'Requests this node proxied to the node owning the session or mob',
    registers,
  });
  // Read at scrape time from the lease book (takeovers happen inside hydration, not in the HTTP layer).
  new Counter({
    name: 'warren_cluster_lease_takeovers_total',
    help: 'Leases (sessions, mobs, work bindings) this node took over from an expired owner',
    registers,
    collect() {
      this.reset();
      this.inc(node.leases.takeovers);
    },
  });
  new Counter({
    name: 'warren_cluster_leases_lost_total',
    help: 'Leases (sessions, mobs, work bindings) this node found taken over by another node',
    registers,
    collect() {
      this.reset();
      this.inc(node.leases.lost);
    },
  });
  return {
    node,
    log,
    knowsRequest: (id) => supervisor.requests.knows(id),
    onForward: () => forwarded.inc(),
    calls: supervisor.deps.ownerCalls,
    resourceOf: leasedResourceOf,
    sessionOfRequest: protocolSessionOf((id) => protocolTurnSession(supervisor.deps.store, id)),
  };
}
