import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ServiceError } from '../../contracts/errors.ts';
import { createProviderRegistry, type ProviderRegistryOptions } from '../../providers/registry.ts';
import { createScriptedProvider } from '../../providers/scripted.ts';
import { baseRequest, run } from './adapter-suite.ts';
import { frame, sseReply, startFakeVendor } from './fake-vendor.ts';

const registry = (t: import('node:test').TestContext, o: Partial<ProviderRegistryOptions> = {}) => {
  const r = createProviderRegistry({ env: {}, config: {}, sleep: async () => {}, ...o });
  t.after(() => r.close());
  return r;
};
const isBadRequest = (pattern: RegExp) => (e: unknown) => e instanceof ServiceError && e.code === 'BAD_REQUEST' && pattern.test(e.message);

const anthropicOk = sseReply([
  frame({ type: 'message_start', message: { usage: { input_tokens: 1, output_tokens: 1 } } }, 'message_start'),
  frame({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'),
  frame({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hi' } }, 'content_block_delta'),
  frame({ type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } }, 'message_delta'),
  frame({ type: 'message_stop' }, 'message_stop'),
]);
const chatOk = sseReply([frame({ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }), frame('[DONE]')]);

describe('provider registry: resolve', () => {
  it('uses the global default model and its provider when nothing is given', (t) => {
    const r = registry(t).resolve(null, null);
    assert.deepEqual([r.name, r.model, r.provider.name], ['openai', 'gpt-5.6-sol', 'openai']);
  });

  it('infers the provider from a catalogued or prefixed model', (t) => {
    const reg = registry(t);
    assert.equal(reg.resolve('claude-opus-5').name, 'anthropic');
    assert.equal(reg.resolve('gemini-9-ultra').name, 'gemini');
    assert.equal(reg.resolve('o3').name, 'openai');
  });

  it('lets an explicit provider win, and fills in that provider’s default model', (t) => {
    const reg = registry(t, { config: { providers: { self_hosted: { base_url: 'http://127.0.0.1:1', default_model: 'llama3' } } } });
    assert.deepEqual([reg.resolve('gpt-5.5', 'self_hosted').name, reg.resolve('gpt-5.5', 'self_hosted').model], ['self_hosted', 'gpt-5.5']);
    assert.equal(reg.resolve(null, 'anthropic').model, 'claude-opus-5');
    assert.equal(reg.resolve('', 'gemini').model, 'gemini-3.5-flash');
    assert.equal(reg.resolve(undefined, 'self_hosted').model, 'llama3');
    assert.equal(reg.resolve(null, 'scripted').name, 'scripted');
  });

  it('rejects an unknown provider and an uninferrable model with BAD_REQUEST', (t) => {
    const reg = registry(t);
    assert.throws(() => reg.resolve('x', 'vendor_z'), isBadRequest(/unknown provider 'vendor_z'/));
    assert.throws(() => reg.resolve('llama3'), isBadRequest(/model 'llama3' requires an explicit provider or a catalogued model/));
    assert.throws(() => reg.resolve(null, 'other'), isBadRequest(/requires a model/));
  });
});

describe('provider registry: building providers', () => {
  it('builds lazily and fails at call time with PROVIDER_ERROR naming the missing key', async (t) => {
    const reg = registry(t, { config: { providers: { gemini: { api_key_env: 'MY_GEMINI_API_KEY' } } } });
    const anthropic = reg.get('anthropic');
    assert.equal(reg.get('anthropic'), anthropic, 'one instance per name');
    for (const [name, variable] of [
      ['anthropic', 'ANTHROPIC_API_KEY'],
      ['openai', 'OPENAI_API_KEY'],
      ['gemini', 'MY_GEMINI_API_KEY'],
    ] as const) {
      const out = await run(reg.get(name));
      assert.equal(out.error?.code, 'PROVIDER_ERROR', name);
      assert.equal(out.error?.message, `${variable} is not set`);
    }
  });

  it('reads the key and base URL from env, with config base_url taking precedence', async (t) => {
    const fromEnv = await startFakeVendor([anthropicOk]);
    const fromConfig = await startFakeVendor([anthropicOk]);
    t.after(() => fromEnv.close());
    t.after(() => fromConfig.close());
    const env = { ANTHROPIC_API_KEY: 'sk-env', ANTHROPIC_BASE_URL: fromEnv.url };
    const viaEnv = await run(registry(t, { env }).get('anthropic'));
    assert.equal(viaEnv.error, undefined);
    assert.equal(fromEnv.requests[0].headers['x-api-key'], 'sk-env');
    await run(registry(t, { env, config: { providers: { anthropic: { base_url: fromConfig.url } } } }).get('anthropic'));
    assert.equal(fromConfig.requests.length, 1);
    assert.equal(fromEnv.requests.length, 1);
  });

  it('falls back to GOOGLE_API_KEY for gemini', async (t) => {
    const vendor = await startFakeVendor([
      sseReply([frame({ candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason: 'STOP' }] })]),
    ]);
    t.after(() => vendor.close());
    const out = await run(registry(t, { env: { GOOGLE_API_KEY: 'g', GEMINI_BASE_URL: vendor.url } }).get('gemini'));
    assert.equal(out.error, undefined);
    assert.equal(vendor.requests[0].headers['x-goog-api-key'], 'g');
  });

  it('calls a self_hosted server at its configured base_url without a key', async (t) => {
    const vendor = await startFakeVendor([chatOk]);
    t.after(() => vendor.close());
    const reg = registry(t, { config: { providers: { self_hosted: { base_url: `${vendor.url}/v1` } } } });
    const { provider } = reg.resolve('llama3', 'self_hosted');
    const out = await run(provider, baseRequest({ model: 'llama3' }));
    assert.equal(out.error, undefined);
    assert.equal(vendor.requests[0].url, '/v1/chat/completions');
    assert.equal(vendor.requests[0].headers.authorization, undefined);
  });

  it('fails self_hosted calls with PROVIDER_ERROR when base_url is not configured', async (t) => {
    const out = await run(registry(t).resolve('llama3', 'self_hosted').provider);
    assert.equal(out.error?.code, 'PROVIDER_ERROR');
    assert.match(out.error!.message, /\[providers\.self_hosted\] base_url is not set/);
  });

  it('uses overrides for any name, and the [providers.scripted] section for scripted', async (t) => {
    const fake = createScriptedProvider([{ text: 'from override' }]);
    const reg = registry(t, { overrides: { openai: fake }, config: { providers: { scripted: { replies: [{ text: 'from config' }] } } } });
    const { provider } = reg.resolve(null, null);
    assert.equal(provider, fake);
    assert.deepEqual((await run(provider)).result?.blocks, [{ block_type: 'text', data: { text: 'from override' } }]);
    assert.deepEqual((await run(reg.get('scripted'))).result?.blocks, [{ block_type: 'text', data: { text: 'from config' } }]);
  });
});
