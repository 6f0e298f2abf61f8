// GET /sessions/{id}/turns (docs/replay.md "Turns"): a session's turns with the fork and replay bounds that
// stop at each, as the viewer's "Fork here" and "Replay" use them; and a detached replay's report while it
// runs (turns replayed so far), held at a hook so it can be seen running.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { startHookServer } from '../helpers/hook-fixtures.ts';
import { poll } from '../helpers/wait.ts';

const SCHEMA = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };

describe('GET /sessions/{id}/turns', () => {
  it('lists each turn (an extraction is no turn), whether it is recorded, and the replay bound through it', async (t) => {
    const script = [{ text: 'one' }, { text: 'Paris it is' }, { text: '{"city":"Paris"}' }, { text: 'three' }];
    const app = await startApp(t, script, { config: { record: { enabled: false } } });
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'first', system_prompt: 'sys' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    // Turn 1 ran while [record] was off; turns 2 (structured output: main call and extraction) and 3 are recorded.
    assert.equal((await call(app.url, 'PATCH', '/config', { record: { enabled: true } })).status, 200);
    const structured = await call(app.url, 'POST', `/sessions/${id}/messages`, {
      session_id: id,
      prompt: [{ type: 'text', text: 'where?' }],
      output_schema: { schema: SCHEMA, name: 'place' },
    });
    assert.equal(structured.status, 200, JSON.stringify(structured.body));
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x'.repeat(300) });

    const res = await call(app.url, 'GET', `/sessions/${id}/turns`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.session_id, id);
    const turns = res.body.turns as Array<Record<string, unknown>>;
    assert.deepEqual(
      turns.map((x) => [x.turn, x.prompt, x.recorded, x.replay_turns]),
      [
        [1, 'first', false, undefined],
        [2, 'where?', true, 1],
        [3, 'x'.repeat(200), true, 2],
      ],
    );
    assert.equal(turns[0].at_row, 1, 'the system prompt comes first');
    const rows = (await call(app.url, 'GET', `/sessions/${id}/history?limit=1000`)).body.messages as unknown[];
    assert.equal(res.body.message_count, rows.length);

    // The bounds do what they say: a fork at turn 2 holds two turns; a replay through turn 2 replays one recorded turn.
    const fork = await call(app.url, 'POST', `/sessions/${id}/fork`, { at_turn: 2 });
    assert.equal((await call(app.url, 'GET', `/sessions/${fork.body.session_id}/turns`)).body.turns.length, 2);
    const replay = await call(app.url, 'POST', `/sessions/${id}/replay`, { turns: turns[1].replay_turns });
    assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
    assert.deepEqual([replay.body.turns, replay.body.unrecorded_turns], [1, 1]);

    // Bad input gets the error envelope.
    const missing = await call(app.url, 'GET', `/sessions/00000000-0000-4000-8000-000000000000/turns`);
    assert.equal(missing.status, 404, JSON.stringify(missing.body));
    assert.equal(missing.body.code, 'SESSION_NOT_FOUND');
    const bad = await call(app.url, 'GET', `/sessions/not%20an%20id/turns`);
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
  });

  it("a detached replay's report says how far it got while it runs", async (t) => {
    const app = await startApp(t, []);
    const server = await startHookServer();
    t.after(() => server.close());
    const hooks = { entries: [{ id: 'watch', point: 'pre_llm_request', runtime: { type: 'http', url: server.url } }] };
    assert.equal((await call(app.url, 'PATCH', '/config', { hooks })).status, 200);
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'one' })).body.session_id as string;
    for (const prompt of ['two', 'three']) await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
    // The replay's second turn waits at its hook.
    const seen = server.payloads.length;
    server.hold = deferred();
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`, undefined, { prefer: 'respond-async' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const replayId = res.body.replay_session_id as string;
    await server.received(seen + 1);
    const first = await call(app.url, 'GET', `/sessions/${replayId}/replay-report`);
    assert.deepEqual([first.body.error, first.body.turns, first.body.turns_replayed], ['running', 3, 0], JSON.stringify(first.body));
    const gate = server.hold;
    server.hold = deferred();
    gate.resolve();
    await server.received(seen + 2);
    const second = await call(app.url, 'GET', `/sessions/${replayId}/replay-report`);
    assert.deepEqual([second.body.error, second.body.turns_replayed], ['running', 1], JSON.stringify(second.body));
    server.hold.resolve();
    server.hold = null;
    const done = await poll('the replay to finish', async () => {
      const r = await call(app.url, 'GET', `/sessions/${replayId}/replay-report`);
      return r.body.error === 'running' ? undefined : r.body;
    });
    assert.deepEqual([done.status, done.turns_replayed, done.error], ['identical', 3, undefined], JSON.stringify(done));
  });
});
