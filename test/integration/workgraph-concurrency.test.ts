// Fifty agents (fifty concurrent sessions, each looping workgraph_ready -> workgraph_claim through the
// scripted model) claim from one ready queue with leases. Checked from the durable event log: every agent
// got exactly one claim, no item was ever held by two claims at once, and every lease expiry was observed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { agentOk, workGraphDriver } from '../helpers/workgraph-driver.ts';
import { poll } from '../helpers/wait.ts';

const AGENTS = 50;
const ITEMS = 60;
const LEASE_MS = 400;

describe('workgraph concurrency', () => {
  it('50 agents claim from one ready queue: no double claim, every lease expiry observed', async (t) => {
    const app = await startApp(t, workGraphDriver);
    const seeder = (await agentOk(app.url, 'workgraph_list', { namespace: 'race' })).sessionId;
    for (let i = 0; i < ITEMS; i++) await agentOk(app.url, 'workgraph_create', { namespace: 'race', title: `job ${i}` }, seeder);

    const replies = await Promise.all(
      Array.from({ length: AGENTS }, (_, agent) =>
        call(app.url, 'POST', '/sessions', {
          prompt: JSON.stringify({ agent, claim_one: { namespace: 'race', lease_ms: LEASE_MS, spread: 5 } }),
          enable_workgraph: true,
        }),
      ),
    );
    for (const r of replies) assert.equal(r.status, 200, JSON.stringify(r.body));
    const claimedBy = new Map<string, string>();
    for (const r of replies) {
      const m = /^claimed (work_\S+)$/.exec(r.body.text);
      assert.ok(m, `agent gave up: ${r.body.text}`);
      claimedBy.set(r.body.session_id, m[1]!);
    }
    assert.equal(claimedBy.size, AGENTS);
    // Ten agents raced for each of the first five ready items: many claims were refused (and retried).
    const refused = new Set(
      app.provider.requests
        .flatMap((r) => r.messages)
        .flatMap((m) => (m.role === 'tool_results' ? m.results : []))
        .filter((x) => x.is_error)
        .map((x) => x.tool_use_id + JSON.stringify(x.content)),
    );
    assert.ok(refused.size > 0, 'no claim was ever refused: the agents did not race');

    // Wait (gated on the log, not on time) until every claim's lease expiry has been observed.
    // Every lease ran out LEASE_MS after its claim; the deadline leaves a loaded machine ample room past that.
    let events: any[] = [];
    let counts = '';
    await poll(
      `${AGENTS} claims and ${AGENTS} lease expiries in the log`,
      async () => {
        events = (await call(app.url, 'GET', '/workgraph/events?namespace=race&limit=10000')).body.events;
        const claims = events.filter((e) => e.kind === 'claimed').length;
        const expiries = events.filter((e) => e.facts?.some((f: any) => f.kind === 'lease_expired')).length;
        counts = `${claims} claims, ${expiries} expiries`;
        return claims === AGENTS && expiries === AGENTS;
      },
      { timeoutMs: 20_000, intervalMs: 20, detail: () => counts },
    );

    // Replay the log: a claim only ever lands on an item nobody holds.
    const holder = new Map<string, string>();
    const seqs = events.map((e) => e.seq);
    assert.deepEqual(
      seqs,
      [...seqs].sort((a, b) => a - b),
    );
    assert.equal(new Set(seqs).size, seqs.length, 'seq is unique');
    const claimsPerSession = new Map<string, number>();
    for (const e of events) {
      if (e.kind === 'claimed') {
        assert.ok(!holder.has(e.item_id), `item ${e.item_id} claimed twice (held by ${holder.get(e.item_id)})`);
        holder.set(e.item_id, e.payload.owner.key.id);
        claimsPerSession.set(e.payload.owner.key.id, (claimsPerSession.get(e.payload.owner.key.id) ?? 0) + 1);
      }
      if (e.kind === 'released') {
        const fact = e.facts.find((f: any) => f.kind === 'lease_expired');
        assert.ok(fact, 'only lease expiries release in this run');
        assert.equal(fact.owner_key.id, holder.get(e.item_id));
        holder.delete(e.item_id);
      }
    }
    assert.equal(holder.size, 0, 'every claim ended by an observed lease expiry');
    assert.equal(claimsPerSession.size, AGENTS);
    for (const [session, n] of claimsPerSession) assert.equal(n, 1, `session ${session} claimed ${n} times`);
    for (const [session, item] of claimedBy) {
      assert.ok(events.some((e) => e.kind === 'claimed' && e.item_id === item && e.payload.owner.key.id === session));
    }
    const items = (await call(app.url, 'GET', '/workgraph/items?namespace=race')).body.items;
    assert.equal(items.length, ITEMS);
    assert.ok(items.every((i: any) => i.status === 'open' && i.claim === undefined));
  });
});
