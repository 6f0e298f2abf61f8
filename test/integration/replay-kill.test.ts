// kill -9 of a real `warren serve` during a replay leaves no half session (test/integration/fork-kill.test.ts
// does the same for forks). The replay is held mid-way by a gate (an HTTP hook at run_started whose answer
// the test holds): after the kill and a restart the replay session is archived with
// warren.replay_status=interrupted, never left running, and the source replays from scratch.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { startHookServer } from '../helpers/hook-fixtures.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { within } from '../helpers/wait.ts';

const KILL_TEST = { timeout: 180_000 };

describe('replay across kill -9', () => {
  it('a replay held mid-way and killed is archived at the next start, never left running', KILL_TEST, async (t) => {
    const dir = await tmpDir('warren-replay-kill-');
    t.after(() => dir.cleanup());
    const hooks = await startHookServer();
    t.after(() => hooks.close());
    const realm = 'replay-kill';
    const TURNS = 6;
    await writeRealmConfig(dir.path, realm, {
      providers: { scripted: { replies: [] } },
      hooks: { entries: [{ id: 'gate', point: 'run_started', runtime: { type: 'http', url: hooks.url } }] },
    });
    const first = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const id = (await call(first.url, 'POST', '/sessions', { prompt: 't0', provider: 'scripted' })).body.session_id as string;
    for (let i = 1; i < TURNS; i++) await call(first.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `t${i}` });
    assert.equal(hooks.payloads.length, TURNS);

    // The replay's third turn waits at its run_started hook: two turns are committed, the rest are not.
    const gate = deferred();
    hooks.hold = gate;
    const res = await call(first.url, 'POST', `/sessions/${id}/replay`, undefined, { prefer: 'respond-async' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const replayId = res.body.replay_session_id as string;
    await within('the replay to reach its third turn', hooks.received(TURNS + 3), 30_000);
    const midway = await call(first.url, 'GET', `/sessions/${replayId}`);
    assert.equal(midway.body.labels['warren.replay_status'], 'running');
    assert.equal(midway.body.message_count, 4, 'two replayed turns committed');
    await first.kill('SIGKILL');
    hooks.hold = null;
    gate.resolve();

    const second = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const running = await call(second.url, 'GET', '/sessions?label=warren.replay_status=running');
    assert.equal(running.body.sessions.length, 0, 'no replay is left running');
    assert.equal((await call(second.url, 'GET', `/sessions/${replayId}`)).status, 404, 'the interrupted replay is archived');
    const listed = await call(second.url, 'GET', `/sessions?label=warren.replay_of=${id}`);
    assert.equal(listed.body.sessions.length, 0, 'and not listed');
    const report = await call(second.url, 'GET', `/sessions/${replayId}/replay-report`);
    assert.equal(report.status, 404, JSON.stringify(report.body));
    // The source is intact and replays from scratch.
    const again = await call(second.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(again.body.status, 'identical', JSON.stringify(again.body));
    assert.equal(again.body.turns, TURNS);
  });
});
