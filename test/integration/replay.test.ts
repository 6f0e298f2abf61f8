// Record, replay, fork and export/import through the real server (docs/replay.md). The scripted provider
// counts its calls: a replay must not add any. A shell tool appends to a file: a replay must not run it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startApp } from '../helpers/app.ts';
import { runReplayCli } from '../../cli/replay-command.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll } from '../helpers/wait.ts';
import { WarrenClient } from '../../client/src/client.ts';

const SHELL = { tools: { shell_enabled: true } };

/** A 3-turn session with a tool loop (shell) in turn 1; returns its id. */
async function recordedSession(base: string): Promise<string> {
  const res = await call(base, 'POST', '/sessions', {
    prompt: 'count',
    system_prompt: 'You are terse.',
    enable_builtins: true,
    enable_shell: true,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const id = res.body.session_id;
  for (const prompt of ['second', 'third']) {
    const r = await call(base, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
    assert.equal(r.status, 200, JSON.stringify(r.body));
  }
  return id;
}

const script = [
  { tool_calls: [{ name: 'shell', args: { command: 'echo ran >> ran.txt' }, id: 'sh_1' }] },
  { text: 'one' },
  { text: 'two' },
  { text: 'three' },
];

async function ranCount(dir: string): Promise<number> {
  try {
    return (await readFile(join(dir, 'ran.txt'), 'utf8')).split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

async function history(base: string, id: string): Promise<unknown[]> {
  const r = await call(base, 'GET', `/sessions/${id}/history?limit=1000`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.messages;
}

const strip = (rows: unknown[]) => rows.map((m) => ({ ...(m as object), created_at: undefined }));

describe('replay', () => {
  it('a recorded session replays identical without calling the model or running a tool', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    assert.equal(await ranCount(app.stateRoot), 1, 'the tool ran once while recording');
    const calls = app.provider.requests.length;
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'identical', JSON.stringify(res.body));
    assert.equal(res.body.turns, 3);
    assert.equal(res.body.calls_checked, 4);
    assert.equal(res.body.tools_answered, 1);
    assert.equal(app.provider.requests.length, calls, 'the replay made no provider call');
    assert.equal(await ranCount(app.stateRoot), 1, 'the replay ran no tool');
    const replayId = res.body.replay_session_id;
    assert.deepEqual(strip(await history(app.url, replayId)), strip(await history(app.url, id)), 'the replay rebuilt the same transcript');
    const detail = await call(app.url, 'GET', `/sessions/${replayId}`);
    assert.equal(detail.body.labels['warren.replay_of'], id);
    assert.equal(detail.body.labels['warren.replay_status'], 'identical');
    const report = await call(app.url, 'GET', `/sessions/${replayId}/replay-report`);
    assert.equal(report.body.status, 'identical');
  });

  it('a changed system prompt reports the first divergence at turn 1, call 0, field system', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`, { system_prompt: 'You are verbose.' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.status, 'diverged');
    assert.deepEqual(res.body.divergence, {
      turn: 1,
      call: 0,
      kind: 'request',
      path: 'system',
      recorded: 'You are terse.',
      now: 'You are verbose.',
    });
    assert.equal(await ranCount(app.stateRoot), 1, 'the replay ran no tool');
  });

  it('a changed tool schema reports the divergence at the tools field', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    // The same session replayed with another shell program: the shell tool's definition differs.
    const patched = await call(app.url, 'PATCH', '/config', { shell: { program: 'sh' } });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(res.body.status, 'diverged', JSON.stringify(res.body));
    assert.equal(res.body.divergence.turn, 1);
    assert.equal(res.body.divergence.call, 0);
    assert.match(res.body.divergence.path, /^tools\[\d+\]\.description$/);
    assert.match(String(res.body.divergence.recorded), /bash -c/);
    assert.match(String(res.body.divergence.now), /sh -c/);
  });

  it('Prefer: respond-async answers 202 and reports progress on the replay session', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    const res = await call(app.url, 'POST', `/sessions/${id}/replay`, undefined, { prefer: 'respond-async' });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const replayId = res.body.replay_session_id;
    const deadline = Date.now() + 20_000;
    let report;
    for (;;) {
      report = await call(app.url, 'GET', `/sessions/${replayId}/replay-report`);
      if (report.body.error !== 'running') break;
      if (Date.now() > deadline) assert.fail('waited 20 s for the detached replay report');
      await new Promise((r) => setImmediate(r));
    }
    assert.equal(report.body.status, 'identical', JSON.stringify(report.body));
    const ledger = await call(app.url, 'GET', `/sessions/${replayId}/ledger`);
    const progress = ledger.body.events.filter((e: { payload: { type: string } }) => e.payload.type === 'replay_progress');
    assert.equal(progress.length, 4, 'one replay_progress per turn plus the final one');
  });
});

describe('fork', () => {
  it('fork at every turn of a 10-turn session: the prefix, then both continue independently', async (t) => {
    const app = await startApp(t, [], {});
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'p1', system_prompt: 'sys' });
    const id = res.body.session_id;
    for (let i = 2; i <= 10; i++) await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: `p${i}` });
    const full = await history(app.url, id);
    assert.equal(full.length, 21);
    for (let turn = 0; turn <= 10; turn++) {
      const f = await call(app.url, 'POST', `/sessions/${id}/fork`, { at_turn: turn });
      assert.equal(f.status, 200, JSON.stringify(f.body));
      assert.equal(f.body.at_turn, turn);
      const forked = await history(app.url, f.body.session_id);
      assert.deepEqual(forked, full.slice(0, 1 + 2 * turn), `fork at turn ${turn} holds the prefix`);
      const detail = await call(app.url, 'GET', `/sessions/${f.body.session_id}`);
      assert.equal(detail.body.labels['warren.forked_from'], id);
      const c = await call(app.url, 'POST', `/sessions/${f.body.session_id}/messages`, {
        session_id: f.body.session_id,
        prompt: `branch${turn}`,
      });
      assert.equal(c.status, 200, JSON.stringify(c.body));
      assert.equal((await history(app.url, f.body.session_id)).length, 1 + 2 * turn + 2);
    }
    assert.deepEqual(await history(app.url, id), full, 'the source is untouched by its forks');
    const beyond = await call(app.url, 'POST', `/sessions/${id}/fork`, { at_turn: 11 });
    assert.equal(beyond.status, 400);
    assert.equal(beyond.body.code, 'BAD_REQUEST');
  });

  it('a fork of a recorded session replays identical up to its turn', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    const f = await call(app.url, 'POST', `/sessions/${id}/fork`, { at_turn: 2 });
    const res = await call(app.url, 'POST', `/sessions/${f.body.session_id}/replay`);
    assert.equal(res.body.status, 'identical', JSON.stringify(res.body));
    assert.equal(res.body.turns, 2);
  });
});

describe('export and import', () => {
  it('round-trips byte-identical transcripts and recordings across lmdb, sqlite and jsonl; the import replays identical', async (t) => {
    const source = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(source.url);
    const exported = await fetch(`${source.url}/sessions/${id}/export`);
    assert.equal(exported.status, 200);
    const file = await exported.text();
    const lines = file
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].format, 'warren.session');
    assert.equal(lines[0].v, 1);
    assert.equal(lines.filter((l) => l.type === 'recording').length, 3);
    const original = JSON.stringify(await history(source.url, id));
    for (const backend of ['sqlite', 'jsonl', 'lmdb'] as const) {
      const target = await startApp(t, [], { config: SHELL, realmBackend: backend });
      const res = await call(target.url, 'POST', '/sessions/import', file, { 'content-type': 'application/x-ndjson' });
      assert.equal(res.status, 200, `${backend}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.session_id, id);
      assert.equal(JSON.stringify(await history(target.url, id)), original, `${backend}: byte-identical transcript`);
      const again = await (await fetch(`${target.url}/sessions/${id}/export`)).text();
      const body = (text: string) =>
        text
          .split('\n')
          .slice(1)
          .filter((l) => !l.includes('"type":"session"'));
      assert.deepEqual(body(again), body(file), `${backend}: rows, recordings and ledger re-export identically`);
      const clash = await call(target.url, 'POST', '/sessions/import', file);
      assert.equal(clash.status, 409, 'importing the same session twice is a conflict');
      const copy = await call(target.url, 'POST', '/sessions/import?new_id=true', file);
      assert.equal(copy.status, 200);
      assert.notEqual(copy.body.session_id, id);
      const calls = target.provider.requests.length;
      const replay = await call(target.url, 'POST', `/sessions/${id}/replay`);
      assert.equal(replay.body.status, 'identical', `${backend}: ${JSON.stringify(replay.body)}`);
      assert.equal(target.provider.requests.length, calls);
    }
    const bad = await call(source.url, 'POST', '/sessions/import', '{"type":"header","format":"other"}\n{}');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
  });
});

describe('CLI', () => {
  it('warren export, import, replay, fork and rerun against running servers', async (t) => {
    const a = await startApp(t, script, { config: SHELL });
    const b = await startApp(t, [], { config: SHELL, realmBackend: 'sqlite' });
    const id = await recordedSession(a.url);
    const dir = await tmpDir('warren-replay-cli-');
    t.after(() => dir.cleanup());
    const file = join(dir.path, 's.jsonl');
    const exp = await runReplayCli(['export', id, '-o', file, '--url', a.url]);
    assert.equal(exp.code, 0, exp.stderr);
    const imp = await runReplayCli(['import', file], { WARREN_URL: b.url });
    assert.equal(imp.code, 0, imp.stderr);
    assert.equal(JSON.parse(imp.stdout).session_id, id);
    const rep = await runReplayCli(['replay', id, '--url', b.url]);
    assert.equal(rep.code, 0, rep.stderr + rep.stdout);
    assert.equal(JSON.parse(rep.stdout).status, 'identical');
    const div = await runReplayCli(['replay', id, '--system-prompt', 'other', '--url', b.url]);
    assert.equal(div.code, 3, 'a diverged replay exits 3');
    const fork = await runReplayCli(['fork', id, '--at-turn', '1', '--url', b.url]);
    assert.equal(fork.code, 0, fork.stderr);
    assert.equal(JSON.parse(fork.stdout).at_turn, 1);
    const missing = await runReplayCli(['replay', '--url', b.url]);
    assert.equal(missing.code, 2);
    // The rerun goes to the live model of B (the scripted model's echo).
    const rerun = await runReplayCli(['rerun', id, '--model', 'other-model', '--provider', 'openai', '--turns', '2', '--url', b.url]);
    assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout);
    const report = JSON.parse(rerun.stdout);
    assert.equal(report.model, 'other-model');
    assert.deepEqual(
      report.turns.map((x: { turn: number; text: string }) => [x.turn, x.text]),
      [
        [1, 'echo: count'],
        [2, 'echo: second'],
      ],
    );
    assert.equal((await runReplayCli(['rerun', id, '--url', b.url])).code, 2, 'rerun needs --model');
  });
});

describe('typed client', () => {
  it('replay, fork, export and import through WarrenClient; /openapi.json and /warren/extensions list the routes', async (t) => {
    const app = await startApp(t, script, { config: SHELL });
    const id = await recordedSession(app.url);
    const client = new WarrenClient(app.url);
    assert.equal((await client.replay(id)).status, 'identical');
    const accepted = await client.replayAsync(id);
    assert.ok(accepted.replay_session_id);
    const done = await poll('the detached replay report through the client', async () => {
      const r = await client.replayReport(accepted.replay_session_id).catch(() => undefined);
      return r?.status === 'identical' ? r : undefined;
    });
    assert.equal(done.turns, 3);
    assert.equal((await client.fork(id, { at_turn: 1 })).at_turn, 1);
    assert.deepEqual(
      (await client.turns(id)).turns.map((x) => x.replay_turns),
      [1, 2, 3],
    );
    const file = await client.exportSession(id);
    const copy = await client.importSession(file, { newId: true });
    assert.equal(copy.message_count, (await history(app.url, id)).length);
    const rerun = await client.rerun(id, { model: 'other-model', provider: 'openai' });
    assert.equal(rerun.turns.length, 3);
    const openapi = await call(app.url, 'GET', '/openapi.json');
    for (const path of [
      '/sessions/{id}/replay',
      '/sessions/{id}/replay-report',
      '/sessions/{id}/fork',
      '/sessions/{id}/turns',
      '/sessions/{id}/rerun',
      '/sessions/{id}/export',
      '/sessions/import',
    ])
      assert.ok(openapi.body.paths[path], `openapi covers ${path}`);
    const ext = await call(app.url, 'GET', '/warren/extensions');
    const replayExt = ext.body.extensions.find((e: { name: string }) => e.name === 'session_replay');
    for (const route of [
      'POST /sessions/{id}/replay',
      'GET /sessions/{id}/replay-report',
      'GET /sessions/{id}/turns',
      'POST /sessions/{id}/fork',
      'POST /sessions/{id}/rerun',
      'GET /sessions/{id}/export',
      'POST /sessions/import',
    ])
      assert.ok(replayExt?.routes.includes(route), `/warren/extensions lists ${route}: ${JSON.stringify(replayExt)}`);
    assert.deepEqual(replayExt.config_keys, ['record.enabled', 'record.raw_streams', 'record.raw_stream_max_bytes']);
    // Warren's extensions are reported by /warren/extensions; /capabilities keeps the specification's ids.
    const caps = await call(app.url, 'GET', '/capabilities');
    assert.equal(caps.status, 200);
    assert.ok(!caps.body.capabilities.some((c: { id: string }) => c.id === 'session_replay'));
  });
});

describe('rerun', () => {
  it('runs the user inputs against another model and reports per-turn differences', async (t) => {
    // Every reply reports usage, the recorded ones and the rerun's: the report gives both per turn.
    const usage = (n: number) => ({ usage: { input_tokens: 10 * n, output_tokens: n } });
    const rerunReplies = [{ text: 'echo: count' }, { text: 'echo: second' }, { text: 'echo: third' }];
    const withUsage = [...script, ...rerunReplies].map((r, i) => ({ ...r, ...usage(i + 1) }));
    const app = await startApp(t, withUsage, { config: SHELL });
    const id = await recordedSession(app.url);
    const before = app.provider.requests.length;
    const res = await call(app.url, 'POST', `/sessions/${id}/rerun`, { model: 'other-model', provider: 'openai' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.turns.length, 3);
    assert.equal(app.provider.requests.length, before + 3, 'the rerun called the live model once per turn');
    assert.equal(app.provider.requests.at(-1)!.model, 'other-model');
    // Turn 1 was recorded as two calls (replies 1 and 2: 11 + 22 tokens), re-run as one (reply 5: 55).
    assert.deepEqual(
      res.body.turns.map((x: { recorded_tokens: number; tokens: number }) => [x.recorded_tokens, x.tokens]),
      [
        [33, 55],
        [33, 66],
        [44, 77],
      ],
    );
    for (const turn of res.body.turns) {
      assert.ok(
        typeof turn.duration_ms === 'number' && typeof turn.recorded_duration_ms === 'number',
        `time reported: ${JSON.stringify(turn)}`,
      );
    }
    const [first, second] = res.body.turns;
    assert.deepEqual(first.recorded_tool_calls, ['shell']);
    assert.deepEqual(first.tool_calls, []);
    assert.equal(first.tool_calls_equal, false);
    assert.equal(second.recorded_text, 'two');
    assert.equal(second.text, 'echo: second');
    assert.equal(second.text_equal, false);
    const detail = await call(app.url, 'GET', `/sessions/${res.body.rerun_session_id}`);
    assert.equal(detail.body.labels['warren.rerun_of'], id);
  });
});

describe('[record] raw_streams', () => {
  it("keeps each call's streamed deltas up to raw_stream_max_bytes, then drops the rest and says so", async (t) => {
    const chunks = Array.from({ length: 40 }, (_, i) => `chunk-${String(i).padStart(2, '0')} `);
    const app = await startApp(t, [{ chunks }, { chunks }], { config: { record: { raw_streams: true, raw_stream_max_bytes: 400 } } });
    const id = (await call(app.url, 'POST', '/sessions', { prompt: 'stream' })).body.session_id as string;
    assert.equal((await call(app.url, 'PATCH', '/config', { record: { raw_stream_max_bytes: 262144 } })).status, 200);
    assert.equal((await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' })).status, 200);
    const file = await (await fetch(`${app.url}/sessions/${id}/export`)).text();
    const calls = file
      .split('\n')
      .filter((l) => l.startsWith('{"type":"recording"'))
      .map((l) => JSON.parse(l).value.calls[0] as { raw: Array<{ delta: string }>; raw_truncated?: boolean });
    assert.equal(calls.length, 2);
    const [bounded, whole] = calls;
    // Each delta counts its length plus 32 bytes: 9 deltas of 10 characters fit in 400 bytes, the 10th does not.
    assert.equal(bounded.raw_truncated, true);
    assert.deepEqual(
      bounded.raw.map((e) => e.delta),
      chunks.slice(0, 9),
    );
    assert.equal(whole.raw_truncated, undefined);
    assert.deepEqual(
      whole.raw.map((e) => e.delta),
      chunks,
    );
    const replay = await call(app.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
  });
});
