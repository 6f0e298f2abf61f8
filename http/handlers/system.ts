// http/handlers/system.ts: handlers of the observation and system routes (contracts/routes-system.ts):
// health, OpenAPI, config, realms, capabilities, runtime host reads and the model catalog.
// app.ts builds the SystemDeps; everything reported here is derived from them, truthfully for this build.
import { ServiceError } from '../../contracts/errors.ts';
import type { RouteDef } from '../../contracts/route.ts';
import {
  CAPABILITY_IDS,
  CONTRACT_VERSION,
  RUNTIME_FEATURE_FLAGS,
  WARREN_VERSION,
  type Capability,
  type CapabilitiesResponse,
  type CapabilityId,
  type CapabilityStatus,
  type HostInfo,
  type RealmDetail,
  type RealmSummary,
  type RuntimeCapabilities,
  type RuntimeFeatureFlag,
  type RuntimeHealth,
} from '../../contracts/routes-system.ts';
import { authErrorBody } from '../errors.ts';
import type { HandlerTable } from '../handler.ts';

/** The four session health dimensions the REST surface measures (wire-notes §2.8). */
export type SessionHealthDimension = 'session_liveness' | 'session_durability' | 'session_run_start' | 'session_runtime_loop';

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
  /** The GET /models/catalog body. */
  catalog(): unknown;
  /** Count of bad sessions per measured dimension; a missing dimension is reported unreadable. */
  sessionHealth(): Partial<Record<SessionHealthDimension, number>>;
  /** `http://<host>:<port>` of the listening server. */
  baseUrl(): string;
  /** The full route catalog (listed in host_info endpoints). */
  routes: RouteDef[];
  openapi(): object;
  /**
   * Capability and feature ids actually built: capability ids (CAPABILITY_IDS, plus 'mob') and the host
   * features without a capability row ('event_replay', 'blobs', 'artifacts', 'approvals', 'external_members',
   * 'secure_remote_rpc', 'multi_host_mobs', 'durable_jobs'). Anything absent reports NotCompiled / false.
   */
  built: Set<string>;
}

const DESCRIPTIONS: Record<CapabilityId, string> = {
  sessions: 'Session lifecycle: create, continue, read, list, archive',
  streaming: 'Session event streaming over SSE',
  structured_output: 'Structured-output extraction against a caller schema',
  hooks: 'Run-scoped hooks around model calls and tool execution',
  builtins: 'Built-in task and utility tools',
  shell: 'Shell command tool',
  comms: 'Inter-agent comms between sessions and peers',
  memory_store: 'Semantic memory store',
  schedule: 'Realm-scoped schedules and schedule tools',
  work_graph: 'WorkGraph work items and tools',
  session_store: 'Durable session persistence',
  session_compaction: 'Context compaction of long sessions',
  skills: 'Skill sources, resolution and listing',
  mcp_live: 'Live MCP tool-server changes',
};

/** Config gates (wire-notes §2.8 descriptions); capabilities absent here are gated only by the build. */
type Current = ReturnType<SystemDeps['config']['current']>;
const POLICY_GATES: Partial<Record<CapabilityId, { enabled(c: Current): boolean; description: string }>> = {
  builtins: { enabled: (c) => c.tools.builtins_enabled, description: 'tools.builtins_enabled = false' },
  shell: { enabled: (c) => c.tools.shell_enabled, description: 'tools.shell_enabled = false' },
  schedule: { enabled: (c) => c.tools.schedule_enabled, description: 'config.tools.schedule_enabled is false' },
  work_graph: { enabled: (c) => c.tools.workgraph_enabled, description: 'config.tools.workgraph_enabled is false' },
  skills: { enabled: (c) => c.skills?.enabled ?? true, description: 'config.skills.enabled is false' },
};

/** Host feature flag → the built id that makes it true. */
const FEATURE_SOURCE: Record<RuntimeFeatureFlag, string> = {
  runtime_backed_sessions: 'sessions',
  mobs: 'mob',
  multi_host_mobs: 'multi_host_mobs',
  mcp_live: 'mcp_live',
  comms: 'comms',
  blobs: 'blobs',
  session_events: 'streaming',
  session_streams: 'streaming',
  schedules: 'schedule',
  skills: 'skills',
  event_replay: 'event_replay',
  artifacts: 'artifacts',
  approvals: 'approvals',
  external_members: 'external_members',
  secure_remote_rpc: 'secure_remote_rpc',
  durable_jobs: 'durable_jobs',
};

/** Handlers keyed by the SYSTEM_ROUTES ids. */
export function systemHandlers(deps: SystemDeps): HandlerTable {
  return {
    'system.health': () => ({ status: 200, text: 'ok' }),
    'skills.list': () => {
      throw new ServiceError('NOT_FOUND', 'skills not enabled');
    },
    'system.openapi': () => ({ status: 200, body: deps.openapi() }),
    'config.get': () => ({ status: 200, body: deps.config.envelope() }),
    'config.replace': async (ctx) => ({ status: 200, body: await deps.config.replace(ctx.body) }),
    'config.patch': async (ctx) => ({ status: 200, body: await deps.config.patch(ctx.body) }),
    'realms.list': () => ({ status: 200, body: { realms: realmSummaries(deps) } }),
    'realms.get': (ctx) => {
      const detail = realmDetail(deps, ctx.params.id);
      if (detail) return { status: 200, body: detail };
      // Realm lookups answer auth-style `{error}` bodies (wire-notes §2.8).
      return authErrorBody(new ServiceError('NOT_FOUND', `Unknown realm: ${ctx.params.id}`), ctx.log);
    },
    'capabilities.get': () => ({ status: 200, body: capabilities(deps) }),
    'runtime.capabilities': () => ({ status: 200, body: runtimeCapabilities(deps) }),
    'runtime.health': () => ({ status: 200, body: runtimeHealth(deps) }),
    'runtime.hostInfo': () => ({ status: 200, body: hostInfo(deps) }),
    'models.catalog': () => ({ status: 200, body: deps.catalog() }),
  };
}

function capabilities(deps: SystemDeps): CapabilitiesResponse {
  const current = deps.config.current();
  const rows: Capability[] = CAPABILITY_IDS.map((id) => ({ id, description: DESCRIPTIONS[id], status: statusOf(id, deps, current) }));
  return { contract_version: { ...CONTRACT_VERSION }, capabilities: rows };
}

function statusOf(id: CapabilityId, deps: SystemDeps, current: Current): CapabilityStatus {
  if (!deps.built.has(id)) return { NotCompiled: { feature: id } };
  const gate = POLICY_GATES[id];
  if (gate && !gate.enabled(current)) return { DisabledByPolicy: { description: gate.description } };
  return 'Available';
}

function runtimeCapabilities(deps: SystemDeps): RuntimeCapabilities {
  const features = {} as Record<RuntimeFeatureFlag, boolean>;
  for (const flag of RUNTIME_FEATURE_FLAGS) features[flag] = deps.built.has(FEATURE_SOURCE[flag]);
  // "skills: <skill runtime present>": built and enabled by config.
  features.skills &&= deps.config.current().skills?.enabled ?? true;
  return { contract_version: { ...CONTRACT_VERSION }, features };
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
  const sorted = Object.fromEntries(Object.entries(checks).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { contract_version: { ...CONTRACT_VERSION }, status: measured === 0 || degraded ? 'degraded' : 'ok', checks: sorted };
}

function hostInfo(deps: SystemDeps): HostInfo {
  const { realm } = deps;
  const scoped = realm.instanceId !== undefined;
  const realmInfo: HostInfo['realm'] = { realm_id: realm.realmId };
  if (realm.instanceId !== undefined) realmInfo.instance_id = realm.instanceId;
  realmInfo.backend = realm.backend;
  if (realm.stateRoot !== undefined) realmInfo.state_root = realm.stateRoot;
  realmInfo.context_root = realm.contextRoot;
  return {
    contract_version: { ...CONTRACT_VERSION },
    host_id: scoped ? `realm-instance:${realm.realmId}:${realm.instanceId}` : `process:${process.pid}`,
    host_id_scope: scoped ? 'realm_instance' : 'process',
    process_name: 'warren',
    process_version: WARREN_VERSION,
    capabilities: runtimeCapabilities(deps),
    health: runtimeHealth(deps),
    realm: realmInfo,
    endpoints: { rest_base_url: deps.baseUrl(), rest_paths: [...new Set(deps.routes.map((r) => r.path))] },
  };
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
