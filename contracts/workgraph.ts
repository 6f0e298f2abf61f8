// contracts/workgraph.ts: the WorkGraph wire shapes (SPEC.md "WorkItem", edge kinds, completion policies;
// wire-notes 2.5) and its read-only route catalog. actors/workgraph/* produce these values, tools/ and
// http/handlers/workgraph.ts return them, cli/workgraph-command.ts prints them.
import { Type, type Static } from 'typebox';
import type { RouteDef } from './route.ts';

const opt = Type.Optional;
const lit = <const T extends string[]>(values: readonly [...T]) => Type.Enum<T>(values);

export const WORK_STATUSES = ['open', 'in_progress', 'blocked', 'completed', 'cancelled', 'failed'] as const;
export const WorkStatus = lit(WORK_STATUSES);
export type WorkStatus = Static<typeof WorkStatus>;
const TERMINAL_STATUSES: readonly WorkStatus[] = ['completed', 'cancelled', 'failed'];

export const WorkPriority = lit(['low', 'medium', 'high'] as const);
export type WorkPriority = Static<typeof WorkPriority>;

const OWNER_KINDS = ['principal', 'agent', 'session', 'mob', 'label'] as const;
export const WorkOwnerKey = Type.Object(
  { kind: lit(OWNER_KINDS), id: Type.String({ minLength: 1, maxLength: 256 }) },
  { additionalProperties: false },
);
export type WorkOwnerKey = Static<typeof WorkOwnerKey>;

export const WorkOwner = Type.Object(
  { key: WorkOwnerKey, display_name: opt(Type.String({ maxLength: 256 })) },
  { additionalProperties: false },
);
export type WorkOwner = Static<typeof WorkOwner>;

/** A claim: the owner plus an optional lease (RFC 3339). `expiry_observed_at` is set when a lease expiry was observed. */
const WorkClaim = Type.Object({
  owner: WorkOwner,
  claimed_at: Type.String(),
  lease_expires_at: opt(Type.String()),
  expiry_observed_at: opt(Type.String()),
});
type WorkClaim = Static<typeof WorkClaim>;

const COMPLETION_POLICY_KINDS = ['self_attest', 'host_confirmed', 'principal_confirmed', 'supervisor', 'reviewer_quorum'] as const;
export const WorkCompletionPolicy = Type.Union([
  Type.Object({ kind: lit(['self_attest', 'host_confirmed'] as const) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('principal_confirmed'), principal: opt(WorkOwnerKey) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('supervisor'), owner_key: WorkOwnerKey }, { additionalProperties: false }),
  Type.Object(
    { kind: Type.Literal('reviewer_quorum'), threshold: Type.Integer({ minimum: 1, maximum: 100 }) },
    { additionalProperties: false },
  ),
]);
export type WorkCompletionPolicy = Static<typeof WorkCompletionPolicy>;

export const ExternalWorkRef = Type.Object(
  { kind: Type.String({ minLength: 1 }), id: Type.String({ minLength: 1 }), url: opt(Type.String()) },
  { additionalProperties: false },
);
export type ExternalWorkRef = Static<typeof ExternalWorkRef>;

/** Confirmation kinds an evidence ref may carry; they feed the completion policies. */
const CONFIRMATION_KINDS = ['host', 'principal', 'supervisor', 'review'] as const;
export const ConfirmationKind = lit(CONFIRMATION_KINDS);
export type ConfirmationKind = Static<typeof ConfirmationKind>;

/** A pointer to evidence (content is not owned). */
export const WorkEvidenceRef = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  kind: Type.String({ minLength: 1, maxLength: 64 }),
  label: opt(Type.String()),
  summary: opt(Type.String()),
  execution_binding_id: opt(Type.String()),
  confirmation_kind: opt(ConfirmationKind),
  confirming_owner_key: opt(WorkOwnerKey),
});
export type WorkEvidenceRef = Static<typeof WorkEvidenceRef>;

const Iso = Type.String();

export const WorkItem = Type.Object(
  {
    id: Type.String(),
    realm_id: Type.String(),
    namespace: Type.String(),
    title: Type.String(),
    description: opt(Type.String()),
    status: WorkStatus,
    priority: WorkPriority,
    completion_policy: WorkCompletionPolicy,
    labels: Type.Array(Type.String()),
    owner: opt(WorkOwner),
    claim: opt(WorkClaim),
    machine_state: Type.Object({}, { additionalProperties: true }),
    revision: Type.Integer({ minimum: 1 }),
    due_at: opt(Iso),
    not_before: opt(Iso),
    snoozed_until: opt(Iso),
    terminal_at: opt(Iso),
    blocked_reason: opt(Type.String()),
    created_at: Iso,
    updated_at: Iso,
    external_refs: Type.Array(ExternalWorkRef),
    evidence_refs: Type.Array(WorkEvidenceRef),
  },
  { $id: 'WorkItem' },
);
export type WorkItem = Static<typeof WorkItem>;

export const EDGE_KINDS = ['blocks', 'parent', 'related', 'supersedes', 'derived_from'] as const;
export const WorkEdgeKind = lit(EDGE_KINDS);
export type WorkEdgeKind = Static<typeof WorkEdgeKind>;

export const WorkEdge = Type.Object({
  realm_id: Type.String(),
  namespace: Type.String(),
  from_id: Type.String(),
  to_id: Type.String(),
  kind: WorkEdgeKind,
  created_at: Iso,
});
export type WorkEdge = Static<typeof WorkEdge>;

export const WorkFact = Type.Union([
  Type.Object({ kind: Type.Literal('item_ready'), item_id: Type.String(), item_revision: Type.Integer() }),
  Type.Object({
    kind: Type.Literal('lease_expired'),
    item_id: Type.String(),
    owner_key: WorkOwnerKey,
    lease_expires_at: Iso,
    observed_at: Iso,
  }),
  Type.Object({ kind: Type.Literal('namespace_terminal'), namespace: Type.String() }),
]);
export type WorkFact = Static<typeof WorkFact>;

const EVENT_KINDS = [
  'created',
  'updated',
  'readiness_observed',
  'claimed',
  'released',
  'blocked',
  'closed',
  'linked',
  'evidence_added',
  'attention_created',
  'attention_updated',
  'execution_bound',
  'execution_transitioned',
] as const;
export const WorkEventKind = lit(EVENT_KINDS);
export type WorkEventKind = Static<typeof WorkEventKind>;

export const WorkEvent = Type.Object({
  seq: Type.Integer({ minimum: 1 }),
  realm_id: Type.String(),
  namespace: Type.String(),
  item_id: opt(Type.String()),
  kind: WorkEventKind,
  at: Iso,
  payload: opt(Type.Unknown()),
  facts: opt(Type.Array(WorkFact)),
});
export type WorkEvent = Static<typeof WorkEvent>;

export const AttentionTarget = Type.Union([
  Type.Object({ kind: Type.Literal('session'), session_id: Type.String({ minLength: 1 }) }, { additionalProperties: false }),
  Type.Object({ kind: Type.Literal('lowered_owner'), owner_key: WorkOwnerKey }, { additionalProperties: false }),
]);
export type AttentionTarget = Static<typeof AttentionTarget>;
export const ATTENTION_MODES = ['pursue', 'coordinate', 'review', 'falsify', 'judge', 'observe'] as const;
export const DELEGATED_AUTHORITY = ['add_evidence', 'close_own_review_item', 'request_closure', 'close_if_policy_allows'] as const;
const ATTENTION_STATES = ['active', 'paused', 'superseded', 'stopped'] as const;
export const AttentionStatus = Type.Union([
  Type.Object({ state: Type.Literal('active') }),
  Type.Object({ state: Type.Literal('paused'), until: opt(Iso) }),
  Type.Object({ state: Type.Literal('superseded') }),
  Type.Object({ state: Type.Literal('stopped') }),
]);
export type AttentionStatus = Static<typeof AttentionStatus>;

export const WorkAttentionBinding = Type.Object(
  {
    binding_id: Type.String(),
    work_ref: Type.Object({ realm_id: Type.String(), namespace: Type.String(), item_id: Type.String() }),
    target: AttentionTarget,
    mode: lit(ATTENTION_MODES),
    delegated_authority: lit(DELEGATED_AUTHORITY),
    status: AttentionStatus,
    created_at: Iso,
    updated_at: Iso,
  },
  { $id: 'WorkAttentionBinding' },
);
export type WorkAttentionBinding = Static<typeof WorkAttentionBinding>;

export const WorkSnapshot = Type.Object(
  {
    realm_id: Type.String(),
    namespace: opt(Type.String()),
    all_namespaces: Type.Boolean(),
    items: Type.Array(WorkItem),
    edges: Type.Array(WorkEdge),
    ready_item_ids: Type.Array(Type.String()),
    attention: opt(Type.Array(WorkAttentionBinding)),
    captured_at: Iso,
    event_high_water_mark: opt(Type.Integer()),
  },
  { $id: 'WorkSnapshot' },
);
export type WorkSnapshot = Static<typeof WorkSnapshot>;

/** Namespace names: 1-64 chars of letters, digits, '_', '-', '.'. */
export const NAMESPACE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$';
export const DEFAULT_NAMESPACE = 'default';

const Bool = Type.Union([Type.Literal('true'), Type.Literal('false')]);
const Count = Type.String({ pattern: '^[0-9]{1,9}$' });
const Ns = Type.String({ pattern: NAMESPACE_PATTERN });

/** items/snapshot query; `statuses` and `labels` may repeat or be comma-separated. */
const WorkItemsQuery = Type.Object({
  realm_id: opt(Type.String()),
  namespace: opt(Ns),
  all_namespaces: opt(Bool),
  statuses: opt(Type.String()),
  labels: opt(Type.String()),
  include_terminal: opt(Bool),
  limit: opt(Count),
});
const WorkReadyQuery = Type.Object({
  realm_id: opt(Type.String()),
  namespace: opt(Ns),
  labels: opt(Type.String()),
  limit: opt(Count),
});
const WorkItemQuery = Type.Object({ realm_id: opt(Type.String()), namespace: opt(Ns) });
const WorkEventsQuery = Type.Object({
  realm_id: opt(Type.String()),
  namespace: opt(Ns),
  all_namespaces: opt(Bool),
  after_seq: opt(Type.String({ pattern: '^-?[0-9]{1,15}$' })),
  limit: opt(Count),
});

const WorkItemList = Type.Object({ items: Type.Array(WorkItem) }, { $id: 'WorkItemList' });
const WorkEventList = Type.Object({ events: Type.Array(WorkEvent), has_more: opt(Type.Boolean()) }, { $id: 'WorkEventList' });

const GoalStatusRequest = Type.Object({
  binding_id: Type.String({ minLength: 1 }),
  realm_id: opt(Type.String()),
  namespace: opt(Ns),
});
type GoalStatusRequest = Static<typeof GoalStatusRequest>;
export const GoalStatus = Type.Object({ item: WorkItem, attention: WorkAttentionBinding }, { $id: 'GoalStatus' });
export type GoalStatus = Static<typeof GoalStatus>;

export const AttentionListRequest = Type.Object({
  realm_id: opt(Type.String()),
  namespace: opt(Ns),
  status: opt(lit(ATTENTION_STATES)),
  target: opt(AttentionTarget),
});
export type AttentionListRequest = Static<typeof AttentionListRequest>;
const AttentionList = Type.Object({ attention: Type.Array(WorkAttentionBinding) }, { $id: 'AttentionList' });

const CAP = 'work_graph';
const READ_ERRORS = ['BAD_REQUEST', 'NOT_FOUND'] as const;

/** The WorkGraph routes: reads only (SPEC.md: goal and attention mutation stays off REST). */
export const WORKGRAPH_ROUTE = {
  items: {
    id: 'workgraph.items',
    method: 'GET',
    path: '/workgraph/items',
    summary: 'List work items',
    capability: CAP,
    query: WorkItemsQuery,
    response: { status: 200, schema: WorkItemList },
    errors: [...READ_ERRORS],
  },
  item: {
    id: 'workgraph.item',
    method: 'GET',
    path: '/workgraph/items/{id}',
    summary: 'Read a work item',
    capability: CAP,
    query: WorkItemQuery,
    response: { status: 200, schema: WorkItem },
    errors: [...READ_ERRORS],
  },
  ready: {
    id: 'workgraph.ready',
    method: 'GET',
    path: '/workgraph/ready',
    summary: 'List ready work items',
    capability: CAP,
    query: WorkReadyQuery,
    response: { status: 200, schema: WorkItemList },
    errors: [...READ_ERRORS],
  },
  snapshot: {
    id: 'workgraph.snapshot',
    method: 'GET',
    path: '/workgraph/snapshot',
    summary: 'WorkGraph snapshot',
    capability: CAP,
    query: WorkItemsQuery,
    response: { status: 200, schema: WorkSnapshot },
    errors: [...READ_ERRORS],
  },
  events: {
    id: 'workgraph.events',
    method: 'GET',
    path: '/workgraph/events',
    summary: 'WorkGraph events after a sequence number',
    capability: CAP,
    query: WorkEventsQuery,
    response: { status: 200, schema: WorkEventList },
    errors: [...READ_ERRORS],
  },
  goalStatus: {
    id: 'workgraph.goalStatus',
    method: 'POST',
    path: '/workgraph/goal/status',
    summary: 'Read a goal: its item and attention binding',
    capability: CAP,
    body: GoalStatusRequest,
    response: { status: 200, schema: GoalStatus },
    errors: [...READ_ERRORS],
  },
  attentionList: {
    id: 'workgraph.attentionList',
    method: 'POST',
    path: '/workgraph/attention/list',
    summary: 'List attention bindings',
    capability: CAP,
    body: AttentionListRequest,
    response: { status: 200, schema: AttentionList },
    errors: [...READ_ERRORS],
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const WORKGRAPH_ROUTES: RouteDef[] = Object.values(WORKGRAPH_ROUTE);
