// contracts/work-binding.ts: work execution bindings. A binding links one WorkGraph item to one exact
// mob-flow attempt (mob id, flow id + digest, a run id derived from the binding id, opaque activation
// parameters). Shapes here: the stored record (`v`, validated on read), the public (redacted) view, and
// the arguments of the MCP execution tools. Public reads never show activation parameters, idempotency
// keys, correlation ids or execution principals.
import { Type, type Static } from 'typebox';
import { MobName } from './mob.ts';

/** Every phase of the binding machine (machines/work-binding-machine.ts). */
export const BINDING_PHASES = [
  'launch',
  'begun',
  'realizing',
  'running',
  'projecting',
  'closing',
  'completed',
  'closure_refused',
  'failed',
  'canceled',
  'abandoned',
  'quarantined',
  'run_lost',
] as const;
export type BindingPhase = (typeof BINDING_PHASES)[number];
const TERMINAL_PHASES: readonly BindingPhase[] = [
  'completed',
  'closure_refused',
  'failed',
  'canceled',
  'abandoned',
  'quarantined',
  'run_lost',
];
export const isTerminalPhase = (p: string): boolean => (TERMINAL_PHASES as readonly string[]).includes(p);

const Phase = Type.Enum([...BINDING_PHASES]);
const Ns = Type.String({ minLength: 1, maxLength: 128 });

const WorkRef = Type.Object({ realm_id: Type.String(), namespace: Type.String(), item_id: Type.String() }, { additionalProperties: false });
type WorkRef = Static<typeof WorkRef>;

const BindingTarget = Type.Object(
  {
    mob_id: Type.String(),
    flow_id: Type.String(),
    /** sha256 (hex) of the flow definition as it was when the binding was made. */
    flow_digest: Type.String(),
    /** Derived from the binding id (`wexec_<binding uuid>`): the deterministic pending run. */
    run_id: Type.String(),
    activation: Type.Unknown(),
  },
  { additionalProperties: false },
);
type BindingTarget = Static<typeof BindingTarget>;

/** The machine's stored snapshot: its state value and data-only context. */
const BindingMachineSnapshot = Type.Object({
  value: Phase,
  context: Type.Object(
    {
      revision: Type.Integer({ minimum: 1 }),
      pendingRun: Type.Boolean(),
      uncertain: Type.Boolean(),
      runStatus: Type.Union([Type.Literal('completed'), Type.Literal('failed'), Type.Literal('canceled'), Type.Null()]),
      reason: Type.Union([Type.String(), Type.Null()]),
      lastDecision: Type.Optional(Type.Unknown()),
    },
    { additionalProperties: true },
  ),
});
type BindingMachineSnapshot = Static<typeof BindingMachineSnapshot>;

export const WorkBindingRecord = Type.Object(
  {
    v: Type.Literal(1),
    binding_id: Type.String(),
    work_ref: WorkRef,
    target: BindingTarget,
    idempotency_key: Type.String(),
    /** sha256 of the launch request (namespace, item, mob, flow, activation): an exact replay matches it. */
    request_digest: Type.String(),
    correlation_id: Type.String(),
    principal: Type.String(),
    supersedes: Type.Union([Type.String(), Type.Null()]),
    superseded_by: Type.Union([Type.String(), Type.Null()]),
    machine: BindingMachineSnapshot,
    /** The evidence id, once its evidence committed. */
    evidence_id: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String(),
    updated_at: Type.String(),
  },
  { $id: 'WorkBindingRecord' },
);
export type WorkBindingRecord = Static<typeof WorkBindingRecord>;

/** One item's append-only retry chain, oldest first. */
/** `rev`: bumped by every extension and checked by it (absent on chains written before it existed). */
export const BindingChainRecord = Type.Object({
  v: Type.Literal(1),
  binding_ids: Type.Array(Type.String()),
  rev: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type BindingChainRecord = Static<typeof BindingChainRecord>;

/** An idempotency key's claim: which binding it made and from which request. */
export const BindingKeyRecord = Type.Object({ v: Type.Literal(1), binding_id: Type.String(), request_digest: Type.String() });
export type BindingKeyRecord = Static<typeof BindingKeyRecord>;

/** What public reads return: no activation parameters, idempotency key, correlation id or principal. */
export interface PublicBinding {
  binding_id: string;
  work_ref: WorkRef;
  target: { mob_id: string; flow_id: string; flow_digest: string; run_id: string };
  supersedes: string | null;
  superseded_by: string | null;
  machine_state: BindingPhase;
  binding_revision: number;
  terminal: boolean;
  uncertain: boolean;
  run_status: 'completed' | 'failed' | 'canceled' | null;
  reason: string | null;
  evidence_id: string | null;
  created_at: string;
  updated_at: string;
}

// ---- MCP tool arguments -----------------------------------------------------------------------------

const closed = { additionalProperties: false } as const;
const BindingId = Type.String({ minLength: 1, maxLength: 200 });

export const FlowLaunchArgs = Type.Object(
  {
    namespace: Type.Optional(Ns),
    item_id: Type.String({ minLength: 1, maxLength: 200 }),
    /** Compare-and-set on the item's revision: required to create a new binding. */
    expected_item_revision: Type.Integer({ minimum: 1 }),
    mob_id: MobName,
    flow_id: MobName,
    /** When given, must equal the digest of the mob's current flow definition. */
    flow_digest: Type.Optional(Type.String({ minLength: 64, maxLength: 64 })),
    /** Opaque to Warren; `input` feeds the flow's first step. Never shown by public reads. */
    activation: Type.Optional(Type.Unknown()),
    /** Caller-stable launch identity: the same key and request replay the same binding. */
    idempotency_key: Type.String({ minLength: 1, maxLength: 200 }),
    /** When given, must name the item's current (terminal) chain head. */
    supersedes: Type.Optional(BindingId),
    /** The execution principal recorded with the binding (default `mcp`). */
    principal: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  closed,
);
export type FlowLaunchArgs = Static<typeof FlowLaunchArgs>;

export const BindingIdArgs = Type.Object({ binding_id: BindingId }, closed);
export type BindingIdArgs = Static<typeof BindingIdArgs>;

export const AbandonArgs = Type.Object({ binding_id: BindingId, expected_binding_revision: Type.Integer({ minimum: 1 }) }, closed);
export type AbandonArgs = Static<typeof AbandonArgs>;

export const BindingListArgs = Type.Object(
  {
    namespace: Type.Optional(Ns),
    item_id: Type.Optional(Type.String({ minLength: 1 })),
    machine_state: Type.Optional(Phase),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  closed,
);
export type BindingListArgs = Static<typeof BindingListArgs>;

export const FlowStatusArgs = Type.Object({ mob_id: MobName, run_id: Type.String({ minLength: 1, maxLength: 200 }) }, closed);
export type FlowStatusArgs = Static<typeof FlowStatusArgs>;
