// Scale: 1,000 sessions created and each continued once through the real server at a bounded
// concurrency (50 in flight), on the default lmdb backend. Every reply must be 200 and the list must
// hold all 1,000. The elapsed time is reported as a diagnostic.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const SESSIONS = 1_000;
const IN_FLIGHT = 50;

/** Runs `work(i)` for i in [0, n) with at most `limit` running at once. */
async function pool(n: number, limit: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await work(next++);
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

describe('sessions at scale', () => {
  it(`creates and continues ${SESSIONS} sessions with ${IN_FLIGHT} in flight`, { timeout: SLOW_TEST_MS }, async (t) => {
    const app = await startApp(t);
    const started = performance.now();
    const failures: string[] = [];
    const ids: string[] = new Array(SESSIONS);
    await pool(SESSIONS, IN_FLIGHT, async (i) => {
      const created = await call(app.url, 'POST', '/sessions', { prompt: `hello ${i}` });
      if (created.status !== 200) {
        failures.push(`create ${i}: ${created.status} ${JSON.stringify(created.body)}`);
        return;
      }
      const id: string = created.body.session_id;
      ids[i] = id;
      const cont = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `again ${i}` });
      if (cont.status !== 200 || cont.body.text !== `echo: again ${i}`)
        failures.push(`continue ${i}: ${cont.status} ${JSON.stringify(cont.body)}`);
    });
    const turnsMs = performance.now() - started;
    assert.deepEqual(failures.slice(0, 5), []);

    const list = await call(app.url, 'GET', '/sessions');
    assert.equal(list.status, 200);
    assert.equal(list.body.sessions.length, SESSIONS);
    assert.equal(new Set(list.body.sessions.map((r: { session_id: string }) => r.session_id)).size, SESSIONS);
    assert.ok(list.body.sessions.every((r: { message_count: number; is_active: boolean }) => r.message_count === 4 && !r.is_active));
    const sample = ids[SESSIONS - 1];
    assert.equal((await call(app.url, 'GET', `/sessions/${sample}/history`)).body.message_count, 4);
    const totalMs = performance.now() - started;
    t.diagnostic(
      `${SESSIONS * 2} turns in ${turnsMs.toFixed(0)} ms (${((SESSIONS * 2) / (turnsMs / 1000)).toFixed(0)} turns/s); with list ${totalMs.toFixed(0)} ms`,
    );
  });
});
