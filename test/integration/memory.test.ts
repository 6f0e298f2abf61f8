// Semantic memory through the real server: compaction feeds the session's memory store, and a later
// memory_search finds a fact compaction removed from the context, also after a restart; hybrid search
// over a loopback embeddings endpoint (OpenAI-compatible and Gemini wires); injected context and
// compaction summaries are never indexed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import pino from 'pino';
import { createApp, type App } from '../../app.ts';
import { createScriptedProvider, type ScriptedProvider, type ScriptedReply } from '../../providers/scripted.ts';
import type { ProviderRequest } from '../../providers/provider.ts';
import { call } from '../helpers/app.ts';
import { isSummaryRequest } from '../helpers/compaction-script.ts';
import { startFakeEmbeddings } from '../helpers/fake-embeddings.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const FACT = 'The vault code is AZURE-FALCON-7731.';
const FILLER = 'lorem ipsum dolor sit amet '.repeat(30);

function script(req: ProviderRequest): ScriptedReply {
  if (isSummaryRequest(req)) return { text: 'SUMMARY: the user shared several notes.' };
  const last = req.messages.at(-1)!;
  if (last.role === 'tool_results') return { text: `recalled: ${last.results[0].content}` };
  if (last.role === 'user' && typeof last.content === 'string' && last.content.startsWith('RECALL')) {
    return { tool_calls: [{ name: 'memory_search', args: { query: last.content.slice('RECALL '.length), limit: 3 } }] };
  }
  return { text: 'noted' };
}

async function boot(t: TestContext, stateRoot: string, provider: ScriptedProvider): Promise<App> {
  const app = await createApp({
    host: '127.0.0.1',
    port: 0,
    stateRoot,
    contextRoot: stateRoot,
    realm: 'mem-realm',
    logger: pino({ level: 'silent' }),
    providerOverrides: { openai: provider, anthropic: provider, gemini: provider, scripted: provider },
  });
  t.after(() => app.close());
  return app;
}

async function turn(app: App, id: string, prompt: string): Promise<{ status: number; body: { text: string } }> {
  return call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
}

/** Drives a memory session until its first compaction; returns its id. */
async function compactedSession(app: App, provider: ScriptedProvider, extra: Record<string, unknown> = {}): Promise<string> {
  const r = await call(app.url, 'POST', '/sessions', {
    prompt: `${FACT} ${FILLER}`,
    max_tokens: 64,
    enable_memory: true,
    injected_context: ['INJECTED-SECRET-NEVER-INDEXED'],
    ...extra,
  });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  const id = r.body.session_id as string;
  for (let i = 1; i < 20 && !provider.requests.some(isSummaryRequest); i++)
    assert.equal((await turn(app, id, `note ${i} ${FILLER}`)).status, 200);
  assert.ok(provider.requests.some(isSummaryRequest), 'compaction fired');
  const history = JSON.stringify((await call(app.url, 'GET', `/sessions/${id}/history`)).body.messages);
  assert.ok(!history.includes('AZURE-FALCON'), 'the fact left the context');
  return id;
}

function recalled(text: string): { results: Array<{ text: string; role: string }>; mode: string } {
  return JSON.parse(text.slice('recalled: '.length));
}

describe('semantic memory', () => {
  it('memory_search finds a fact compaction removed, full-text only, and again after a restart', async (t) => {
    const dir = await tmpDir('warren-mem-');
    t.after(() => dir.cleanup());
    const provider = createScriptedProvider(script);
    const app = await boot(t, dir.path, provider);
    await call(app.url, 'PATCH', '/config', { compaction: { auto_compact_threshold: 1500 } });
    const caps = (await call(app.url, 'GET', '/capabilities')).body.capabilities.find((c: { id: string }) => c.id === 'memory_store');
    assert.equal(caps.status, 'Available');
    assert.match(caps.description, /full-text search only/);
    const id = await compactedSession(app, provider);
    const ledger = (await call(app.url, 'GET', `/sessions/${id}/ledger?limit=10000`)).body.events as Array<{
      payload: { type: string; documents?: number };
    }>;
    assert.ok((ledger.find((e) => e.payload.type === 'memory_indexed')?.payload.documents ?? 0) > 0);
    const r = await turn(app, id, 'RECALL vault code');
    assert.equal(r.status, 200);
    const found = recalled(r.body.text);
    assert.equal(found.mode, 'full_text');
    assert.ok(found.results[0].text.includes('AZURE-FALCON-7731'), JSON.stringify(found.results[0]));
    assert.ok(!JSON.stringify(found).includes('INJECTED-SECRET'), 'injected context is never indexed');
    const none = recalled((await turn(app, id, 'RECALL SUMMARY several')).body.text);
    assert.ok(!JSON.stringify(none).includes('SUMMARY:'), 'compaction summaries are never indexed');
    await app.close();
    const again = await boot(t, dir.path, provider);
    const after = recalled((await turn(again, id, 'RECALL vault code')).body.text);
    assert.ok(after.results[0].text.includes('AZURE-FALCON-7731'), 'durable across restart');
  });

  it('sessions without enable_memory get no memory_search tool and index nothing', async (t) => {
    const dir = await tmpDir('warren-mem-off-');
    t.after(() => dir.cleanup());
    const provider = createScriptedProvider(script);
    const app = await boot(t, dir.path, provider);
    await call(app.url, 'PATCH', '/config', { compaction: { auto_compact_threshold: 1500 } });
    const id = await compactedSession(app, provider, { enable_memory: false });
    assert.ok(provider.requests.every((r) => !r.tools.some((s) => s.name === 'memory_search')));
    const ledger = (await call(app.url, 'GET', `/sessions/${id}/ledger?limit=10000`)).body.events as Array<{ payload: { type: string } }>;
    assert.equal(ledger.filter((e) => e.payload.type === 'memory_indexed').length, 0);
  });

  for (const api of ['openai', 'gemini'] as const) {
    it(`searches hybrid (full-text + vectors) with a ${api} embeddings endpoint`, async (t) => {
      const dir = await tmpDir('warren-mem-emb-');
      t.after(() => dir.cleanup());
      const fake = await startFakeEmbeddings();
      t.after(() => fake.close());
      const provider = createScriptedProvider(script);
      const app = await boot(t, dir.path, provider);
      await call(app.url, 'PATCH', '/config', {
        compaction: { auto_compact_threshold: 1500 },
        memory: { embeddings: { api, base_url: fake.url, model: 'embed-small' } },
      });
      const caps = (await call(app.url, 'GET', '/capabilities')).body.capabilities.find((c: { id: string }) => c.id === 'memory_store');
      assert.match(caps.description, /hybrid/);
      const id = await compactedSession(app, provider);
      const found = recalled((await turn(app, id, 'RECALL vault code')).body.text);
      assert.equal(found.mode, 'hybrid');
      assert.ok(found.results[0].text.includes('AZURE-FALCON-7731'));
      assert.ok(fake.calls[api] > 0);
    });
  }

  it('an embeddings endpoint at a denied address is never called: memory falls back to full text', async (t) => {
    const dir = await tmpDir('warren-mem-deny-');
    t.after(() => dir.cleanup());
    const fake = await startFakeEmbeddings();
    t.after(() => fake.close());
    const provider = createScriptedProvider(script);
    const app = await boot(t, dir.path, provider);
    const patched = await call(app.url, 'PATCH', '/config', {
      compaction: { auto_compact_threshold: 1500 },
      network: { deny_cidrs: ['127.0.0.0/8', '::1/128'] },
      memory: { embeddings: { api: 'openai', base_url: fake.url, model: 'embed-small' } },
    });
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    const id = await compactedSession(app, provider);
    const found = recalled((await turn(app, id, 'RECALL vault code')).body.text);
    assert.ok(found.results[0].text.includes('AZURE-FALCON-7731'), 'full-text search still finds it');
    assert.equal(fake.calls.openai, 0, 'the denied endpoint was never reached');
  });
});
