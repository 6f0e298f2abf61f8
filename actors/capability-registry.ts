// actors/capability-registry.ts: the one place that knows which capabilities this build has. Module
// units declare what they build (http/module-unit.ts); everything else reads from here: GET /capabilities,
// GET /runtime/capabilities (and host_info), the 501 refusals of not-yet-built routes, and the 501 of
// request flags asking for an unbuilt feature (e.g. `enable_schedule` before schedules exist).
import { ServiceError } from '../contracts/errors.ts';
import {
  CAPABILITY_IDS,
  CONTRACT_VERSION,
  RUNTIME_FEATURE_FLAGS,
  type CapabilitiesResponse,
  type CapabilityId,
  type CapabilityStatus,
  type RuntimeCapabilities,
  type RuntimeFeatureFlag,
} from '../contracts/routes-system.ts';

/** The part of the effective config that capability gates read (structural: tests pass a subset). */
export interface GateConfig {
  tools: { builtins_enabled: boolean; shell_enabled: boolean; schedule_enabled: boolean; workgraph_enabled: boolean };
  skills?: { enabled: boolean };
}

/** A config switch that turns a built capability off (reported as DisabledByPolicy). */
export interface CapabilityGate {
  enabled(config: GateConfig): boolean;
  description: string;
}

/**
 * What a module declares it builds: a capability id (CAPABILITY_IDS, plus 'mob') or a host feature id
 * without a capability row ('event_replay', 'blobs', 'artifacts', 'approvals', 'external_members',
 * 'secure_remote_rpc', 'multi_host_mobs', 'durable_jobs'). `gate` overrides the standard gate of the id
 * (DEFAULT_GATES); null means none.
 */
export interface CapabilityDecl {
  id: string;
  gate?: CapabilityGate | null;
  /** Replaces the standard description (e.g. to say which mode a capability runs in). */
  description?: () => string;
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

/** Standard config gates (wire-notes §2.8 descriptions); a declaration may override them. */
const DEFAULT_GATES: Partial<Record<string, CapabilityGate>> = {
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

/** Host feature flags that are also off while their capability's config gate is off. */
const GATED_FEATURES: ReadonlySet<RuntimeFeatureFlag> = new Set(['skills']);

export class CapabilityRegistry {
  /** Built id → the declaring module and the effective gate. */
  private readonly built = new Map<string, { owner: string; gate: CapabilityGate | null; description?: () => string }>();

  constructor(private readonly config: () => GateConfig) {}

  /** Records that `owner` builds `decl.id`. A second declaration of one id is a wiring bug. */
  declare(decl: CapabilityDecl, owner: string): void {
    const prior = this.built.get(decl.id);
    if (prior) throw new Error(`capability ${decl.id} declared by both ${prior.owner} and ${owner}`);
    this.built.set(decl.id, {
      owner,
      gate: decl.gate === undefined ? (DEFAULT_GATES[decl.id] ?? null) : decl.gate,
      ...(decl.description ? { description: decl.description } : {}),
    });
  }

  isBuilt(id: string): boolean {
    return this.built.has(id);
  }

  /** The 501 CAPABILITY_UNAVAILABLE a route of an unbuilt capability answers. */
  unavailable(id: string): ServiceError {
    return new ServiceError('CAPABILITY_UNAVAILABLE', `capability not available in this build: ${id}`, { capability: id });
  }

  /**
   * Throws 501 CAPABILITY_UNAVAILABLE when a request asks for a feature (`what`, e.g. "schedule tools")
   * whose capability is not built, so that it is refused rather than silently ignored.
   */
  require(id: string, what: string): void {
    if (!this.built.has(id))
      throw new ServiceError('CAPABILITY_UNAVAILABLE', `${what} is not built in this version of Warren`, { capability: id });
  }

  /** Available, DisabledByPolicy or NotCompiled. */
  status(id: string): CapabilityStatus {
    const entry = this.built.get(id);
    if (!entry) return { NotCompiled: { feature: id } };
    if (entry.gate && !entry.gate.enabled(this.config())) return { DisabledByPolicy: { description: entry.gate.description } };
    return 'Available';
  }

  /** GET /capabilities: every capability id in the fixed order. */
  report(): CapabilitiesResponse {
    const capabilities = CAPABILITY_IDS.map((id) => ({
      id,
      description: this.built.get(id)?.description?.() ?? DESCRIPTIONS[id],
      status: this.status(id),
    }));
    return { contract_version: { ...CONTRACT_VERSION }, capabilities };
  }

  /** GET /runtime/capabilities: the host feature flags. */
  runtime(): RuntimeCapabilities {
    const features = {} as Record<RuntimeFeatureFlag, boolean>;
    for (const flag of RUNTIME_FEATURE_FLAGS) {
      const source = FEATURE_SOURCE[flag];
      features[flag] = GATED_FEATURES.has(flag) ? this.status(source) === 'Available' : this.built.has(source);
    }
    return { contract_version: { ...CONTRACT_VERSION }, features };
  }
}
