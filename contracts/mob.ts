// contracts/mob.ts: mob shapes: the definition a mob is created from (members, flows), the stored
// records (mob, flow run, structural event, operator grant; each with `v`, validated on read), the 25
// structural event kinds, the operator scopes and the unified event envelope of the mob toolkit layer.
import { Type, type Static } from 'typebox';
import { ProviderId } from './session.ts';

const Labels = Type.Record(Type.String(), Type.String());
/** Agent identities, mob, flow, step and run ids: short, URL-safe names. */
export const MobName = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9][A-Za-z0-9._:-]*$' });

/** `[mob]`: how many structural events the ledger keeps (older cursors answer 410 STALE_CURSOR). */
export const MobSection = Type.Object(
  {
    event_retention: Type.Integer({ minimum: 16, maximum: 100_000_000, default: 100_000 }),
  },
  { additionalProperties: true },
);
export type MobSection = Static<typeof MobSection>;

// ---- definition -----------------------------------------------------------------------------------

export const MemberSpec = Type.Object(
  {
    agent_identity: MobName,
    role: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
    /** Standing instructions, the member session's system prompt. */
    instructions: Type.Optional(Type.String({ minLength: 1 })),
    model: Type.Optional(Type.String({ minLength: 1 })),
    provider: Type.Optional(ProviderId),
    /** The kickoff turn's prompt (default: a short greeting naming the mob and the role). */
    initial_message: Type.Optional(Type.String({ minLength: 1 })),
  },
  { $id: 'MobMemberSpec', additionalProperties: false },
);
export type MemberSpec = Static<typeof MemberSpec>;

/** One flow step: a prompt dispatched to a member; `{{input}}` is replaced by the previous step's output. */
const FlowStep = Type.Object(
  {
    step_id: MobName,
    member: MobName,
    prompt: Type.String({ minLength: 1 }),
  },
  { $id: 'MobFlowStep', additionalProperties: false },
);
type FlowStep = Static<typeof FlowStep>;

export const FlowDef = Type.Object(
  {
    flow_id: MobName,
    steps: Type.Array(FlowStep, { minItems: 1, maxItems: 64 }),
  },
  { $id: 'MobFlowDef', additionalProperties: false },
);
export type FlowDef = Static<typeof FlowDef>;

export const MobDefinition = Type.Object(
  {
    members: Type.Optional(Type.Array(MemberSpec, { maxItems: 64 })),
    flows: Type.Optional(Type.Array(FlowDef, { maxItems: 64 })),
    /** Pairs of agent identities wired at start. */
    wiring: Type.Optional(Type.Array(Type.Object({ a: MobName, b: MobName }, { additionalProperties: false }), { maxItems: 512 })),
  },
  { $id: 'MobDefinition', additionalProperties: false },
);
export type MobDefinition = Static<typeof MobDefinition>;

// ---- fences ---------------------------------------------------------------------------------------

/**
 * `expected_revision`: the mob revision (MobRecord.revision) a mutation expects; `expected_generation`:
 * the member generation it expects. Accepted by the fenced JSON-RPC methods (contracts/mob-rpc.ts) and
 * the REST wire-members-batch and respawn bodies; a mismatch is 409 STALE_FENCE (JSON-RPC -32024, CLI 48).
 */
export const ExpectedRevision = Type.Integer({ minimum: 0 });
export const ExpectedGeneration = Type.Integer({ minimum: 1 });

// ---- stored records -------------------------------------------------------------------------------

const MEMBER_STATES = ['spawning', 'active', 'running', 'cancelled', 'failed', 'retired'] as const;

export const MemberRecord = Type.Object({
  agent_identity: Type.String(),
  role: Type.String(),
  state: Type.Enum([...MEMBER_STATES]),
  session_id: Type.Union([Type.String(), Type.Null()]),
  generation: Type.Integer({ minimum: 1 }),
  helper: Type.Boolean(),
  spec: MemberSpec,
  kickoff: Type.Union([Type.Literal('pending'), Type.Literal('completed'), Type.Literal('failed')]),
  last_error: Type.Optional(Type.String()),
  /** A retired helper whose session could not be archived yet: why (paid when the work on it ends). */
  cleanup_debt: Type.Optional(Type.String()),
  spawned_at_ms: Type.Integer(),
});
export type MemberRecord = Static<typeof MemberRecord>;

export const MobRecord = Type.Object(
  {
    v: Type.Literal(1),
    mob_id: Type.String(),
    state: Type.Union([Type.Literal('running'), Type.Literal('destroying'), Type.Literal('destroyed')]),
    labels: Labels,
    definition: MobDefinition,
    members: Type.Record(Type.String(), MemberRecord),
    /** Wired pairs, each sorted [a, b] with a < b. */
    edges: Type.Array(Type.Tuple([Type.String(), Type.String()])),
    /**
     * The mob's fence: grows by one at every change of membership, wiring or lifecycle (spawn, retire,
     * cancel, respawn, wire, unwire, destroy, helper pruning). Mutations may carry `expected_revision`;
     * a mismatch is 409 STALE_FENCE. Absent in records written before it existed (read as 0).
     */
    revision: Type.Optional(Type.Integer({ minimum: 0 })),
    /** Wired pairs whose route is installed: both members' sessions exist and each was told of the other. */
    installed: Type.Optional(Type.Array(Type.Tuple([Type.String(), Type.String()]))),
    /** Retired helpers removed from `members`, newest last (bounded): what history and status still need. */
    retired_helpers: Type.Optional(
      Type.Array(
        Type.Object({
          agent_identity: Type.String(),
          session_id: Type.Union([Type.String(), Type.Null()]),
          generation: Type.Integer(),
          role: Type.String(),
          retired_at_ms: Type.Integer(),
          /** How its kickoff ended (absent in entries written before it was kept: completed). */
          kickoff: Type.Optional(Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('pending')])),
        }),
      ),
    ),
    created_at_ms: Type.Integer(),
    updated_at_ms: Type.Integer(),
  },
  { $id: 'MobRecord' },
);
export type MobRecord = Static<typeof MobRecord>;

const FLOW_RUN_STATUSES = ['pending', 'running', 'completed', 'failed', 'canceled'] as const;
type FlowRunStatus = (typeof FLOW_RUN_STATUSES)[number];

export const FlowRunRecord = Type.Object(
  {
    v: Type.Literal(1),
    mob_id: Type.String(),
    flow_id: Type.String(),
    run_id: Type.String(),
    status: Type.Enum([...FLOW_RUN_STATUSES]),
    /** Opaque activation parameters of the caller (a work execution binding, a schedule). */
    activation: Type.Unknown(),
    run_labels: Labels,
    /** Index of the next step to dispatch. */
    next_step: Type.Integer({ minimum: 0 }),
    outputs: Type.Array(Type.Object({ step_id: Type.String(), agent_identity: Type.String(), output: Type.String() })),
    output: Type.Optional(Type.String()),
    error: Type.Optional(Type.String()),
    created_at_ms: Type.Integer(),
    updated_at_ms: Type.Integer(),
  },
  { $id: 'MobFlowRun' },
);
export type FlowRunRecord = Static<typeof FlowRunRecord>;

// ---- structural events ----------------------------------------------------------------------------

/** The 25 structural event kinds (docs/mobs.md describes each). */
const STRUCTURAL_KINDS = [
  'mob_created',
  'mob_destroyed',
  'member_spawned',
  'member_kickoff_completed',
  'member_kickoff_failed',
  'member_retired',
  'member_cancelled',
  'member_respawned',
  'member_turn_failed',
  'members_wired',
  'members_unwired',
  'helper_spawned',
  'helper_forked',
  'helper_completed',
  'helper_retired',
  'flow_started',
  'step_dispatched',
  'step_completed',
  'step_failed',
  'flow_completed',
  'flow_failed',
  'flow_canceled',
  'supervisor_escalation',
  'scope_granted',
  'scope_revoked',
] as const;
export type StructuralKind = (typeof STRUCTURAL_KINDS)[number];

export const MobEventRecord = Type.Object(
  {
    v: Type.Literal(1),
    event_id: Type.String(),
    cursor: Type.Integer({ minimum: 1 }),
    mob_id: Type.String(),
    timestamp_ms: Type.Integer(),
    kind: Type.Enum([...STRUCTURAL_KINDS]),
    run_id: Type.Union([Type.String(), Type.Null()]),
    step_id: Type.Union([Type.String(), Type.Null()]),
    agent_identity: Type.Union([Type.String(), Type.Null()]),
    mob_labels: Labels,
    run_labels: Labels,
    data: Type.Record(Type.String(), Type.Unknown()),
  },
  { $id: 'MobEvent' },
);
export type MobEventRecord = Static<typeof MobEventRecord>;
/** The wire form: the record without its storage version. */
export type MobEvent = Omit<MobEventRecord, 'v'>;

// ---- operator scopes ------------------------------------------------------------------------------

export const MOB_SCOPES = [
  'MobRead',
  'MobLifecycle',
  'MemberLifecycle',
  'MemberWire',
  'FlowControl',
  'HelperControl',
  'AdminGrants',
  'AdminHost',
] as const;
export type MobScope = (typeof MOB_SCOPES)[number];
export const MobScopeSchema = Type.Enum([...MOB_SCOPES]);

export const GrantRecord = Type.Object(
  {
    v: Type.Literal(1),
    principal: Type.String(),
    scopes: Type.Array(MobScopeSchema),
    expires_at_ms: Type.Optional(Type.Integer({ minimum: 0 })),
    granted_at_ms: Type.Integer(),
  },
  { $id: 'MobGrant' },
);
export type GrantRecord = Static<typeof GrantRecord>;

// ---- the unified envelope (toolkit layer) ---------------------------------------------------------

interface AgentEvent {
  agent_id: string;
  event_type: string;
  [k: string]: unknown;
}
interface ModuleEvent {
  module: string;
  event_type: string;
  payload: unknown;
}
export interface UnifiedEnvelope {
  event_id: string;
  source: 'agent' | 'module';
  timestamp_ms: number;
  event: AgentEvent | ModuleEvent;
}

/** Lifecycle stages of the mob runtime, in order. */
export const LIFECYCLE_STAGES = ['MobStarted', 'ModulesStarted', 'EventsMerged', 'RuntimeReady'] as const;
export type LifecycleStage = (typeof LIFECYCLE_STAGES)[number];

// ---- the flow-run port (RuntimeDeps.mobFlows) ------------------------------------------------------

/** What other subsystems (work execution bindings, schedules) use to run mob flows. docs/mobs.md. */
export interface FlowRunPort {
  /** Idempotent by runId: a known run is returned as is (409 CONFLICT when runId names another flow). */
  startFlowRun(req: {
    mobId: string;
    flowId: string;
    runId: string;
    activation?: unknown;
    runLabels?: Record<string, string>;
  }): Promise<FlowRunRecord>;
  getFlowRun(mobId: string, runId: string): Promise<FlowRunRecord | undefined>;
  cancelFlowRun(mobId: string, runId: string): Promise<FlowRunRecord | undefined>;
  /** Every terminal outcome (completed, failed, canceled), once per run and process; returns unsubscribe. */
  onTerminal(listener: (run: FlowRunRecord) => void): () => void;
}
