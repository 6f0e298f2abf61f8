// machines/work-item-machine.ts: one work item's lifecycle (SPEC.md "WorkItem statuses"): open,
// in_progress, blocked, completed, cancelled, failed. Pure: no IO and no clock (every event carries `now`
// in epoch ms). Claims are revision-based with optional leases; an expired lease releases the claim only
// through `lease.check` (with a `lease_expired` fact); terminal items cannot be claimed; completion
// policies gate closure as `completed`. actors/workgraph/ drives it with xstate's pure `transition()` and
// reads `context.outcome` after each event. Every state is safe to restore (no invoked services, no
// `after` timers: lease deadlines live in context and the actor re-arms them).
import { assign, not, setup } from 'xstate';
import type {
  ConfirmationKind,
  WorkCompletionPolicy,
  WorkEvidenceRef,
  WorkFact,
  WorkOwner,
  WorkOwnerKey,
  WorkStatus,
} from '../contracts/workgraph.ts';

/** Who sends a mutation: an owner key, and whether it holds trusted in-process host authority. */
export interface WorkCaller {
  owner: WorkOwner;
  host: boolean;
}

interface ClaimState {
  owner: WorkOwner;
  claimed_at_ms: number;
  lease_expires_at_ms: number | null;
}

export type RejectReason =
  | 'stale_revision'
  | 'terminal'
  | 'not_ready'
  | 'already_claimed'
  | 'not_claimed'
  | 'not_claimant'
  | 'not_blocked'
  | 'lease_not_expired'
  | 'policy_unsatisfied'
  | 'evidence_conflict'
  | 'forbidden_confirmation';

export type WorkOutcome =
  | {
      ok: true;
      kind:
        | 'claimed'
        | 'renewed'
        | 'released'
        | 'lease_expired'
        | 'blocked'
        | 'unblocked'
        | 'updated'
        | 'closed'
        | 'evidence_added'
        | 'evidence_replayed';
      facts: WorkFact[];
    }
  | { ok: false; reason: RejectReason; message: string };

export interface WorkItemContext {
  itemId: string;
  revision: number;
  policy: WorkCompletionPolicy;
  claim: ClaimState | null;
  evidence: WorkEvidenceRef[];
  blockedReason: string | null;
  terminalAtMs: number | null;
  /** The machine's answer to the last event; the actor reads it after `transition()`. */
  outcome: WorkOutcome | null;
}

export interface WorkItemInput {
  itemId: string;
  policy: WorkCompletionPolicy;
}

interface Mutation {
  expectedRevision: number;
  by: WorkCaller;
  now: number;
}

export type WorkItemEvent =
  | ({ type: 'item.claim'; leaseMs: number | null; unresolvedBlockers: number; gatesOpen: boolean } & Mutation)
  | ({ type: 'item.release' } & Mutation)
  | { type: 'lease.check'; now: number }
  | ({ type: 'item.block'; reason: string } & Mutation)
  | ({ type: 'item.unblock' } & Mutation)
  | ({ type: 'item.update' } & Mutation)
  | ({ type: 'item.close'; outcome: 'completed' | 'cancelled' | 'failed' } & Mutation)
  | ({ type: 'evidence.add'; evidence: WorkEvidenceRef } & Mutation);

export const WORK_ITEM_EVENT_TYPES: readonly WorkItemEvent['type'][] = [
  'item.claim',
  'item.release',
  'lease.check',
  'item.block',
  'item.unblock',
  'item.update',
  'item.close',
  'evidence.add',
];

type Args = { context: WorkItemContext; event: WorkItemEvent };

function sameKey(a: WorkOwnerKey | undefined, b: WorkOwnerKey | undefined): boolean {
  return a !== undefined && b !== undefined && a.kind === b.kind && a.id === b.id;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isStale = ({ context, event }: Args): boolean => 'expectedRevision' in event && event.expectedRevision !== context.revision;
const byOf = (event: WorkItemEvent): WorkCaller | undefined => ('by' in event ? event.by : undefined);
/** The caller may act on a claimed item: it is unclaimed, the caller holds the claim, or the caller is the host. */
const mayActOnClaim = ({ context, event }: Args): boolean => {
  const by = byOf(event);
  return context.claim === null || by?.host === true || sameKey(by?.owner.key, context.claim.owner.key);
};
const leaseDue = ({ context, event }: Args): boolean =>
  event.type === 'lease.check' && context.claim?.lease_expires_at_ms != null && event.now >= context.claim.lease_expires_at_ms;

/** The evidence as it will be stored: a non-host caller confirms only as itself. */
function normalizedEvidence(event: WorkItemEvent): WorkEvidenceRef | undefined {
  if (event.type !== 'evidence.add') return undefined;
  const ev = { ...event.evidence };
  if (ev.confirmation_kind !== undefined && (!event.by.host || ev.confirming_owner_key === undefined))
    ev.confirming_owner_key = event.by.owner.key;
  return ev;
}

const canonical = (ev: WorkEvidenceRef): string => JSON.stringify(ev, Object.keys(ev).sort());
const isEvidenceReplay = ({ context, event }: Args): boolean => {
  const ev = normalizedEvidence(event);
  const prior = ev && context.evidence.find((e) => e.id === ev.id);
  return prior !== undefined && canonical(prior) === canonical(ev!);
};
const isEvidenceConflict = ({ context, event }: Args): boolean => {
  const ev = normalizedEvidence(event);
  return ev !== undefined && context.evidence.some((e) => e.id === ev.id) && !isEvidenceReplay({ context, event });
};
/** Host and principal confirmations need host authority (or the principal itself); others confirm as themselves. */
const isForbiddenConfirmation = ({ event }: Args): boolean => {
  if (event.type !== 'evidence.add' || event.by.host) return false;
  const kind: ConfirmationKind | undefined = event.evidence.confirmation_kind;
  return kind === 'host' || (kind === 'principal' && event.by.owner.key.kind !== 'principal');
};

/** Why closing as `completed` is not allowed yet under the item's completion policy, or null. */
function policyProblem(ctx: Pick<WorkItemContext, 'policy' | 'evidence' | 'claim'>, by: WorkCaller): string | null {
  const confirmations = (kind: ConfirmationKind) => ctx.evidence.filter((e) => e.confirmation_kind === kind);
  const policy = ctx.policy;
  switch (policy.kind) {
    case 'self_attest':
      return null;
    case 'host_confirmed':
      return by.host || confirmations('host').length > 0 ? null : 'completion policy host_confirmed needs host confirmation evidence';
    case 'principal_confirmed': {
      const ok = confirmations('principal').some(
        (e) => policy.principal === undefined || sameKey(e.confirming_owner_key, policy.principal),
      );
      return ok ? null : 'completion policy principal_confirmed needs a confirmation from the named principal';
    }
    case 'supervisor': {
      const ok =
        sameKey(by.owner.key, policy.owner_key) ||
        confirmations('supervisor').some((e) => sameKey(e.confirming_owner_key, policy.owner_key));
      return ok ? null : `completion policy supervisor needs authorization by ${policy.owner_key.kind}:${policy.owner_key.id}`;
    }
    case 'reviewer_quorum': {
      const reviewers = new Set(
        confirmations('review')
          .filter((e) => e.confirming_owner_key !== undefined && !sameKey(e.confirming_owner_key, ctx.claim?.owner.key))
          .map((e) => `${e.confirming_owner_key!.kind}:${e.confirming_owner_key!.id}`),
      );
      return reviewers.size >= policy.threshold
        ? null
        : `completion policy reviewer_quorum needs ${policy.threshold} distinct reviewer confirmations (has ${reviewers.size})`;
    }
  }
}

const isPolicyUnsatisfied = ({ context, event }: Args): boolean =>
  event.type === 'item.close' && event.outcome === 'completed' && policyProblem(context, event.by) !== null;

const MESSAGES: Record<RejectReason, (a: Args) => string> = {
  stale_revision: ({ context, event }) =>
    `stale revision: expected ${'expectedRevision' in event ? event.expectedRevision : '?'}, current ${context.revision}`,
  terminal: ({ context }) => `item ${context.itemId} is terminal`,
  not_ready: ({ context }) => `item ${context.itemId} is not ready (blocked, gated or unresolved blockers)`,
  already_claimed: ({ context }) =>
    `item ${context.itemId} is already claimed by ${context.claim?.owner.key.kind}:${context.claim?.owner.key.id}`,
  not_claimed: ({ context }) => `item ${context.itemId} is not claimed`,
  not_claimant: ({ context }) => `item ${context.itemId} is claimed by ${context.claim?.owner.key.kind}:${context.claim?.owner.key.id}`,
  not_blocked: ({ context }) => `item ${context.itemId} is not blocked`,
  lease_not_expired: ({ context }) => `item ${context.itemId} has no expired lease`,
  policy_unsatisfied: ({ context, event }) => (event.type === 'item.close' ? (policyProblem(context, event.by) ?? '') : ''),
  evidence_conflict: ({ event }) =>
    `evidence ${event.type === 'evidence.add' ? event.evidence.id : ''} already exists with different content`,
  forbidden_confirmation: ({ event }) =>
    `a ${event.type === 'evidence.add' ? event.evidence.confirmation_kind : ''} confirmation needs host authority`,
};

const ok = (kind: Extract<WorkOutcome, { ok: true }>['kind'], facts: WorkFact[] = []): WorkOutcome => ({ ok: true, kind, facts });
const nowOf = (event: WorkItemEvent): number => event.now;

const reject = (reason: RejectReason) => ({ type: 'reject' as const, params: { reason } });

export const workItemMachine = setup({
  types: { context: {} as WorkItemContext, events: {} as WorkItemEvent, input: {} as WorkItemInput },
  guards: {
    isStale,
    isNotReady: ({ event }) => event.type === 'item.claim' && (event.unresolvedBlockers > 0 || !event.gatesOpen),
    isSameClaimant: ({ context, event }) => event.type === 'item.claim' && sameKey(context.claim?.owner.key, event.by.owner.key),
    mayActOnClaim,
    isClaimed: ({ context }) => context.claim !== null,
    leaseDue,
    isEvidenceReplay,
    isEvidenceConflict,
    isForbiddenConfirmation,
    isPolicyUnsatisfied,
    closesCompleted: ({ event }) => event.type === 'item.close' && event.outcome === 'completed',
    closesCancelled: ({ event }) => event.type === 'item.close' && event.outcome === 'cancelled',
  },
  actions: {
    reject: assign(({ context, event }, params: { reason: RejectReason }) => ({
      outcome: { ok: false as const, reason: params.reason, message: MESSAGES[params.reason]({ context, event }) },
    })),
    takeClaim: assign(({ context, event }) => {
      if (event.type !== 'item.claim') return {};
      const renew = sameKey(context.claim?.owner.key, event.by.owner.key);
      return {
        revision: context.revision + 1,
        claim: {
          owner: event.by.owner,
          claimed_at_ms: renew && context.claim ? context.claim.claimed_at_ms : event.now,
          lease_expires_at_ms: event.leaseMs === null ? null : event.now + event.leaseMs,
        },
        outcome: ok(renew ? 'renewed' : 'claimed'),
      };
    }),
    dropClaim: assign(({ context }) => ({ revision: context.revision + 1, claim: null, outcome: ok('released') })),
    expireLease: assign(({ context, event }) => {
      const claim = context.claim!;
      const fact: WorkFact = {
        kind: 'lease_expired',
        item_id: context.itemId,
        owner_key: claim.owner.key,
        lease_expires_at: iso(claim.lease_expires_at_ms!),
        observed_at: iso(nowOf(event)),
      };
      return { revision: context.revision + 1, claim: null, outcome: ok('lease_expired', [fact]) };
    }),
    markBlocked: assign(({ context, event }) => ({
      revision: context.revision + 1,
      blockedReason: event.type === 'item.block' ? event.reason : null,
      outcome: ok('blocked'),
    })),
    clearBlocked: assign(({ context }) => ({ revision: context.revision + 1, blockedReason: null, outcome: ok('unblocked') })),
    bumpRevision: assign(({ context }) => ({ revision: context.revision + 1, outcome: ok('updated') })),
    // The claim stays on record (who closed it) but its lease ends: a terminal item has nothing to expire.
    closeItem: assign(({ context, event }) => ({
      revision: context.revision + 1,
      terminalAtMs: nowOf(event),
      blockedReason: null,
      claim: context.claim ? { ...context.claim, lease_expires_at_ms: null } : null,
      outcome: ok('closed'),
    })),
    addEvidence: assign(({ context, event }) => ({
      revision: context.revision + 1,
      evidence: [...context.evidence, normalizedEvidence(event)!],
      outcome: ok('evidence_added'),
    })),
    replayEvidence: assign({ outcome: () => ok('evidence_replayed') }),
  },
}).createMachine({
  id: 'work-item',
  version: '1',
  initial: 'open',
  context: ({ input }) => ({
    itemId: input.itemId,
    revision: 1,
    policy: input.policy,
    claim: null,
    evidence: [],
    blockedReason: null,
    terminalAtMs: null,
    outcome: null,
  }),
  on: {
    // The same in every non-terminal state: evidence may be added by anyone (reviewers), confirmations are checked.
    'evidence.add': [
      { guard: 'isEvidenceReplay', actions: 'replayEvidence' },
      { guard: 'isStale', actions: reject('stale_revision') },
      { guard: 'isEvidenceConflict', actions: reject('evidence_conflict') },
      { guard: 'isForbiddenConfirmation', actions: reject('forbidden_confirmation') },
      { actions: 'addEvidence' },
    ],
  },
  states: {
    open: {
      on: {
        'item.claim': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'isNotReady', actions: reject('not_ready') },
          { target: 'in_progress', actions: 'takeClaim' },
        ],
        'item.release': { actions: reject('not_claimed') },
        'lease.check': { actions: reject('lease_not_expired') },
        'item.block': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { target: 'blocked', actions: 'markBlocked' },
        ],
        'item.unblock': { actions: reject('not_blocked') },
        'item.update': [{ guard: 'isStale', actions: reject('stale_revision') }, { actions: 'bumpRevision' }],
        'item.close': closeTransitions(),
      },
    },
    in_progress: {
      on: {
        'item.claim': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'isSameClaimant', actions: 'takeClaim' },
          { actions: reject('already_claimed') },
        ],
        'item.release': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', target: 'open', actions: 'dropClaim' },
          { actions: reject('not_claimant') },
        ],
        'lease.check': [{ guard: 'leaseDue', target: 'open', actions: 'expireLease' }, { actions: reject('lease_not_expired') }],
        'item.block': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', target: 'blocked', actions: 'markBlocked' },
          { actions: reject('not_claimant') },
        ],
        'item.unblock': { actions: reject('not_blocked') },
        'item.update': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', actions: 'bumpRevision' },
          { actions: reject('not_claimant') },
        ],
        'item.close': closeTransitions(),
      },
    },
    blocked: {
      on: {
        'item.claim': [{ guard: 'isStale', actions: reject('stale_revision') }, { actions: reject('not_ready') }],
        'item.release': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: not('isClaimed'), actions: reject('not_claimed') },
          { guard: 'mayActOnClaim', actions: 'dropClaim' },
          { actions: reject('not_claimant') },
        ],
        'lease.check': [{ guard: 'leaseDue', actions: 'expireLease' }, { actions: reject('lease_not_expired') }],
        'item.block': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', actions: 'markBlocked' },
          { actions: reject('not_claimant') },
        ],
        'item.unblock': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', target: 'routeUnblock' },
          { actions: reject('not_claimant') },
        ],
        'item.update': [
          { guard: 'isStale', actions: reject('stale_revision') },
          { guard: 'mayActOnClaim', actions: 'bumpRevision' },
          { actions: reject('not_claimant') },
        ],
        'item.close': closeTransitions(),
      },
    },
    /** Transient: an unblocked item goes back to in_progress when still claimed, else to open. */
    routeUnblock: {
      always: [
        { guard: 'isClaimed', target: 'in_progress', actions: 'clearBlocked' },
        { target: 'open', actions: 'clearBlocked' },
      ],
    },
    completed: { on: terminalRejects() },
    cancelled: { on: terminalRejects() },
    failed: { on: terminalRejects() },
  },
});

function closeTransitions() {
  return [
    { guard: 'isStale' as const, actions: reject('stale_revision') },
    { guard: not('mayActOnClaim'), actions: reject('not_claimant') },
    { guard: 'isPolicyUnsatisfied' as const, actions: reject('policy_unsatisfied') },
    { guard: 'closesCompleted' as const, target: 'completed', actions: 'closeItem' as const },
    { guard: 'closesCancelled' as const, target: 'cancelled', actions: 'closeItem' as const },
    { target: 'failed', actions: 'closeItem' as const },
  ];
}

function terminalRejects() {
  return {
    'item.claim': { actions: reject('terminal') },
    'item.release': { actions: reject('terminal') },
    'lease.check': { actions: reject('lease_not_expired') },
    'item.block': { actions: reject('terminal') },
    'item.unblock': { actions: reject('terminal') },
    'item.update': { actions: reject('terminal') },
    'item.close': { actions: reject('terminal') },
    'evidence.add': [{ guard: 'isEvidenceReplay' as const, actions: 'replayEvidence' as const }, { actions: reject('terminal') }],
  };
}

/** The WorkStatus of a machine snapshot value. */
function statusOf(value: unknown): WorkStatus {
  return value as WorkStatus;
}
