// Exported sessions never carry secrets (docs/replay.md "What an export leaves out"). A session whose run
// used a `[hooks]` entry with a token in its URL and a header, and a `hooks_override` with secret env
// values, arguments and headers, is exported: none of the secrets' bytes is in the file. Imported into a
// server with the same `[hooks]`, it replays identical (the override's hooks checked by their summary, not
// run: their secrets are not in the file); with the `[hooks]` header changed, the replay names it. In the
// source realm's store the recorded hooks_override is sealed: its secrets are in no store file.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { startHookServer, writeHookScripts } from '../helpers/hook-fixtures.ts';
import { filesUnder } from '../helpers/files-under.ts';

const SECRETS = {
  url: 'URLTOKEN-5f1d9c',
  header: 'HEADERTOKEN-a83e0b',
  env: 'ENVTOKEN-77c2aa',
  arg: 'ARGTOKEN-c0ffee',
  overrideHeader: 'OVERRIDETOKEN-19be4d',
};

async function configure(app: TestApp, patch: Record<string, unknown>): Promise<void> {
  const r = await call(app.url, 'PATCH', '/config', patch);
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

describe('export without secrets', () => {
  it('no secret of a hook or hooks_override is in the file; the import replays identical and reports a changed hook', async (t) => {
    const script = [{ tool_calls: [{ name: 'datetime', args: {} }] }, { text: 'it is now' }, { text: 'two' }];
    const source = await startApp(t, script);
    const server = await startHookServer();
    t.after(() => server.close());
    const command = await writeHookScripts(source.stateRoot);
    const hooks = (header: string) => ({
      entries: [
        {
          id: 'gate',
          point: 'pre_tool_execution',
          capability: 'guardrail',
          runtime: { type: 'http', url: `${server.url}/?token=${SECRETS.url}`, headers: { authorization: `Bearer ${header}` } },
        },
      ],
    });
    await configure(source, { hooks: hooks(SECRETS.header) });
    const created = await call(source.url, 'POST', '/sessions', { prompt: 'time?', enable_builtins: true });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    const runtime = command('answer.mjs', { HOOK_TOKEN: SECRETS.env });
    const override = {
      entries: [
        {
          id: 'audit',
          point: 'run_started',
          capability: 'guardrail',
          runtime: { ...runtime, args: [...(runtime.args as string[]), `--token=${SECRETS.arg}`] },
        },
        {
          id: 'watch',
          point: 'pre_llm_request',
          runtime: { type: 'http', url: server.url, headers: { 'x-api-key': SECRETS.overrideHeader } },
        },
      ],
    };
    const two = await call(source.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two', hooks_override: override });
    assert.equal(two.status, 200, JSON.stringify(two.body));
    const seen = server.payloads.map((p) => JSON.stringify(p._headers));
    assert.ok(
      seen.some((h) => h.includes(SECRETS.header)) && seen.some((h) => h.includes(SECRETS.overrideHeader)),
      'the hooks ran with their headers',
    );
    // The source replays identical (its override hooks run again, opened from the sealed recording).
    const here = await call(source.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(here.body.status, 'identical', JSON.stringify(here.body));
    assert.ok(
      server.payloads.slice(-4).some((p) => JSON.stringify(p._headers).includes(SECRETS.overrideHeader)),
      'the override hook ran again',
    );
    // At rest, the recorded hooks_override is sealed: no override secret is in the realm's store files.
    const realmDir = join(source.stateRoot, 'test-realm');
    for (const file of await filesUnder(realmDir)) {
      if (file.endsWith('config.toml')) continue;
      const bytes = await readFile(file);
      for (const what of ['env', 'arg', 'overrideHeader'] as const)
        assert.ok(!bytes.includes(Buffer.from(SECRETS[what])), `${file} does not hold the ${what} secret`);
    }

    const res = await fetch(`${source.url}/sessions/${id}/export`);
    assert.equal(res.status, 200);
    const file = await res.text();
    for (const [what, secret] of Object.entries(SECRETS)) assert.ok(!file.includes(secret), `the ${what} secret is not in the export`);
    assert.match(file, /"type":"redacted"/, 'the override hooks are kept by reference');
    // A redacted runtime is no hook runtime a live request may send.
    const redacted = { entries: [{ id: 'x', point: 'run_started', runtime: { type: 'redacted', summary: {} } }] };
    const refused = await call(source.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'x', hooks_override: redacted });
    assert.equal(refused.status, 400, JSON.stringify(refused.body));

    // Another realm with the same [hooks]: the import replays identical without running the override hooks.
    const target = await startApp(t, []);
    await configure(target, { hooks: hooks(SECRETS.header) });
    const imported = await call(target.url, 'POST', '/sessions/import', file, { 'content-type': 'application/x-ndjson' });
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    const before = server.payloads.length;
    const replay = await call(target.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
    assert.equal(replay.body.turns, 2);
    assert.equal(target.provider.requests.length, 0, 'no model call');
    const ran = server.payloads.slice(before).map((p) => JSON.stringify(p._headers));
    assert.ok(ran.length > 0 && ran.every((h) => h.includes(SECRETS.header)), 'only the [hooks] entry ran (the gate)');
    const ledger = await call(target.url, 'GET', `/sessions/${replay.body.replay_session_id}/ledger`);
    const started = (ledger.body.events as Array<{ payload: { type: string; hook_id?: string } }>)
      .filter((e) => e.payload.type === 'hook_started')
      .map((e) => e.payload.hook_id);
    assert.deepEqual([...new Set(started)], ['gate'], 'the override hooks were not run');
    // The replay session's own export carries no secret either.
    const again = await (await fetch(`${target.url}/sessions/${replay.body.replay_session_id}/export`)).text();
    for (const [what, secret] of Object.entries(SECRETS)) assert.ok(!again.includes(secret), `the ${what} secret is not in the re-export`);

    // The [hooks] header changed: the replay reports it at the first call the hook applied to.
    await configure(target, { hooks: hooks('ANOTHER-TOKEN') });
    const changed = await call(target.url, 'POST', `/sessions/${id}/replay`);
    assert.equal(changed.body.status, 'diverged', JSON.stringify(changed.body));
    const d = changed.body.divergence;
    assert.deepEqual([d.turn, d.call, d.kind, d.path], [1, 0, 'request', 'hooks[0].runtime.headers.authorization'], JSON.stringify(d));
    assert.ok(!JSON.stringify(changed.body).includes(SECRETS.header), 'the report holds hashes, not the header');
  });
});
