import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { initialTransition, transition } from 'xstate';
import type { WorkCompletionPolicy, WorkEvidenceRef } from '../../contracts/workgraph.ts';
import { WORK_ITEM_EVENT_TYPES, workItemMachine, type WorkCaller, type WorkItemEvent } from '../../machines/work-item-machine.ts';

type Snap = ReturnType<typeof initialTransition<typeof workItemMachine>>[0];

const T0 = Date.parse('2030-01-01T00:00:00Z');
const agent = (id: string): WorkCaller => ({ owner: { key: { kind: 'session', id } }, host: false });
const host: WorkCaller = { owner: { key: { kind: 'principal', id: 'host' } }, host: true };
const A = agent('a');
const B = agent('b');

function start(policy: WorkCompletionPolicy = { kind: 'self_attest' }): Snap {
  return initialTransition(workItemMachine, { itemId: 'work_1', policy })[0];
}
function send(s: Snap, e: WorkItemEvent): Snap {
  return transition(workItemMachine, s, e)[0];
}
const rev = (s: Snap) => s.context.revision;
const claim = (s: Snap, by = A, extra: Partial<Extract<WorkItemEvent, { type: 'item.claim' }>> = {}): WorkItemEvent => ({
  type: 'item.claim',
  expectedRevision: rev(s),
  by,
  now: T0,
  leaseMs: null,
  unresolvedBlockers: 0,
  gatesOpen: true,
  ...extra,
});
const close = (s: Snap, outcome: 'completed' | 'cancelled' | 'failed', by = A): WorkItemEvent => ({
  type: 'item.close',
  expectedRevision: rev(s),
  by,
  now: T0 + 5,
  outcome,
});
const evidence = (s: Snap, ev: WorkEvidenceRef, by = A): WorkItemEvent => ({
  type: 'evidence.add',
  expectedRevision: rev(s),
  by,
  now: T0,
  evidence: ev,
});

function sample(type: WorkItemEvent['type'], s: Snap): WorkItemEvent {
  const m = { expectedRevision: rev(s), by: A, now: T0 };
  switch (type) {
    case 'item.claim':
      return claim(s);
    case 'lease.check':
      return { type, now: T0 };
    case 'item.block':
      return { type, reason: 'r', ...m };
    case 'item.close':
      return { type, outcome: 'cancelled', ...m };
    case 'evidence.add':
      return { type, evidence: { id: 'e', kind: 'log' }, ...m };
    default:
      return { type, ...m } as WorkItemEvent;
  }
}

function reach(): Record<string, Snap> {
  const open = start();
  const inProgress = send(open, claim(open));
  const blocked = send(open, { type: 'item.block', reason: 'waiting', expectedRevision: 1, by: A, now: T0 });
  return {
    open,
    in_progress: inProgress,
    blocked,
    completed: send(open, close(open, 'completed')),
    cancelled: send(open, close(open, 'cancelled')),
    failed: send(open, close(open, 'failed')),
  };
}

describe('work item machine', () => {
  it('handles every event in every state explicitly, with an outcome', () => {
    for (const [name, snap] of Object.entries(reach())) {
      assert.equal(snap.value, name);
      for (const type of WORK_ITEM_EVENT_TYPES) {
        const e = sample(type, snap);
        assert.equal(snap.can(e), true, `state ${name} does not handle ${type}`);
        assert.notEqual(send(snap, e).context.outcome, null, `${name} × ${type} leaves no outcome`);
      }
    }
  });

  it('claims an open ready item, bumps the revision and rejects a stale revision', () => {
    const s = start();
    const stale = send(s, { ...claim(s), expectedRevision: 7 } as WorkItemEvent);
    assert.deepEqual(stale.context.outcome, { ok: false, reason: 'stale_revision', message: 'stale revision: expected 7, current 1' });
    assert.equal(stale.value, 'open');
    const claimed = send(s, claim(s, A, { leaseMs: 1000 }));
    assert.equal(claimed.value, 'in_progress');
    assert.equal(rev(claimed), 2);
    assert.deepEqual(claimed.context.claim, { owner: A.owner, claimed_at_ms: T0, lease_expires_at_ms: T0 + 1000 });
  });

  const table: Array<[string, (s: Snap) => Snap, string]> = [
    ['unresolved blockers', (s) => send(s, claim(s, A, { unresolvedBlockers: 1 })), 'not_ready'],
    ['closed gates', (s) => send(s, claim(s, A, { gatesOpen: false })), 'not_ready'],
    [
      'someone else holds the claim',
      (s) => {
        const c = send(s, claim(s));
        return send(c, claim(c, B));
      },
      'already_claimed',
    ],
    [
      'a blocked item',
      (s) => {
        const b = send(s, { type: 'item.block', reason: 'x', expectedRevision: 1, by: A, now: T0 });
        return send(b, claim(b));
      },
      'not_ready',
    ],
    [
      'a terminal item',
      (s) => {
        const c = send(s, close(s, 'completed'));
        return send(c, claim(c));
      },
      'terminal',
    ],
  ];
  for (const [what, run, reason] of table) {
    it(`refuses a claim on ${what} (${reason})`, () => {
      const out = run(start()).context.outcome;
      assert.equal(out?.ok, false);
      assert.equal(out?.ok === false && out.reason, reason);
    });
  }

  it('lets the claimant renew its lease and release; others cannot release', () => {
    let s = send(start(), claim(start(), A, { leaseMs: 100 }));
    s = send(s, claim(s, A, { leaseMs: 500, now: T0 + 50 }));
    assert.equal(s.context.outcome?.ok && s.context.outcome.kind, 'renewed');
    assert.equal(s.context.claim?.lease_expires_at_ms, T0 + 550);
    assert.equal(s.context.claim?.claimed_at_ms, T0);
    const other = send(s, { type: 'item.release', expectedRevision: rev(s), by: B, now: T0 });
    assert.equal(other.context.outcome?.ok === false && other.context.outcome.reason, 'not_claimant');
    const released = send(s, { type: 'item.release', expectedRevision: rev(s), by: A, now: T0 });
    assert.equal(released.value, 'open');
    assert.equal(released.context.claim, null);
  });

  it('expires a due lease through lease.check with a lease_expired fact, never before', () => {
    const s = send(start(), claim(start(), A, { leaseMs: 100 }));
    const early = send(s, { type: 'lease.check', now: T0 + 99 });
    assert.equal(early.value, 'in_progress');
    assert.equal(early.context.outcome?.ok === false && early.context.outcome.reason, 'lease_not_expired');
    const due = send(s, { type: 'lease.check', now: T0 + 100 });
    assert.equal(due.value, 'open');
    assert.equal(due.context.claim, null);
    assert.equal(rev(due), rev(s) + 1);
    assert.deepEqual(due.context.outcome, {
      ok: true,
      kind: 'lease_expired',
      facts: [
        {
          kind: 'lease_expired',
          item_id: 'work_1',
          owner_key: A.owner.key,
          lease_expires_at: '2030-01-01T00:00:00.100Z',
          observed_at: '2030-01-01T00:00:00.100Z',
        },
      ],
    });
    // A claim without a lease never expires.
    const forever = send(start(), claim(start()));
    assert.equal(send(forever, { type: 'lease.check', now: T0 + 1e9 }).value, 'in_progress');
  });

  it('expires a lease on a blocked item too, which stays blocked', () => {
    let s = send(start(), claim(start(), A, { leaseMs: 10 }));
    s = send(s, { type: 'item.block', reason: 'dep', expectedRevision: rev(s), by: A, now: T0 });
    const due = send(s, { type: 'lease.check', now: T0 + 10 });
    assert.equal(due.value, 'blocked');
    assert.equal(due.context.claim, null);
    const unblocked = send(due, { type: 'item.unblock', expectedRevision: rev(due), by: B, now: T0 });
    assert.equal(unblocked.value, 'open');
  });

  it('unblocks back to in_progress while the claim holds', () => {
    let s = send(start(), claim(start()));
    s = send(s, { type: 'item.block', reason: 'dep', expectedRevision: rev(s), by: A, now: T0 });
    assert.equal(s.context.blockedReason, 'dep');
    s = send(s, { type: 'item.unblock', expectedRevision: rev(s), by: A, now: T0 });
    assert.equal(s.value, 'in_progress');
    assert.equal(s.context.blockedReason, null);
  });

  it('closes only by the claimant (or the host), and keeps terminal items terminal', () => {
    const s = send(start(), claim(start(), A, { leaseMs: 100 }));
    const byB = send(s, close(s, 'completed', B));
    assert.equal(byB.context.outcome?.ok === false && byB.context.outcome.reason, 'not_claimant');
    const done = send(s, close(s, 'completed', A));
    assert.equal(done.value, 'completed');
    assert.equal(done.context.terminalAtMs, T0 + 5);
    assert.equal(done.context.claim?.lease_expires_at_ms, null);
    assert.equal(send(s, close(s, 'cancelled', host)).value, 'cancelled');
    for (const type of WORK_ITEM_EVENT_TYPES) {
      const next = send(done, sample(type, done));
      assert.equal(next.value, 'completed');
      assert.equal(next.context.outcome?.ok, false);
    }
  });

  it('gates completion by host_confirmed', () => {
    const s = start({ kind: 'host_confirmed' });
    const refused = send(s, close(s, 'completed'));
    assert.equal(refused.context.outcome?.ok === false && refused.context.outcome.reason, 'policy_unsatisfied');
    assert.equal(send(s, close(s, 'cancelled')).value, 'cancelled', 'cancellation is not gated');
    const forged = send(s, evidence(s, { id: 'c', kind: 'summary', confirmation_kind: 'host' }));
    assert.equal(forged.context.outcome?.ok === false && forged.context.outcome.reason, 'forbidden_confirmation');
    const confirmed = send(s, evidence(s, { id: 'c', kind: 'summary', confirmation_kind: 'host' }, host));
    assert.equal(send(confirmed, close(confirmed, 'completed')).value, 'completed');
    assert.equal(send(s, close(s, 'completed', host)).value, 'completed');
  });

  it('gates completion by principal_confirmed with the named principal', () => {
    const boss = { kind: 'principal' as const, id: 'boss' };
    const s = start({ kind: 'principal_confirmed', principal: boss });
    assert.equal(send(s, close(s, 'completed', host)).context.outcome?.ok, false, 'the host is not the principal');
    const wrong = send(
      s,
      evidence(
        s,
        { id: 'p1', kind: 'summary', confirmation_kind: 'principal', confirming_owner_key: { kind: 'principal', id: 'other' } },
        host,
      ),
    );
    assert.equal(send(wrong, close(wrong, 'completed')).context.outcome?.ok, false);
    const right = send(s, evidence(s, { id: 'p1', kind: 'summary', confirmation_kind: 'principal', confirming_owner_key: boss }, host));
    assert.equal(send(right, close(right, 'completed')).value, 'completed');
    // A principal may confirm as itself; an agent may not.
    const self = send(s, evidence(s, { id: 'p2', kind: 'summary', confirmation_kind: 'principal' }, { owner: { key: boss }, host: false }));
    assert.equal(send(self, close(self, 'completed')).value, 'completed');
    const agentTry = send(s, evidence(s, { id: 'p3', kind: 'summary', confirmation_kind: 'principal' }));
    assert.equal(agentTry.context.outcome?.ok === false && agentTry.context.outcome.reason, 'forbidden_confirmation');
  });

  it('gates completion by supervisor: the supervisor closes or authorizes', () => {
    const sup = agent('sup');
    const s = start({ kind: 'supervisor', owner_key: sup.owner.key });
    assert.equal(send(s, close(s, 'completed')).context.outcome?.ok, false);
    assert.equal(send(s, close(s, 'completed', sup)).value, 'completed');
    // An agent cannot confirm in the supervisor's name: its confirmation is recorded as its own.
    const fake = send(s, evidence(s, { id: 's1', kind: 'summary', confirmation_kind: 'supervisor', confirming_owner_key: sup.owner.key }));
    assert.deepEqual(fake.context.evidence[0].confirming_owner_key, A.owner.key);
    assert.equal(send(fake, close(fake, 'completed')).context.outcome?.ok, false);
    const auth = send(s, evidence(s, { id: 's1', kind: 'summary', confirmation_kind: 'supervisor' }, sup));
    assert.equal(send(auth, close(auth, 'completed')).value, 'completed');
  });

  it('gates completion by reviewer_quorum: distinct reviewers other than the claimant', () => {
    let s = start({ kind: 'reviewer_quorum', threshold: 2 });
    s = send(s, claim(s));
    s = send(s, evidence(s, { id: 'r-self', kind: 'review', confirmation_kind: 'review' }, A));
    s = send(s, evidence(s, { id: 'r1', kind: 'review', confirmation_kind: 'review' }, B));
    s = send(s, evidence(s, { id: 'r2', kind: 'review', confirmation_kind: 'review' }, B));
    const refused = send(s, close(s, 'completed'));
    assert.equal(
      refused.context.outcome?.ok === false && refused.context.outcome.message,
      'completion policy reviewer_quorum needs 2 distinct reviewer confirmations (has 1)',
    );
    s = send(s, evidence(s, { id: 'r3', kind: 'review', confirmation_kind: 'review' }, agent('c')));
    assert.equal(send(s, close(s, 'completed')).value, 'completed');
  });

  it('replays identical evidence as a no-op and fails closed on different content under the same id', () => {
    let s = start();
    s = send(s, evidence(s, { id: 'e1', kind: 'pr', label: 'PR 1' }));
    const r = rev(s);
    const replay = send(s, { ...evidence(s, { id: 'e1', kind: 'pr', label: 'PR 1' }), expectedRevision: 1 } as WorkItemEvent);
    assert.equal(replay.context.outcome?.ok && replay.context.outcome.kind, 'evidence_replayed');
    assert.equal(rev(replay), r);
    const conflict = send(s, evidence(s, { id: 'e1', kind: 'pr', label: 'PR 2' }));
    assert.equal(conflict.context.outcome?.ok === false && conflict.context.outcome.reason, 'evidence_conflict');
    const done = send(s, close(s, 'completed'));
    assert.equal(send(done, evidence(done, { id: 'e1', kind: 'pr', label: 'PR 1' })).context.outcome?.ok, true);
  });

  it('lets only the claimant (or host) update a claimed item', () => {
    const s = send(start(), claim(start()));
    const byB = send(s, { type: 'item.update', expectedRevision: rev(s), by: B, now: T0 });
    assert.equal(byB.context.outcome?.ok === false && byB.context.outcome.reason, 'not_claimant');
    assert.equal(rev(send(s, { type: 'item.update', expectedRevision: rev(s), by: A, now: T0 })), rev(s) + 1);
    assert.equal(rev(send(s, { type: 'item.update', expectedRevision: rev(s), by: host, now: T0 })), rev(s) + 1);
  });

  it('keeps its persisted snapshot JSON-safe and restorable', () => {
    const s = send(start({ kind: 'reviewer_quorum', threshold: 1 }), claim(start(), A, { leaseMs: 5 }));
    const persisted = JSON.parse(JSON.stringify(s));
    const restored = workItemMachine.resolveState(persisted);
    assert.equal(restored.value, 'in_progress');
    assert.equal(send(restored, { type: 'lease.check', now: T0 + 5 }).value, 'open');
  });
});
