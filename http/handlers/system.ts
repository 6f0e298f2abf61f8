// http/handlers/system.ts: handlers of the observation and system routes (contracts/routes-system.ts):
// health, OpenAPI, config, realms, capabilities, runtime host reads and the model catalog.
// app.ts builds the SystemDeps; everything reported here is derived from them, truthfully for this build.
import { ServiceError } from '../../contracts/errors.ts';
import type { ClusterReport } from '../../contracts/cluster.ts';
import type { RouteDef } from '../../contracts/route.ts';
import {
  CONTRACT_VERSION,
  WARREN_VERSION,
  hostIdentity,
  type CapabilitiesResponse,
  type HostInfo,
  type RealmDetail,
  type RealmSummary,
  type RuntimeCapabilities,
  type RuntimeHealth,
} from '../../contracts/routes-system.ts';
import type { HandlerTable } from '../handler.ts';

/** The four session health dimensions the REST surface measures (wire-notes §2.8). */
type SessionHealthDimension = 'session_liveness' | 'session_durability' | 'session_run_start' | 'session_runtime_loop';

const SESSION_DIMENSIONS: readonly SessionHealthDimension[] = [
  'session_durability',
  'session_liveness',
  'session_run_start',
  'session_runtime_loop',
];

/** What the system handlers need; a structural interface app.ts satisfies. */
export interface SystemDeps {
  config: {
    /** The GET /config envelope. */
    envelope(): unknown;
    /** PUT /config with the validated body; resolves to the new envelope. */
    replace(body: unknown): Promise<unknown>;
    /** PATCH /config with the validated body; resolves to the new envelope. */
    patch(body: unknown): Promise<unknown>;
    /** The effective config: capability gates and `[realm.<id>]` sections. */
    current(): {
      tools: { builtins_enabled: boolean; shell_enabled: boolean; schedule_enabled: boolean; workgraph_enabled: boolean };
      skills?: { enabled: boolean };
      realm?: Record<string, unknown>;
    };
  };
  realm: { realmId: string; instanceId?: string; backend: string; stateRoot?: string; contextRoot: string };
  /** On a cluster node (postgres realm): this node, its peers and the database. */
  cluster?(): ClusterReport | undefined;
  /** The GET /models/catalog body. */
  catalog(): unknown;
  /** Count of bad sessions per measured dimension; a missing dimension is reported unreadable. */
  sessionHealth(): Partial<Record<SessionHealthDimension, number>>;
  /** Whether the store takes writes; a degraded store degrades session_durability with its reason. */
  storeHealth?(): { degraded: false } | { degraded: true; reason: string; since_ms: number } | undefined;
  /** `http://<host>:<port>` of the listening server. */
  baseUrl(): string;
  /** The full route catalog (listed in host_info endpoints). */
  routes(): readonly RouteDef[];
  openapi(): object;
  /** The capability registry (actors/capability-registry.ts): what this build has, and its config gates. */
  capabilities: { report(): CapabilitiesResponse; runtime(): RuntimeCapabilities };
}

/** Handlers keyed by the SYSTEM_ROUTES ids. */
export function systemHandlers(deps: SystemDeps): HandlerTable {
  return {
    'system.health': () => ({ status: 200, text: 'ok' }),
    'system.openapi': () => ({ status: 200, body: deps.openapi() }),
    'config.get': () => ({ status: 200, body: deps.config.envelope() }),
    'config.replace': async (ctx) => ({ status: 200, body: await deps.config.replace(ctx.body) }),
    'config.patch': async (ctx) => ({ status: 200, body: await deps.config.patch(ctx.body) }),
    'realms.list': () => ({ status: 200, body: { realms: realmSummaries(deps) } }),
    'realms.get': (ctx) => {
      const detail = realmDetail(deps, ctx.params.id);
      if (detail) return { status: 200, body: detail };
      // The reference's message, in the full error envelope (error and code).
      throw new ServiceError('NOT_FOUND', `Unknown realm: ${ctx.params.id}`);
    },
    'capabilities.get': () => ({ status: 200, body: deps.capabilities.report() }),
    'runtime.capabilities': () => ({ status: 200, body: deps.capabilities.runtime() }),
    'runtime.health': () => ({ status: 200, body: runtimeHealth(deps) }),
    'runtime.hostInfo': () => ({ status: 200, body: hostInfo(deps) }),
    'models.catalog': () => ({ status: 200, body: deps.catalog() }),
  };
}

/**
 * Rollup (wire-notes §2.8, §11 item 22): each measured dimension is ok at 0 bad sessions, else degraded;
 * a dimension without a reading is `unreadable:<dim>` and degrades; `unmeasured:jobs` is reported but
 * excluded from the rollup; nothing measured at all is degraded. Keys are sorted.
 */
function runtimeHealth(deps: SystemDeps): RuntimeHealth {
  let readings: Partial<Record<SessionHealthDimension, number>>;
  try {
    readings = deps.sessionHealth();
  } catch {
    readings = {};
  }
  const checks: Record<string, string> = { 'unmeasured:jobs': 'degraded' };
  let measured = 0;
  let degraded = false;
  for (const dim of SESSION_DIMENSIONS) {
    const value = readings[dim];
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0) {
      measured++;
      checks[dim] = value === 0 ? 'ok' : 'degraded';
      if (value > 0) degraded = true;
    } else {
      checks[`unreadable:${dim}`] = 'degraded';
      degraded = true;
    }
  }
  const reasons: Record<string, string> = {};
  const store = deps.storeHealth?.();
  if (store?.degraded) {
    checks.session_durability = 'degraded';
    reasons.session_durability = `${store.reason} (since ${new Date(store.since_ms).toISOString()})`;
    degraded = true;
  }
  const report = deps.cluster?.();
  // A shared database (postgres) is its own health dimension; on lmdb and sqlite the cluster's records live
  // in the realm's own store, whose health session_durability already reports, and a lone process on them
  // (a cluster of one) reports no cluster at all, as before several processes could share the realm.
  const sharedDb = report !== undefined && report.database.url.includes('://');
  const cluster = report && (sharedDb || report.peers.length > 0) ? report : undefined;
  if (cluster && sharedDb) {
    checks.cluster_database = cluster.database.state === 'ok' ? 'ok' : 'degraded';
    if (cluster.database.state !== 'ok') {
      reasons.cluster_database = cluster.database.error ?? 'database unreachable';
      degraded = true;
    }
  }
  const sorted = Object.fromEntries(Object.entries(checks).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const health: RuntimeHealth = {
    contract_version: { ...CONTRACT_VERSION },
    status: measured === 0 || degraded ? 'degraded' : 'ok',
    checks: sorted,
  };
  if (Object.keys(reasons).length) health.reasons = reasons;
  if (cluster) health.cluster = cluster;
  return health;
}

function hostInfo(deps: SystemDeps): HostInfo {
  const { realm } = deps;
  const realmInfo: HostInfo['realm'] = { realm_id: realm.realmId };
  if (realm.instanceId !== undefined) realmInfo.instance_id = realm.instanceId;
  realmInfo.backend = realm.backend;
  if (realm.stateRoot !== undefined) realmInfo.state_root = realm.stateRoot;
  realmInfo.context_root = realm.contextRoot;
  const health = runtimeHealth(deps);
  const info: HostInfo = {
    contract_version: { ...CONTRACT_VERSION },
    ...hostIdentity(realm),
    process_name: 'warren',
    process_version: WARREN_VERSION,
    capabilities: deps.capabilities.runtime(),
    health,
    realm: realmInfo,
    endpoints: { rest_base_url: deps.baseUrl(), rest_paths: [...new Set(deps.routes().map((r) => r.path))] },
  };
  if (health.cluster) info.cluster = health.cluster;
  return info;
}

/** A `[realm.<id>]` config section: `{backend{}, auth{}, binding{}, default_binding?}`. */
interface RealmSection {
  backends: Record<string, unknown>;
  auth_profiles: Record<string, unknown>;
  bindings: Record<string, unknown>;
  default_binding?: string;
}

function realmSections(deps: SystemDeps): Map<string, RealmSection> {
  const out = new Map<string, RealmSection>();
  const sections = deps.config.current().realm ?? {};
  for (const id of Object.keys(sections).sort()) {
    const raw = asRecord(sections[id]);
    const section: RealmSection = {
      backends: asRecord(raw.backend),
      auth_profiles: asRecord(raw.auth),
      bindings: asRecord(raw.binding),
    };
    if (typeof raw.default_binding === 'string') section.default_binding = raw.default_binding;
    out.set(id, section);
  }
  return out;
}

/** The active realm first (with its storage backend), then the other configured realms by id. */
function realmSummaries(deps: SystemDeps): RealmSummary[] {
  const sections = realmSections(deps);
  const ids = [deps.realm.realmId, ...[...sections.keys()].filter((id) => id !== deps.realm.realmId)];
  return ids.map((id) => {
    const detail = realmDetail(deps, id, sections)!;
    return {
      realm_id: id,
      ...(detail.backend !== undefined ? { backend: detail.backend } : {}),
      ...(detail.default_binding !== undefined ? { default_binding: detail.default_binding } : {}),
      backend_count: Object.keys(detail.backends).length,
      auth_profile_count: Object.keys(detail.auth_profiles).length,
      binding_count: Object.keys(detail.bindings).length,
    };
  });
}

function realmDetail(deps: SystemDeps, id: string, sections = realmSections(deps)): RealmDetail | undefined {
  const section = sections.get(id);
  const active = id === deps.realm.realmId;
  if (!section && !active) return undefined;
  return {
    realm_id: id,
    ...(active ? { backend: deps.realm.backend } : {}),
    ...(section?.default_binding !== undefined ? { default_binding: section.default_binding } : {}),
    backends: section?.backends ?? {},
    auth_profiles: section?.auth_profiles ?? {},
    bindings: section?.bindings ?? {},
  };
}

function asRecord(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
