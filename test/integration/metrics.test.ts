// GET /metrics scraped after a known workload: the figures match what the test did (turns by outcome,
// model calls, tokens, tools, resident actors by state, SSE subscribers, store commits), labels stay
// bounded (no session id anywhere), and two apps in one process keep separate registries.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { parseProm, sumOf } from '../helpers/prom-text.ts';
import { openEvents } from '../helpers/sse-client.ts';
import { frame, jsonError, sseReply, startFakeVendor } from '../providers/fake-vendor.ts';

async function scrape(base: string): Promise<{ text: string; contentType: string }> {
  const res = await fetch(`${base}/metrics`);
  assert.equal(res.status, 200);
  return { text: await res.text(), contentType: res.headers.get('content-type') ?? '' };
}

describe('GET /metrics', () => {
  it('counts turns by outcome, model calls, tokens, tools, actors, subscribers and commits', async (t) => {
    const app = await startApp(t, [
      { tool_calls: [{ name: 'not_offered', args: {} }], usage: { input_tokens: 10, output_tokens: 5 } },
      { text: 'done', usage: { input_tokens: 20, output_tokens: 7 } },
      { error: { code: 'AGENT_ERROR', message: 'scripted failure' } },
      { text: 'ok', usage: { input_tokens: 3, output_tokens: 4 } },
    ]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'one', provider: 'scripted' });
    assert.equal(created.status, 200);
    const id: string = created.body.session_id;
    const failed = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
    assert.equal(failed.status, 500);
    const ok = await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'three' });
    assert.equal(ok.status, 200);
    const sse = await openEvents(app.url, id);
    t.after(() => sse.close());

    const { text, contentType } = await scrape(app.url);
    assert.match(contentType, /^text\/plain/);
    assert.ok(!text.includes(id), 'no session id in any label');
    const s = parseProm(text);
    assert.equal(sumOf(s, 'warren_turns_total', { provider: 'scripted', outcome: 'succeeded' }), 2);
    assert.equal(sumOf(s, 'warren_turns_total', { provider: 'scripted', outcome: 'failed' }), 1);
    assert.equal(sumOf(s, 'warren_turn_duration_seconds_count'), 3);
    assert.equal(sumOf(s, 'warren_provider_call_duration_seconds_count', { provider: 'scripted' }), 3);
    assert.equal(sumOf(s, 'warren_tokens_total', { provider: 'scripted', direction: 'input' }), 33);
    assert.equal(sumOf(s, 'warren_tokens_total', { provider: 'scripted', direction: 'output' }), 16);
    assert.equal(sumOf(s, 'warren_tool_calls_total', { outcome: 'error' }), 1);
    assert.equal(sumOf(s, 'warren_actors_resident', { kind: 'session' }), 1);
    assert.equal(sumOf(s, 'warren_actors', { kind: 'session', state: 'idle' }), 1);
    assert.equal(sumOf(s, 'warren_actors', { kind: 'session', state: 'running' }), 0);
    assert.equal(sumOf(s, 'warren_sse_subscribers', { stream: 'session' }), 1);
    assert.equal(sumOf(s, 'warren_sse_subscribers', { stream: 'inspect' }), 0);
    assert.equal(sumOf(s, 'warren_mailbox_depth', { kind: 'session' }), 0);
    // Two turns committed rows; every commit is timed by backend and kind.
    assert.equal(sumOf(s, 'warren_store_commit_duration_seconds_count', { backend: 'lmdb', kind: 'turn' }), 2);
    assert.ok(sumOf(s, 'warren_store_commit_duration_seconds_count', { backend: 'lmdb', kind: 'state' }) >= 1);
    assert.ok(sumOf(s, 'process_cpu_seconds_total') > 0);
    assert.ok(sumOf(s, 'process_resident_memory_bytes') > 0);
    assert.equal(sumOf(s, 'warren_provider_retries_total'), 0);
  });

  it('keeps one registry per app: a second app in the same process starts from zero', async (t) => {
    const a = await startApp(t);
    const b = await startApp(t);
    assert.equal((await call(a.url, 'POST', '/sessions', { prompt: 'x', provider: 'scripted' })).status, 200);
    const sa = parseProm((await scrape(a.url)).text);
    const sb = parseProm((await scrape(b.url)).text);
    assert.equal(sumOf(sa, 'warren_turns_total'), 1);
    assert.equal(sumOf(sb, 'warren_turns_total'), 0);
    assert.equal(sumOf(sb, 'warren_actors_resident', { kind: 'session' }), 0);
  });

  it('counts provider retries by provider and failure kind (a real wire adapter against a loopback vendor)', async (t) => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      frame({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm-1', choices: [{ index: 0, delta, finish_reason: finish }] });
    const vendor = await startFakeVendor([
      jsonError(500, { error: { message: 'overloaded', type: 'server_error', code: null } }),
      sseReply([
        chunk({ role: 'assistant', content: 'recovered' }),
        chunk({}, 'stop'),
        frame({
          id: 'c1',
          object: 'chat.completion.chunk',
          choices: [],
          usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 },
        }),
        frame('[DONE]'),
      ]),
    ]);
    t.after(() => vendor.close());
    const app = await startApp(t);
    const patched = await call(app.url, 'PATCH', '/config', {
      retry: { initial_delay_ms: 1, max_delay_ms: 2 },
      providers: { self_hosted: { base_url: `${vendor.url}/v1`, default_model: 'm-1' } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const turn = await call(app.url, 'POST', '/sessions', { prompt: 'retry me', provider: 'self_hosted', model: 'm-1' });
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(turn.body.text, 'recovered');
    const s = parseProm((await scrape(app.url)).text);
    assert.equal(sumOf(s, 'warren_provider_retries_total', { provider: 'self_hosted' }), 1);
    assert.equal(sumOf(s, 'warren_turns_total', { provider: 'self_hosted', outcome: 'succeeded' }), 1);
    assert.equal(sumOf(s, 'warren_tokens_total', { provider: 'self_hosted', direction: 'input' }), 4);
  });
});
