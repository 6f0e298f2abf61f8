// test/integration/mob-kill.test.ts: a mob across kill -9 of a real server process (lmdb, scripted
// provider from the realm config). The structural ledger, the mob and member records and the flow run
// survive; a flow run whose step turn was in flight resumes from that step after the restart; a toolkit
// stream and a mob SSE resumed with Last-Event-ID get exactly the events after their cursor (no gap, no
// duplicate), including those written after the restart.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { rpcOk } from '../helpers/mob-driver.ts';
import { call } from '../helpers/app.ts';
import { SseClient } from '../helpers/sse-client.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REALM = 'mob-kill';
/** Hang guard only (a restart plus two member turns can take long on a loaded 2-core CI machine). */
const GUARD_MS = 60_000;
const DEF = {
  members: [
    { agent_identity: 'a', provider: 'scripted' },
    { agent_identity: 'b', provider: 'scripted' },
  ],
  flows: [
    {
      flow_id: 'f',
      steps: [
        { step_id: 's1', member: 'a', prompt: 'first {{input}}' },
        { step_id: 's2', member: 'b', prompt: 'second {{input}}' },
      ],
    },
  ],
};

function cursorsOf(c: SseClient): number[] {
  return c.frames.filter((f) => f.id !== undefined).map((f) => Number(f.id));
}

describe('mobs across kill -9', () => {
  it('resumes the event streams from a cursor with no gap and resumes the interrupted flow run', async (t) => {
    const dir = await tmpDir('warren-mob-kill-');
    t.after(() => dir.cleanup());
    // Two quick kickoffs, then a step turn that never finishes before the kill.
    await writeRealmConfig(dir.path, REALM, {
      providers: { scripted: { replies: [{ text: 'k1' }, { text: 'k2' }, { text: 'never', delay_ms: 600_000 }] } },
    });
    const first = await startServerProcess({ stateRoot: dir.path, realm: REALM, t });
    const tail = await SseClient.open(first.url, '/toolkit/mob_events/stream?mob_id=k');
    await rpcOk(first.url, 'mob/create', { mob_id: 'k', definition: DEF });
    const kicked = await call(first.url, 'POST', '/mob/k/wait-kickoff');
    assert.deepEqual(
      kicked.body.members.map((m: { kickoff: string }) => m.kickoff),
      ['completed', 'completed'],
    );
    await rpcOk(first.url, 'mob/start_flow', { mob_id: 'k', flow_id: 'f', run_id: 'r1', activation: { input: 'x' } });
    await tail.until((c) => c.frames.some((f) => f.event === 'step_dispatched'), 'step dispatched', GUARD_MS);
    const seen = cursorsOf(tail);
    const lastSeen = seen.at(-1)!;
    assert.deepEqual(
      seen,
      Array.from({ length: seen.length }, (_, i) => i + 1),
      'contiguous from 1',
    );
    await first.kill('SIGKILL');
    tail.close();

    await writeRealmConfig(dir.path, REALM, { providers: { scripted: { mode: 'echo' } } });
    const second = await startServerProcess({ stateRoot: dir.path, realm: REALM, t });
    const resumed = await SseClient.open(second.url, '/toolkit/mob_events/stream?mob_id=k', { 'Last-Event-ID': String(lastSeen) });
    t.after(() => resumed.close());
    const mobSse = await SseClient.open(second.url, `/mob/k/events?after_cursor=${lastSeen}`);
    t.after(() => mobSse.close());
    // The interrupted run resumes at its in-flight step and completes.
    await resumed.untilEvent('flow_completed', GUARD_MS);
    const run = await rpcOk(second.url, 'mob/flow_status', { mob_id: 'k', run_id: 'r1' });
    assert.equal(run.status, 'completed');
    assert.equal(run.output, 'echo: second echo: first x');
    const status = await rpcOk(second.url, 'mob/runtime_status');
    assert.deepEqual(status.stages, ['MobStarted', 'ModulesStarted', 'EventsMerged', 'RuntimeReady']);

    const after = cursorsOf(resumed);
    assert.equal(after[0], lastSeen + 1, 'first resumed event follows the last one seen');
    assert.deepEqual(
      after,
      Array.from({ length: after.length }, (_, i) => lastSeen + 1 + i),
      'no gap, no duplicate',
    );
    await mobSse.untilEvent('flow_completed', GUARD_MS);
    const mobCursors = cursorsOf(mobSse);
    assert.deepEqual(mobCursors, after.slice(0, mobCursors.length));
    // Members and their sessions came back; the whole ledger is one contiguous sequence.
    const st = await call(second.url, 'GET', '/mob/k/members/a/status');
    assert.equal(st.body.state, 'active');
    const all = await rpcOk(second.url, 'toolkit/mob_events/query', { limit: 1000 });
    assert.deepEqual(
      all.events.map((e: { cursor: number }) => e.cursor),
      Array.from({ length: all.events.length }, (_, i) => i + 1),
    );
    await second.kill('SIGTERM');
  });
});
