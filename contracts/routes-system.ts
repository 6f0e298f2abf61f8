// contracts/routes-system.ts: wire schemas and catalog entries of the observation and system routes
// (SPEC.md "Observation and system routes", "Capabilities", "Runtime host", "Model catalog"; shapes from
// wire-notes §2.8). http/handlers/system.ts serves them; contracts/routes.ts concatenates the catalog.
import { Type, type Static } from 'typebox';
import { ConfigEnvelope, ConfigPatchBody, ConfigPutBody } from './config.ts';
import { ClusterReport } from './cluster.ts';
import type { RouteDef } from './route.ts';

/** Warren's release version, reported as `process_version` (a test pins it to package.json). */
export const WARREN_VERSION = '0.1.0';

/** Object form of the contract version used by /capabilities and the runtime host routes. */
export const ContractVersion = Type.Object(
  { major: Type.Integer({ minimum: 0 }), minor: Type.Integer({ minimum: 0 }), patch: Type.Integer({ minimum: 0 }) },
  { $id: 'ContractVersion' },
);
export type ContractVersion = Static<typeof ContractVersion>;

/** The current contract version. */
export const CONTRACT_VERSION: ContractVersion = { major: 0, minor: 1, patch: 0 };

/** Capability ids in their fixed report order (wire-notes §2.8). */
export const CAPABILITY_IDS = [
  'sessions',
  'streaming',
  'structured_output',
  'hooks',
  'builtins',
  'shell',
  'comms',
  'memory_store',
  'schedule',
  'work_graph',
  'session_store',
  'session_compaction',
  'skills',
  'mcp_live',
] as const;
export type CapabilityId = (typeof CAPABILITY_IDS)[number];

/** `"Available"` or a PascalCase-keyed object (exact spelling: wire-notes §11 item 21). */
export const CapabilityStatus = Type.Union(
  [
    Type.Literal('Available'),
    Type.Object({ DisabledByPolicy: Type.Object({ description: Type.String() }) }),
    Type.Object({ NotCompiled: Type.Object({ feature: Type.String() }) }),
    Type.Object({ NotSupportedByProtocol: Type.Object({ reason: Type.String() }) }),
  ],
  { $id: 'CapabilityStatus' },
);
export type CapabilityStatus = Static<typeof CapabilityStatus>;

const Capability = Type.Object({ id: Type.String(), description: Type.String(), status: CapabilityStatus }, { $id: 'Capability' });
type Capability = Static<typeof Capability>;

export const CapabilitiesResponse = Type.Object(
  { contract_version: ContractVersion, capabilities: Type.Array(Capability) },
  { $id: 'CapabilitiesResponse' },
);
export type CapabilitiesResponse = Static<typeof CapabilitiesResponse>;

/** The host feature flags (wire-notes §2.8). Flags added later decode as false in older payloads. */
export const RUNTIME_FEATURE_FLAGS = [
  'runtime_backed_sessions',
  'mobs',
  'multi_host_mobs',
  'mcp_live',
  'comms',
  'blobs',
  'session_events',
  'session_streams',
  'schedules',
  'skills',
  'event_replay',
  'artifacts',
  'approvals',
  'external_members',
  'secure_remote_rpc',
  'durable_jobs',
] as const;
export type RuntimeFeatureFlag = (typeof RUNTIME_FEATURE_FLAGS)[number];

const RuntimeFeatures = Type.Object(
  Object.fromEntries(RUNTIME_FEATURE_FLAGS.map((f) => [f, Type.Boolean()])) as Record<RuntimeFeatureFlag, ReturnType<typeof Type.Boolean>>,
  { $id: 'RuntimeFeatures' },
);
type RuntimeFeatures = Record<RuntimeFeatureFlag, boolean>;

export const RuntimeCapabilities = Type.Object(
  { contract_version: ContractVersion, features: RuntimeFeatures },
  { $id: 'RuntimeCapabilities' },
);
export type RuntimeCapabilities = Static<typeof RuntimeCapabilities>;

const HealthStatus = Type.Union([Type.Literal('ok'), Type.Literal('degraded'), Type.Literal('unhealthy')], {
  $id: 'HealthStatus',
});
type HealthStatus = Static<typeof HealthStatus>;

/**
 * Check keys: a plain dimension (measured), `unreadable:<dim>` (probe ran, no reading; degrades) or
 * `unmeasured:<dim>` (no probe; excluded from the rollup). Keys are sorted.
 */
export const RuntimeHealth = Type.Object(
  {
    contract_version: ContractVersion,
    status: HealthStatus,
    checks: Type.Record(Type.String(), Type.String()),
    /** Why a dimension is degraded, where Warren knows (e.g. the store refusing writes: no space left). */
    reasons: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** On a postgres realm: this node, its peers and the database (contracts/cluster.ts). */
    cluster: Type.Optional(ClusterReport),
  },
  { $id: 'RuntimeHealth' },
);
export type RuntimeHealth = Static<typeof RuntimeHealth>;

export const HostInfo = Type.Object(
  {
    contract_version: ContractVersion,
    host_id: Type.String(),
    host_id_scope: Type.Union([Type.Literal('realm_instance'), Type.Literal('process')]),
    process_name: Type.String(),
    process_version: Type.String(),
    capabilities: RuntimeCapabilities,
    health: RuntimeHealth,
    realm: Type.Object({
      realm_id: Type.Optional(Type.String()),
      instance_id: Type.Optional(Type.String()),
      backend: Type.Optional(Type.String()),
      state_root: Type.Optional(Type.String()),
      context_root: Type.Optional(Type.String()),
    }),
    endpoints: Type.Object({ rest_base_url: Type.String(), rest_paths: Type.Array(Type.String()) }),
    placement_labels: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** On a postgres realm: this node, its peers and the database (contracts/cluster.ts). */
    cluster: Type.Optional(ClusterReport),
  },
  { $id: 'HostInfo' },
);
export type HostInfo = Static<typeof HostInfo>;

/** The host id of /runtime/host_info (also what the mob hosts route reports for this process). */
export function hostIdentity(
  realm: { realmId: string; instanceId?: string },
  pid: number = process.pid,
): { host_id: string; host_id_scope: 'realm_instance' | 'process' } {
  return realm.instanceId !== undefined
    ? { host_id: `realm-instance:${realm.realmId}:${realm.instanceId}`, host_id_scope: 'realm_instance' }
    : { host_id: `process:${pid}`, host_id_scope: 'process' };
}

const CatalogModelProfile = Type.Object(
  {
    model_family: Type.String(),
    supports_temperature: Type.Boolean(),
    supports_thinking: Type.Boolean(),
    supports_reasoning: Type.Boolean(),
    params_schema: Type.Record(Type.String(), Type.Unknown()),
  },
  { additionalProperties: true },
);

export const ModelCatalog = Type.Object(
  {
    contract_version: Type.String(),
    providers: Type.Array(
      Type.Object({
        provider: Type.String(),
        default_model_id: Type.String(),
        models: Type.Array(
          Type.Object(
            {
              id: Type.String(),
              display_name: Type.String(),
              tier: Type.Union([Type.Literal('recommended'), Type.Literal('supported')]),
              context_window: Type.Optional(Type.Integer()),
              max_output_tokens: Type.Optional(Type.Integer()),
              server_id: Type.Optional(Type.String()),
              profile: Type.Optional(CatalogModelProfile),
            },
            { additionalProperties: true },
          ),
        ),
      }),
    ),
  },
  { $id: 'ModelCatalog' },
);
export type ModelCatalog = Static<typeof ModelCatalog>;

/** One row of GET /realms. `backend` (the storage backend) is set on the active realm only. */
export const RealmSummary = Type.Object(
  {
    realm_id: Type.String(),
    backend: Type.Optional(Type.String()),
    default_binding: Type.Optional(Type.String()),
    backend_count: Type.Integer({ minimum: 0 }),
    auth_profile_count: Type.Integer({ minimum: 0 }),
    binding_count: Type.Integer({ minimum: 0 }),
  },
  { $id: 'RealmSummary' },
);
export type RealmSummary = Static<typeof RealmSummary>;

export const RealmList = Type.Object({ realms: Type.Array(RealmSummary) }, { $id: 'RealmList' });
export type RealmList = Static<typeof RealmList>;

const NamedObjects = Type.Record(Type.String(), Type.Unknown());

/** GET /realms/{id}: one realm's connection set (the `[realm.<id>]` config section). */
export const RealmDetail = Type.Object(
  {
    realm_id: Type.String(),
    backend: Type.Optional(Type.String()),
    default_binding: Type.Optional(Type.String()),
    backends: NamedObjects,
    auth_profiles: NamedObjects,
    bindings: NamedObjects,
  },
  { $id: 'RealmDetail' },
);
export type RealmDetail = Static<typeof RealmDetail>;

const OpenApiDocument = Type.Object({ openapi: Type.String() }, { additionalProperties: true });

/** The observation and system routes. Ids are the handler keys of http/handlers/system.ts. */
export const SYSTEM_ROUTES: RouteDef[] = [
  {
    id: 'system.health',
    method: 'GET',
    path: '/health',
    summary: 'Liveness probe: the plain text ok',
    response: { status: 200, schema: Type.String(), contentType: 'text/plain' },
    errors: [],
  },
  {
    id: 'system.openapi',
    method: 'GET',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    response: { status: 200, schema: OpenApiDocument },
    errors: [],
  },
  {
    id: 'config.get',
    method: 'GET',
    path: '/config',
    summary: 'Read the realm config envelope',
    response: { status: 200, schema: ConfigEnvelope },
    errors: ['INTERNAL_ERROR'],
  },
  {
    id: 'config.replace',
    method: 'PUT',
    path: '/config',
    summary: 'Replace the realm config (direct object or {config, expected_generation})',
    body: ConfigPutBody,
    response: { status: 200, schema: ConfigEnvelope },
    errors: ['BAD_REQUEST', 'INTERNAL_ERROR'],
  },
  {
    id: 'config.patch',
    method: 'PATCH',
    path: '/config',
    summary: 'RFC 7396 merge patch of the realm config (direct patch or {patch, expected_generation})',
    body: ConfigPatchBody,
    response: { status: 200, schema: ConfigEnvelope },
    errors: ['BAD_REQUEST', 'INTERNAL_ERROR'],
  },
  {
    id: 'realms.list',
    method: 'GET',
    path: '/realms',
    summary: 'Realm summaries: the active realm and the [realm.<id>] config sections',
    response: { status: 200, schema: RealmList },
    errors: [],
  },
  {
    id: 'realms.get',
    method: 'GET',
    path: '/realms/{id}',
    summary: 'One realm connection set; unknown ids answer 404 with the error envelope',
    response: { status: 200, schema: RealmDetail },
    errors: ['NOT_FOUND'],
  },
  {
    id: 'capabilities.get',
    method: 'GET',
    path: '/capabilities',
    summary: 'Capability registry in fixed order',
    response: { status: 200, schema: CapabilitiesResponse },
    errors: [],
  },
  {
    id: 'runtime.capabilities',
    method: 'GET',
    path: '/runtime/capabilities',
    summary: 'Host feature flags',
    response: { status: 200, schema: RuntimeCapabilities },
    errors: [],
  },
  {
    id: 'runtime.health',
    method: 'GET',
    path: '/runtime/health',
    summary: 'Host health rollup over the measured session dimensions',
    response: { status: 200, schema: RuntimeHealth },
    errors: [],
  },
  {
    id: 'runtime.hostInfo',
    method: 'GET',
    path: '/runtime/host_info',
    summary: 'Host identity, realm, endpoints, feature flags and health',
    response: { status: 200, schema: HostInfo },
    errors: [],
  },
  {
    id: 'models.catalog',
    method: 'GET',
    path: '/models/catalog',
    summary: 'Compiled-in model catalog',
    response: { status: 200, schema: ModelCatalog },
    errors: [],
  },
];
