// The default model follows the credentials present: a turn naming no model or provider runs on the
// catalog default of the first configured provider (anthropic, gemini, openai, self_hosted); with none
// configured, one error names every variable that would do. Real server, real anthropic wire (loopback).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { createApp } from '../../app.ts';
import { defaultModelFor } from '../../providers/catalog.ts';
import { createProviderRegistry, type ProviderConfigSection } from '../../providers/registry.ts';
import { call } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { frame, sseReply, startFakeVendor, type FakeRequest } from '../providers/fake-vendor.ts';

const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);
const anthropicHello = [
  ev({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'm',
      content: [],
      stop_reason: null,
      usage: { input_tokens: 5, output_tokens: 1 },
    },
  }),
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'hello back' } }),
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 2 } }),
  ev({ type: 'message_stop' }),
];

describe('default provider', () => {
  it('with only ANTHROPIC_API_KEY set, a bare prompt runs on anthropic with its catalog default', async (t) => {
    const seen: FakeRequest[] = [];
    const vendor = await startFakeVendor([
      (req, res, raw) => {
        seen.push(req);
        return sseReply(anthropicHello)(req, res, raw);
      },
    ]);
    t.after(() => vendor.close());
    const dir = await tmpDir('warren-default-');
    const app = await createApp({
      host: '127.0.0.1',
      port: 0,
      stateRoot: dir.path,
      contextRoot: dir.path,
      realm: 'default-provider',
      logger: pino({ level: 'silent' }),
      env: { ANTHROPIC_API_KEY: 'sk-ant-test', ANTHROPIC_BASE_URL: vendor.url },
    });
    t.after(async () => {
      await app.close();
      await dir.cleanup();
    });
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.text, 'hello back');
    assert.equal(seen.length, 1, 'one call reached the anthropic fake');
    assert.equal((seen[0].body as { model?: string }).model, defaultModelFor('anthropic'));
    assert.equal(seen[0].headers['x-api-key'], 'sk-ant-test');
  });

  it('with no provider configured, the error names every variable that would do', async (t) => {
    const dir = await tmpDir('warren-default-');
    const app = await createApp({
      host: '127.0.0.1',
      port: 0,
      stateRoot: dir.path,
      contextRoot: dir.path,
      realm: 'no-provider',
      logger: pino({ level: 'silent' }),
      env: {},
    });
    t.after(async () => {
      await app.close();
      await dir.cleanup();
    });
    const res = await call(app.url, 'POST', '/sessions', { prompt: 'hello' });
    assert.equal(res.status, 502);
    for (const name of ['ANTHROPIC_API_KEY', 'GEMINI_API_KEY', 'OPENAI_API_KEY', 'self_hosted', '"provider":"scripted"'])
      assert.ok(String(res.body.error).includes(name), `${name} named in: ${res.body.error}`);
  });

  it('picks the first configured provider in the order anthropic, gemini, openai, self_hosted', () => {
    const pick = (env: NodeJS.ProcessEnv, config: Record<string, ProviderConfigSection> = {}) =>
      createProviderRegistry({ env, config: { providers: config } }).resolve(null, null);
    assert.equal(pick({ OPENAI_API_KEY: 'o', GEMINI_API_KEY: 'g' }).name, 'gemini');
    assert.equal(pick({ OPENAI_API_KEY: 'o' }).name, 'openai');
    assert.equal(pick({ GOOGLE_API_KEY: 'g' }).name, 'gemini');
    assert.equal(pick({ OPENAI_API_KEY: 'o', ANTHROPIC_API_KEY: 'a' }).model, defaultModelFor('anthropic'));
    const local = pick({}, { self_hosted: { base_url: 'http://127.0.0.1:11434/v1', default_model: 'llama3' } });
    assert.deepEqual([local.name, local.model], ['self_hosted', 'llama3']);
    // An explicit model or provider still wins.
    assert.equal(createProviderRegistry({ env: { ANTHROPIC_API_KEY: 'a' }, config: {} }).resolve('gpt-5.6-sol', null).name, 'openai');
    assert.equal(createProviderRegistry({ env: { ANTHROPIC_API_KEY: 'a' }, config: {} }).resolve(null, 'scripted').name, 'scripted');
  });
});
