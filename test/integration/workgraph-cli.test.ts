// `warren workgraph ...` as a real child process (main.ts): host-authority goal and attention commands on
// a realm opened directly while a server runs on it (LMDB, two processes), reads both directly and with
// --url, JSON output, --help, and SPEC.md's exit codes (0 success, 1 error).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runWorkGraphCli } from '../../cli/workgraph-command.ts';
import { call, startApp } from '../helpers/app.ts';
import { agentOk, workGraphDriver } from '../helpers/workgraph-driver.ts';
import { nodeEntry } from '../helpers/child-entry.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

interface Run {
  code: number;
  json: any;
  stdout: string;
  stderr: string;
}

function warren(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...nodeEntry('main.ts'), 'workgraph', ...args], { cwd: REPO, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code, json, stdout, stderr });
    });
  });
}

describe('warren workgraph CLI', { timeout: 400_000 }, () => {
  it('creates, confirms, pauses and closes goals on the realm while a server reads them', { timeout: 120_000 }, async (t) => {
    const app = await startApp(t, workGraphDriver);
    const realm = ['--realm', 'test-realm', '--state-root', app.stateRoot];

    const created = await warren([
      'goal-create',
      ...realm,
      '--title',
      'ship it',
      '--policy',
      'principal_confirmed',
      '--principal',
      'boss',
      '--target-session',
      'sess-1',
      '--label',
      'release',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const { item, attention } = created.json;
    assert.equal(item.title, 'ship it');
    assert.deepEqual(item.completion_policy, { kind: 'principal_confirmed', principal: { kind: 'principal', id: 'boss' } });
    assert.match(attention.binding_id, /^attention_/);
    assert.deepEqual(attention.target, { kind: 'session', session_id: 'sess-1' });
    assert.deepEqual(attention.status, { state: 'active' });
    assert.equal(attention.mode, 'pursue');

    // The running server sees what another process committed: REST reads and an agent's tool call.
    const status = await call(app.url, 'POST', '/workgraph/goal/status', { binding_id: attention.binding_id });
    assert.equal(status.status, 200, JSON.stringify(status.body));
    assert.equal(status.body.item.id, item.id);
    const seen = await agentOk(app.url, 'workgraph_get', { item_id: item.id });
    assert.equal(seen.result.title, 'ship it');
    assert.deepEqual(
      (await call(app.url, 'POST', '/workgraph/attention/list', { target: { kind: 'session', session_id: 'sess-1' } })).body.attention.map(
        (b: { binding_id: string }) => b.binding_id,
      ),
      [attention.binding_id],
    );

    const refused = await warren(['goal-close', attention.binding_id, ...realm]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /principal_confirmed needs a confirmation from the named principal/);
    const paused = await warren(['attention-pause', attention.binding_id, ...realm, '--until', '2031-01-01T00:00:00Z']);
    assert.equal(paused.code, 0, paused.stderr);
    assert.deepEqual(paused.json.status, { state: 'paused', until: '2031-01-01T00:00:00Z' });
    assert.deepEqual(
      (await call(app.url, 'POST', '/workgraph/attention/list', { status: 'paused' })).body.attention.map(
        (b: { binding_id: string }) => b.binding_id,
      ),
      [attention.binding_id],
    );
    const resumed = await warren(['attention-resume', attention.binding_id, ...realm]);
    assert.deepEqual(resumed.json.status, { state: 'active' });

    const confirmed = await warren(['goal-confirm', attention.binding_id, ...realm, '--principal', 'boss', '--summary', 'looks good']);
    assert.equal(confirmed.code, 0, confirmed.stderr);
    assert.equal(confirmed.json.item.evidence_refs[0].confirmation_kind, 'principal');
    const closed = await warren(['goal-close', attention.binding_id, ...realm]);
    assert.equal(closed.code, 0, closed.stderr);
    assert.equal(closed.json.item.status, 'completed');
    assert.deepEqual(closed.json.attention.status, { state: 'stopped' });

    const kinds = (await call(app.url, 'GET', '/workgraph/events')).body.events.map((e: { kind: string }) => e.kind);
    assert.deepEqual(kinds, [
      'created',
      'attention_created',
      'attention_updated',
      'attention_updated',
      'evidence_added',
      'closed',
      'attention_updated',
    ]);
  });

  it('reads directly and through --url alike, with JSON output', async (t) => {
    const app = await startApp(t, workGraphDriver);
    const s = (await agentOk(app.url, 'workgraph_list', {})).sessionId;
    const a = (await agentOk(app.url, 'workgraph_create', { title: 'a', labels: ['x'] }, s)).result;
    await agentOk(app.url, 'workgraph_create', { title: 'b', blocked_by: [a.id] }, s);
    // Over HTTP while the server runs (the same runWorkGraphCli main.ts calls) ...
    const viaUrl = {
      list: await runWorkGraphCli(['list', '--url', app.url]),
      ready: await runWorkGraphCli(['ready', '--url', app.url]),
      snapshot: await runWorkGraphCli(['snapshot', '--url', app.url]),
      events: await runWorkGraphCli(['events', '--url', app.url, '--after-seq', '1', '--limit', '5']),
      show: await runWorkGraphCli(['show', a.id, '--url', app.url]),
    };
    // ... and on the realm opened directly once the server stopped (this process then holds the store alone).
    await app.close();
    const realm = ['--realm', 'test-realm', '--state-root', app.stateRoot];
    const direct = {
      list: await runWorkGraphCli(['list', ...realm]),
      ready: await runWorkGraphCli(['ready', ...realm]),
      snapshot: await runWorkGraphCli(['snapshot', ...realm]),
      events: await runWorkGraphCli(['events', ...realm, '--after-seq', '1', '--limit', '5']),
      show: await runWorkGraphCli(['show', a.id, ...realm]),
    };
    for (const r of [...Object.values(viaUrl), ...Object.values(direct)]) assert.equal(r.code, 0, r.stderr);
    const j = (r: { stdout: string }) => JSON.parse(r.stdout);
    assert.equal(j(direct.list).items.length, 2);
    assert.deepEqual(j(viaUrl.list), j(direct.list));
    assert.deepEqual(
      j(direct.ready).items.map((i: { id: string }) => i.id),
      [a.id],
    );
    assert.deepEqual(j(viaUrl.ready), j(direct.ready));
    assert.equal(j(direct.show).id, a.id);
    assert.deepEqual(j(viaUrl.show), j(direct.show));
    assert.deepEqual(j(direct.snapshot).ready_item_ids, [a.id]);
    assert.deepEqual(j(viaUrl.snapshot).items, j(direct.snapshot).items);
    assert.deepEqual(
      j(direct.events).events.map((e: { seq: number }) => e.seq),
      [2],
    );
    assert.deepEqual(j(viaUrl.events).events, j(direct.events).events);
    const missing = await runWorkGraphCli(['show', 'work_missing', ...realm]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /work item not found/);
  });

  it('answers --help with 0 and every error with exit 1 and a one-line reason', async (t) => {
    const app = await startApp(t, workGraphDriver);
    // The real executable once for each exit code ...
    const help = await warren(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /goal-create/);
    const bad = await warren(['frobnicate']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^warren: unknown workgraph command/);
    // ... and the command function for the rest of the table.
    const realm = ['--realm', 'nope', '--state-root', app.stateRoot];
    const cases: Array<[string[], RegExp]> = [
      [['list'], /--realm/],
      [['list', ...realm], /realm not found/],
      [['list', '--url', app.url, '--bogus', '1'], /unknown option/],
      [['list', '--url', app.url, '--limit', 'many'], /--limit must be an integer/],
      [['show', '--url', app.url], /exactly one <item_id>/],
      [['goal-create', '--url', app.url, '--title', 't', '--target-session', 's'], /host authority/],
      [['attention-pause', 'attention_x', '--url', app.url], /host authority/],
      [['goal-status', 'attention_missing', '--url', app.url], /not found/],
      [['events', '--url', app.url, '--all-namespaces'], /all_namespaces/],
      [['list', '--url', app.url, '--status', 'done'], /unknown status/],
    ];
    for (const [args, reason] of cases) {
      const r = await runWorkGraphCli(args);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.stdout}`);
      assert.match(r.stderr, reason, args.join(' '));
      assert.ok(r.stderr.startsWith('warren: '));
    }
  });
});
