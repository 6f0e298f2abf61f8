// contracts/workgraph-inputs.ts: arguments of the workgraph_* agent tools and of the host-only goal and
// attention commands (CLI). One schema each: tools/workgraph-tools.ts validates and advertises them,
// actors/workgraph/* takes their static types.
import { Type, type Static } from 'typebox';
import {
  ATTENTION_MODES,
  AttentionTarget,
  DELEGATED_AUTHORITY,
  EDGE_KINDS,
  ExternalWorkRef,
  NAMESPACE_PATTERN,
  WORK_STATUSES,
  WorkCompletionPolicy,
  WorkEvidenceRef,
  WorkOwner,
} from './workgraph.ts';

const opt = Type.Optional;
const closed = { additionalProperties: false } as const;
const Ns = opt(Type.String({ pattern: NAMESPACE_PATTERN, description: 'WorkGraph namespace (default "default").' }));
const Id = Type.String({ minLength: 1, maxLength: 128, description: 'Work item id (work_...).' });
const Rev = Type.Integer({ minimum: 1, description: 'The item revision you last read; a stale revision is refused.' });
const Time = (what: string) => Type.String({ minLength: 1, description: `${what} (RFC 3339).` });
const NullableTime = (what: string) => Type.Union([Time(what), Type.Null()]);
const Priority = Type.Enum(['low', 'medium', 'high']);
const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 64 });
const Limit = opt(Type.Integer({ minimum: 1, maximum: 100_000 }));
const Statuses = opt(Type.Array(Type.Enum([...WORK_STATUSES])));

export const WorkCreateInput = Type.Object(
  {
    namespace: Ns,
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    description: opt(Type.String({ maxLength: 100_000 })),
    priority: opt(Priority),
    labels: opt(Labels),
    completion_policy: opt(WorkCompletionPolicy),
    owner: opt(WorkOwner),
    due_at: opt(Time('Due time')),
    not_before: opt(Time('Earliest time the item becomes ready')),
    snoozed_until: opt(Time('Snooze gate')),
    external_refs: opt(Type.Array(ExternalWorkRef, { maxItems: 64 })),
    parent_id: opt(Type.String({ minLength: 1, description: 'Adds a parent edge from this item to the given parent.' })),
    blocked_by: opt(
      Type.Array(Type.String({ minLength: 1 }), {
        maxItems: 64,
        description: 'Items that must resolve first (blocks edges into this item).',
      }),
    ),
  },
  closed,
);
export type WorkCreateInput = Static<typeof WorkCreateInput>;

export const WorkGetInput = Type.Object({ namespace: Ns, item_id: Id }, closed);
export type WorkGetInput = Static<typeof WorkGetInput>;

export const WorkListInput = Type.Object(
  {
    namespace: Ns,
    all_namespaces: opt(Type.Boolean()),
    statuses: Statuses,
    labels: opt(Labels),
    include_terminal: opt(Type.Boolean()),
    limit: Limit,
  },
  closed,
);
export type WorkListInput = Static<typeof WorkListInput>;

export const WorkReadyInput = Type.Object({ namespace: Ns, labels: opt(Labels), limit: Limit }, closed);
export type WorkReadyInput = Static<typeof WorkReadyInput>;

export const WorkEventsInput = Type.Object({ namespace: Ns, after_seq: opt(Type.Integer()), limit: Limit }, closed);
export type WorkEventsInput = Static<typeof WorkEventsInput>;

export const WorkClaimInput = Type.Object(
  {
    namespace: Ns,
    item_id: Id,
    expected_revision: Rev,
    lease_ms: opt(
      Type.Integer({
        minimum: 1,
        maximum: 30 * 86_400_000,
        description: 'Lease length in ms; an expired lease releases the claim. Omit for no lease.',
      }),
    ),
  },
  closed,
);
export type WorkClaimInput = Static<typeof WorkClaimInput>;

export const WorkReleaseInput = Type.Object({ namespace: Ns, item_id: Id, expected_revision: Rev }, closed);
export type WorkReleaseInput = Static<typeof WorkReleaseInput>;

export const WorkUpdateInput = Type.Object(
  {
    namespace: Ns,
    item_id: Id,
    expected_revision: Rev,
    title: opt(Type.String({ minLength: 1, maxLength: 1000 })),
    description: opt(Type.String({ maxLength: 100_000 })),
    priority: opt(Priority),
    labels: opt(Labels),
    owner: opt(Type.Union([WorkOwner, Type.Null()])),
    due_at: opt(NullableTime('Due time; null clears')),
    not_before: opt(NullableTime('Earliest ready time; null clears')),
    snoozed_until: opt(NullableTime('Snooze gate; null clears')),
    external_refs: opt(Type.Array(ExternalWorkRef, { maxItems: 64 })),
  },
  closed,
);
export type WorkUpdateInput = Static<typeof WorkUpdateInput>;

export const WorkBlockInput = Type.Object(
  {
    namespace: Ns,
    item_id: Id,
    expected_revision: Rev,
    blocked: opt(Type.Boolean({ description: 'true (default) blocks the item; false unblocks it.' })),
    reason: opt(Type.String({ maxLength: 2000 })),
  },
  closed,
);
export type WorkBlockInput = Static<typeof WorkBlockInput>;

const CloseStatus = Type.Enum(['completed', 'cancelled', 'failed']);
type CloseStatus = Static<typeof CloseStatus>;

export const WorkCloseInput = Type.Object(
  { namespace: Ns, item_id: Id, expected_revision: Rev, status: CloseStatus, summary: opt(Type.String({ maxLength: 10_000 })) },
  closed,
);
export type WorkCloseInput = Static<typeof WorkCloseInput>;

export const WorkLinkInput = Type.Object(
  {
    namespace: Ns,
    from_id: Id,
    to_id: Id,
    kind: Type.Enum([...EDGE_KINDS]),
    expected_revision: Type.Integer({ minimum: 1, description: 'Current revision of the from_id item (linking bumps it).' }),
  },
  closed,
);
export type WorkLinkInput = Static<typeof WorkLinkInput>;

export const WorkEvidenceInput = Type.Object({ namespace: Ns, item_id: Id, expected_revision: Rev, evidence: WorkEvidenceRef }, closed);
export type WorkEvidenceInput = Static<typeof WorkEvidenceInput>;

/** Host-only (trusted in-process authority): a goal is a work item plus an attention binding. */
export const GoalCreateInput = Type.Object(
  {
    namespace: Ns,
    title: Type.String({ minLength: 1, maxLength: 1000 }),
    description: opt(Type.String()),
    labels: opt(Labels),
    priority: opt(Priority),
    completion_policy: opt(WorkCompletionPolicy),
    target: AttentionTarget,
    mode: opt(Type.Enum([...ATTENTION_MODES])),
    delegated_authority: opt(Type.Enum([...DELEGATED_AUTHORITY])),
  },
  closed,
);
export type GoalCreateInput = Static<typeof GoalCreateInput>;

export const GoalConfirmInput = Type.Object(
  {
    namespace: Ns,
    binding_id: Type.String({ minLength: 1 }),
    kind: Type.Enum(['host', 'principal']),
    principal_id: opt(Type.String({ minLength: 1 })),
    summary: opt(Type.String()),
  },
  closed,
);
export type GoalConfirmInput = Static<typeof GoalConfirmInput>;

export const GoalCloseInput = Type.Object({ namespace: Ns, binding_id: Type.String({ minLength: 1 }), status: CloseStatus }, closed);
export type GoalCloseInput = Static<typeof GoalCloseInput>;
