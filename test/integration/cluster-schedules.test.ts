// test/integration/cluster-schedules.test.ts: schedules on a cluster of two nodes (in-process apps, one
// embedded PostgreSQL realm, one shared ManualClock). Both nodes arm every schedule; when they come due
// together, each occurrence is claimed by one node and fires exactly once: one completed occurrence per
// schedule and one materialized session holding one user row; an occurrence whose target session another
// node hosts is left to that node; a schedule written through one node reads as written on the other, and a
// compare-and-set update made through a node that saw an older revision is refused. Skips, saying why, where
// PostgreSQL cannot start.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../actors/clock.ts';
import { call, startClusterNode } from '../helpers/app.ts';
import { driveClock } from '../helpers/schedule-clock.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { missingPart } from '../helpers/absent.ts';

const pgServer = await testPostgres();
const T0 = Date.parse('2026-03-01T00:00:00Z');
const SCHEDULES = 12;

if (!pgServer.ok) {
  describe('cluster schedules', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('schedules on a two-node cluster', () => {
    it('fire each occurrence once across the nodes', async (t) => {
      const url = await server.createDatabase();
      const clock = new ManualClock(T0);
      const opts = { clock, cluster: { lease_ms: 2000 } };
      const a = await startClusterNode(t, url, opts);
      const due = T0 + 60_000;
      const ids: string[] = [];
      for (let i = 0; i < SCHEDULES; i++) {
        const res = await call(a.url, 'POST', '/schedules', {
          name: `s${i}`,
          trigger: { type: 'once', due_at_utc: new Date(due).toISOString() },
          target: {
            target_kind: 'session',
            type: 'materialize_on_demand_session',
            create: { provider: 'scripted' },
            action: { type: 'prompt', prompt: `tick-${i}` },
          },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        ids.push(res.body.schedule_id);
      }
      // B starts after the schedules exist: it arms all of them too.
      const b = await startClusterNode(t, url, opts);
      await driveClock(
        clock,
        async () => {
          await Promise.all([a.schedulesSettled(), b.schedulesSettled()]);
        },
        due + 1_000,
      );
      const sessions = new Set<string>();
      for (const [i, id] of ids.entries()) {
        const occs = (await call(b.url, 'GET', `/schedules/${id}/occurrences`)).body.occurrences;
        assert.equal(occs.length, 1, `schedule ${i}: ${JSON.stringify(occs)}`);
        assert.equal(occs[0].phase, 'completed', JSON.stringify(occs[0]));
        const sid = occs[0].runtime_outcome.session_id;
        sessions.add(sid);
        const h = (await call(a.url, 'GET', `/sessions/${sid}/history`)).body;
        assert.deepEqual(
          h.messages.filter((m: { role: string }) => m.role === 'user').map((m: { content: string }) => m.content),
          [`tick-${i}`],
        );
      }
      assert.equal(sessions.size, SCHEDULES);
      assert.equal((await call(a.url, 'GET', '/sessions?limit=1000')).body.sessions.length, SCHEDULES);
      assert.equal(a.provider.requests.length + b.provider.requests.length, SCHEDULES, 'one model call per occurrence across both nodes');
      t.diagnostic(`fired on A: ${a.provider.requests.length}, on B: ${b.provider.requests.length}`);
    });

    it('leave an occurrence whose session another node hosts to that node', async (t) => {
      const url = await server.createDatabase();
      const clock = new ManualClock(T0);
      const opts = { clock, cluster: { lease_ms: 60_000 } };
      const a = await startClusterNode(t, url, opts);
      const due = T0 + 60_000;
      const created = await call(a.url, 'POST', '/sessions', { prompt: 'hello', provider: 'scripted' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const sid = created.body.session_id;
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await call(a.url, 'POST', '/schedules', {
          name: `x${i}`,
          trigger: { type: 'once', due_at_utc: new Date(due + i * 1000).toISOString() },
          target: { target_kind: 'session', type: 'exact_session', session_id: sid, action: { type: 'prompt', prompt: `tick-${i}` } },
        });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        ids.push(res.body.schedule_id);
      }
      const b = await startClusterNode(t, url, opts);
      await driveClock(
        clock,
        async () => {
          await Promise.all([a.schedulesSettled(), b.schedulesSettled()]);
        },
        due + 10_000,
      );
      for (const id of ids) {
        const occs = (await call(b.url, 'GET', `/schedules/${id}/occurrences`)).body.occurrences;
        assert.equal(occs.length, 1);
        assert.equal(occs[0].phase, 'completed', JSON.stringify(occs[0]));
      }
      const users = (await call(b.url, 'GET', `/sessions/${sid}/history`)).body.messages
        .filter((m: { role: string }) => m.role === 'user')
        .map((m: { content: string }) => m.content);
      assert.deepEqual(users, ['hello', 'tick-0', 'tick-1', 'tick-2', 'tick-3']);
      assert.equal(b.provider.requests.length, 0, 'B never runs a turn of a session A hosts');
    });

    it('read a schedule as last written by any node, and refuse an update made on an older revision', async (t) => {
      const url = await server.createDatabase();
      const clock = new ManualClock(T0);
      const opts = { clock, cluster: { lease_ms: 2000 } };
      const a = await startClusterNode(t, url, opts);
      const b = await startClusterNode(t, url, opts);
      const created = await call(a.url, 'POST', '/schedules', {
        name: 'shared',
        trigger: { type: 'once', due_at_utc: new Date(T0 + 3_600_000).toISOString() },
        target: {
          target_kind: 'session',
          type: 'materialize_on_demand_session',
          create: { provider: 'scripted' },
          action: { type: 'prompt', prompt: 'later' },
        },
      });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.schedule_id;
      const seen = (await call(b.url, 'GET', `/schedules/${id}`)).body;
      assert.equal(seen.revision, created.body.revision);
      // A pauses it; B (which hosts the schedule since its read) answers with the paused schedule.
      const paused = await call(a.url, 'POST', `/schedules/${id}/pause`);
      assert.equal(paused.status, 200, JSON.stringify(paused.body));
      const onB = (await call(b.url, 'GET', `/schedules/${id}`)).body;
      assert.equal(onB.revision, paused.body.revision);
      assert.deepEqual(onB.machine_state, paused.body.machine_state);
      // An update naming the revision B saw first is refused; naming the current one, it lands (on B).
      const stale = await call(b.url, 'PATCH', `/schedules/${id}`, { expected_revision: seen.revision, name: 'renamed' });
      assert.equal(stale.status, 409, JSON.stringify(stale.body));
      const fresh = await call(b.url, 'PATCH', `/schedules/${id}`, { expected_revision: paused.body.revision, name: 'renamed' });
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      assert.equal((await call(a.url, 'GET', `/schedules/${id}`)).body.name, 'renamed');
    });
  });
}
