// Hooks through the real server, with real child processes and a real loopback HTTP hook server:
// [hooks] config entries and hooks_override, guardrail denies (403 HOOK_DENIED, nothing kept),
// observe-only violations, timeouts, bad answers, config_invalid, background hooks and their bound,
// and payload_max_bytes.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import pino from 'pino';
import { parse, stringify } from 'smol-toml';
import { createApp } from '../../app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { join } from 'node:path';
import { uwsSkip } from '../helpers/absent.ts';
import { assertFeatureEventShapes } from '../helpers/feature-events.ts';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { ALLOW, DENY, startHookServer, writeHookScripts } from '../helpers/hook-fixtures.ts';
import { SseClient } from '../helpers/sse-client.ts';

type Payload = { type: string; [k: string]: unknown };

async function events(base: string, id: string): Promise<Payload[]> {
  const res = await call(base, 'GET', `/sessions/${id}/ledger`);
  const payloads: Payload[] = res.body.events.map((e: { payload: Payload }) => e.payload);
  assertFeatureEventShapes(payloads);
  return payloads;
}

const hookEvents = (ev: Payload[]) => ev.filter((e) => e.type.startsWith('hook_')).map((e) => [e.type, e.hook_id, e.point]);

async function setup(t: Parameters<typeof startApp>[0], opts: Record<string, unknown>, script: Parameters<typeof startApp>[1] = []) {
  const app = await startApp(t, script, opts);
  const command = await writeHookScripts(app.stateRoot);
  const server = await startHookServer();
  t.after(() => server.close());
  // Generous: a child node process may start slowly on a loaded machine, and only the hooks meant to
  // time out should (they set their own timeout_ms).
  await configure(app, { default_timeout_ms: 60_000 });
  return { app, command, server };
}

async function configure(app: TestApp, hooks: Record<string, unknown>): Promise<void> {
  const res = await call(app.url, 'PATCH', '/config', { hooks });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

for (const transport of ['node', 'uws'] as const) {
  describe(`hooks (${transport})`, { skip: transport === 'uws' ? uwsSkip() : undefined }, () => {
    const opts = { httpTransport: transport };

    it('a [hooks] guardrail command that denies pre_llm_request stops the turn before the model call (403), keeping nothing', async (t) => {
      const { app, command } = await setup(t, opts);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
      const id = created.body.session_id;
      const count = (await call(app.url, 'GET', `/sessions/${id}`)).body.message_count;
      await configure(app, {
        entries: [
          { id: 'no-llm', point: 'pre_llm_request', capability: 'guardrail', runtime: command('answer.mjs', { HOOK_ANSWER: DENY }) },
        ],
      });
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });
      assert.equal(res.status, 403, JSON.stringify(res.body));
      assert.equal(res.body.code, 'HOOK_DENIED');
      assert.equal(res.body.details.hook_id, 'no-llm');
      assert.equal(res.body.details.reason_code, 'policy_violation');
      assert.deepEqual(res.body.details.payload, { rule: 7 });
      assert.equal(app.provider.requests.length, 1, 'no model call for the denied turn');
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, count);
      const ev = await events(app.url, id);
      const denied = ev.find((e) => e.type === 'hook_denied');
      assert.deepEqual(denied, {
        type: 'hook_denied',
        hook_id: 'no-llm',
        point: 'pre_llm_request',
        reason_code: 'policy_violation',
        message: 'not today',
        payload: { rule: 7 },
      });
      assert.equal(ev.filter((e) => e.type === 'run_failed').at(-1)?.terminal_cause_kind, 'hook_denied');
      // hooks_override.disable switches the config entry off for one run.
      const ok = await call(app.url, 'POST', `/sessions/${id}/messages`, {
        session_id: id,
        prompt: 'again',
        hooks_override: { disable: ['no-llm'] },
      });
      assert.equal(ok.status, 200);
    });

    it('override entries: allow answers complete with duration; payloads carry point data; observe denies are violations', async (t) => {
      const { app, command } = await setup(t, opts, [{ tool_calls: [{ name: 'no_such_tool', args: { q: 1 } }] }, { text: 'done' }]);
      const log = join(app.stateRoot, 'hook.log');
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'use a tool',
        hooks_override: {
          entries: [
            {
              id: 'pre-tool',
              point: 'pre_tool_execution',
              capability: 'guardrail',
              runtime: command('answer.mjs', { HOOK_LOG: log, HOOK_ANSWER: ALLOW }),
            },
            { id: 'post-tool', point: 'post_tool_execution', runtime: command('answer.mjs', { HOOK_LOG: log }) },
            { id: 'watch', point: 'run_started', capability: 'observe', runtime: command('answer.mjs', { HOOK_ANSWER: DENY }) },
            { id: 'boundary', point: 'turn_boundary', runtime: { type: 'in_process', name: 'allow' } },
          ],
        },
      });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.text, 'done');
      const lines = (await readFile(log, 'utf8'))
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      assert.deepEqual(
        lines.map((l) => [l.hook_id, l.point, l.session_id]),
        [
          ['pre-tool', 'pre_tool_execution', res.body.session_id],
          ['post-tool', 'post_tool_execution', res.body.session_id],
        ],
      );
      assert.deepEqual(lines[0].data.tool_call.args, { q: 1 });
      assert.equal(lines[1].data.result.is_error, true);
      const ev = await events(app.url, res.body.session_id);
      assert.deepEqual(hookEvents(ev), [
        ['hook_started', 'watch', 'run_started'],
        ['hook_failed', 'watch', 'run_started'],
        ['hook_started', 'pre-tool', 'pre_tool_execution'],
        ['hook_completed', 'pre-tool', 'pre_tool_execution'],
        ['hook_started', 'post-tool', 'post_tool_execution'],
        ['hook_completed', 'post-tool', 'post_tool_execution'],
        ['hook_started', 'boundary', 'turn_boundary'],
        ['hook_completed', 'boundary', 'turn_boundary'],
      ]);
      assert.deepEqual(ev.find((e) => e.type === 'hook_failed')?.reason, { reason_code: 'observe_only_violation' });
      assert.equal(typeof ev.find((e) => e.type === 'hook_completed')?.duration_ms, 'number');
    });

    it('an HTTP guardrail denying pre_tool_execution stops the run before any tool runs', async (t) => {
      const { app, server } = await setup(t, opts, [{ tool_calls: [{ name: 'no_such_tool', args: {} }] }]);
      server.answer = DENY;
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'tool please',
        hooks_override: {
          entries: [
            {
              id: 'gate',
              point: 'pre_tool_execution',
              capability: 'guardrail',
              runtime: { type: 'http', url: server.url, headers: { 'x-hook-token': 't0k' } },
            },
          ],
        },
      });
      assert.equal(res.status, 403);
      assert.equal(res.body.code, 'HOOK_DENIED');
      assert.equal(res.body.details.session_created, true);
      const id = res.body.details.session_id;
      assert.equal(server.payloads.length, 1);
      assert.equal((server.payloads[0]._headers as Record<string, string>)['x-hook-token'], 't0k');
      assert.equal((server.payloads[0].data as { tool_call: { name: string } }).tool_call.name, 'no_such_tool');
      const ev = await events(app.url, id);
      assert.ok(!ev.some((e) => e.type === 'tool_execution_started'));
      assert.equal((await call(app.url, 'GET', `/sessions/${id}`)).body.message_count, 0);
    });

    it('timeouts, failing commands, bad answers and config_invalid are hook_failed; guardrails fail closed', async (t) => {
      const { app, command } = await setup(t, opts);
      const entries = [
        { id: 'slow', point: 'run_started', timeout_ms: 300, runtime: command('hang.mjs') },
        { id: 'crash', point: 'run_started', runtime: command('fail.mjs') },
        { id: 'garbage', point: 'run_started', runtime: command('answer.mjs', { HOOK_ANSWER: '{"decision":{"decision":"maybe"}}' }) },
        { id: 'unknown', point: 'run_started', runtime: { type: 'in_process', name: 'no_such_builtin' } },
      ];
      const res = await call(app.url, 'POST', '/sessions', { prompt: 'x', hooks_override: { entries } });
      assert.equal(res.status, 200, 'observe hooks never stop the run');
      const failed = (await events(app.url, res.body.session_id)).filter((e) => e.type === 'hook_failed');
      assert.deepEqual(
        failed.map((e) => [e.hook_id, (e.reason as { reason_code: string }).reason_code]),
        [
          ['slow', 'timeout'],
          ['crash', 'execution_failed'],
          ['garbage', 'execution_failed'],
          ['unknown', 'config_invalid'],
        ],
      );
      assert.deepEqual(failed[0].reason, { reason_code: 'timeout', timeout_ms: 300 });
      assert.match((failed[1].reason as { message: string }).message, /exited with 3: boom/);
      const closed = await call(app.url, 'POST', '/sessions', {
        prompt: 'x',
        hooks_override: { entries: [{ ...entries[2], capability: 'guardrail' }] },
      });
      assert.equal(closed.status, 403);
      assert.equal(closed.body.details.reason_code, 'runtime_error');
    });

    it('background hooks never delay the turn and are bounded by background_max_concurrency', async (t) => {
      const { app, server } = await setup(t, opts);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
      const id = created.body.session_id;
      await configure(app, { background_max_concurrency: 1 });
      server.hold = deferred();
      const sse = await SseClient.open(app.url, `/sessions/${id}/events`);
      t.after(() => sse.close());
      const bg = (hid: string) => ({ id: hid, point: 'run_completed', mode: 'background', runtime: { type: 'http', url: server.url } });
      const res = await call(app.url, 'POST', `/sessions/${id}/messages`, {
        session_id: id,
        prompt: 'go',
        hooks_override: { entries: [bg('bg-1'), bg('bg-2')] },
      });
      assert.equal(res.status, 200, 'answered while the background hook is still held');
      await server.received(1);
      await sse.until((c) => c.envelopes().some((e) => e.payload.type === 'hook_failed' && e.payload.hook_id === 'bg-2'), 'bg-2 refused');
      const refused = sse.envelopes().find((e) => e.payload.hook_id === 'bg-2')!.payload;
      assert.match(String((refused.reason as { message: string }).message), /background hook limit \(1\)/);
      assert.ok(!sse.envelopes().some((e) => e.payload.type === 'hook_completed'));
      server.hold.resolve();
      await sse.until(
        (c) => c.envelopes().some((e) => e.payload.type === 'hook_completed' && e.payload.hook_id === 'bg-1'),
        'bg-1 completed',
      );
      assert.equal(server.payloads.length, 1);
    });

    it('an interrupt ends a foreground hook in flight at once: the turn answers cancelled (499)', async (t) => {
      const { app, server } = await setup(t, opts);
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
      const id = created.body.session_id;
      server.hold = deferred();
      t.after(() => server.hold?.resolve());
      const pending = call(app.url, 'POST', `/sessions/${id}/messages`, {
        session_id: id,
        prompt: 'slow hook',
        hooks_override: {
          entries: [{ id: 'held', point: 'pre_llm_request', capability: 'guardrail', runtime: { type: 'http', url: server.url } }],
        },
      });
      await server.received(1);
      assert.equal((await call(app.url, 'POST', `/sessions/${id}/interrupt`)).body.interrupted, true);
      const res = await pending;
      assert.equal(res.status, 499, JSON.stringify(res.body));
      assert.equal(res.body.code, 'REQUEST_CANCELLED');
      const ev = await events(app.url, id);
      assert.ok(!ev.some((e) => e.type === 'hook_denied'), 'a stopped run is not a hook verdict');
      assert.equal(app.provider.requests.length, 1, 'no model call for the stopped turn');
    });

    it('a payload over payload_max_bytes is refused without calling the hook', async (t) => {
      const { app, server } = await setup(t, opts);
      await configure(app, { payload_max_bytes: 300 });
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'x'.repeat(2000),
        hooks_override: { entries: [{ id: 'big', point: 'pre_llm_request', runtime: { type: 'http', url: server.url } }] },
      });
      assert.equal(res.status, 200);
      assert.equal(server.payloads.length, 0);
      const failed = (await events(app.url, res.body.session_id)).find((e) => e.type === 'hook_failed');
      assert.match(String((failed?.reason as { message: string }).message), /exceeds hooks.payload_max_bytes \(300\)/);
    });

    it('the built-in deny_tools guardrail and a malformed hooks_override (400)', async (t) => {
      const { app } = await setup(t, opts, [{ tool_calls: [{ name: 'shell', args: {} }] }]);
      const res = await call(app.url, 'POST', '/sessions', {
        prompt: 'x',
        hooks_override: {
          entries: [
            {
              id: 'no-shell',
              point: 'pre_tool_execution',
              capability: 'guardrail',
              runtime: { type: 'in_process', name: 'deny_tools', config: { tools: ['shell'] } },
            },
          ],
        },
      });
      assert.equal(res.status, 403);
      assert.match(res.body.details.message, /tool 'shell' is not allowed/);
      const bad = await call(app.url, 'POST', '/sessions', {
        prompt: 'x',
        hooks_override: { entries: [{ id: 'x', point: 'someday', runtime: { type: 'in_process', name: 'allow' } }] },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.code, 'BAD_REQUEST');
    });
  });
}

describe('hooks from config.toml', () => {
  it('a [[hooks.entries]] table written in config.toml applies after a restart', async (t) => {
    const dir = await tmpDir('warren-hooks-toml-');
    t.after(() => dir.cleanup());
    const command = await writeHookScripts(dir.path);
    const start = () =>
      createApp({
        host: '127.0.0.1',
        port: 0,
        stateRoot: dir.path,
        contextRoot: dir.path,
        realm: 'hooked',
        logger: pino({ level: 'silent' }),
        env: { PATH: process.env.PATH },
      });
    const first = await start();
    await first.close();
    const file = join(dir.path, 'hooked', 'config.toml');
    const doc = parse(await readFile(file, 'utf8')) as Record<string, unknown>;
    doc.providers = { scripted: { mode: 'echo' } };
    doc.hooks = {
      default_timeout_ms: 60_000,
      entries: [
        { id: 'from-file', point: 'pre_llm_request', capability: 'guardrail', runtime: command('answer.mjs', { HOOK_ANSWER: DENY }) },
      ],
    };
    await writeFile(file, stringify(doc));
    const app = await start();
    t.after(() => app.close());
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'x', provider: 'scripted' });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.details.hook_id, 'from-file');
    const cfg = await call(app.url, 'GET', '/config');
    assert.equal(cfg.body.config.hooks.entries[0].runtime.type, 'command');
  });
});
