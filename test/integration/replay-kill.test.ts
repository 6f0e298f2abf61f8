// kill -9 during a detached replay leaves no half replay: at the next start the replay session is either
// complete (its report written) or archived with warren.replay_status=interrupted. Never `running`.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/app.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

describe('replay across kill -9', () => {
  it('a replay cut off by SIGKILL is archived at the next start, never left running', async (t) => {
    const dir = await tmpDir('warren-replay-kill-');
    t.after(() => dir.cleanup());
    const realm = 'replay-kill';
    await writeRealmConfig(dir.path, realm, { providers: { scripted: { replies: [] } } });
    const first = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const id = (await call(first.url, 'POST', '/sessions', { prompt: 't0', provider: 'scripted' })).body.session_id as string;
    for (let i = 1; i < 30; i++) await call(first.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `t${i}` });
    const res = await call(first.url, 'POST', `/sessions/${id}/replay`, undefined, { prefer: 'respond-async' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const replayId = res.body.replay_session_id as string;
    await first.kill('SIGKILL');
    const second = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const listed = await call(second.url, 'GET', '/sessions?label=warren.replay_status=running');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.sessions.length, 0, 'no replay is left running');
    const detail = await call(second.url, 'GET', `/sessions/${replayId}`);
    if (detail.status === 200) {
      // The replay finished before the kill: its report is there.
      const report = await call(second.url, 'GET', `/sessions/${replayId}/replay-report`);
      assert.equal(report.body.status, 'identical', JSON.stringify(report.body));
    } else assert.equal(detail.status, 404, 'the interrupted replay was archived');
    // The source is intact and replays from scratch.
    const again = await call(second.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(again.body.status, 'identical', JSON.stringify(again.body));
    assert.equal(again.body.turns, 30);
  });
});
