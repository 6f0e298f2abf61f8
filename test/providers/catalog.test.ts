import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CATALOG_CONTRACT_VERSION,
  defaultModel,
  findModel,
  inferProvider,
  modelCatalog,
  modelCallTimeoutMs,
} from '../../providers/catalog.ts';

describe('model catalog', () => {
  it('lists anthropic, gemini, openai in order with their default models', () => {
    const c = modelCatalog();
    assert.equal(c.contract_version, CATALOG_CONTRACT_VERSION);
    assert.equal(typeof c.contract_version, 'string');
    assert.deepEqual(
      c.providers.map((p) => [p.provider, p.default_model_id]),
      [
        ['anthropic', 'claude-opus-5'],
        ['gemini', 'gemini-3.5-flash'],
        ['openai', 'gpt-5.6-sol'],
      ],
    );
    assert.deepEqual(
      c.providers.map((p) => p.models.length),
      [9, 3, 10],
    );
    for (const p of c.providers)
      assert.ok(
        p.models.some((m) => m.id === p.default_model_id),
        p.provider,
      );
  });

  it('carries the profile flags of wire-notes section 3', () => {
    const sonnet = findModel('claude-sonnet-4-6')!;
    assert.equal(sonnet.provider, 'anthropic');
    assert.equal(sonnet.context_window, 1_000_000);
    assert.equal(sonnet.max_output_tokens, 64_000);
    assert.deepEqual(
      { ...sonnet.profile, params_schema: undefined },
      {
        model_family: 'claude-sonnet-4',
        supports_temperature: true,
        supports_thinking: true,
        supports_reasoning: false,
        supports_web_search: true,
        vision: true,
        image_tool_results: true,
        inline_video: false,
        realtime: false,
        params_schema: undefined,
      },
    );
    assert.equal(findModel('claude-opus-5')!.profile.supports_temperature, false);
    const gpt = findModel('gpt-5.6-sol')!.profile;
    assert.equal(gpt.supports_reasoning, true);
    assert.equal(gpt.supports_temperature, false);
    assert.equal(findModel('gpt-5.3-codex')!.profile.supports_web_search, false);
    const rt = findModel('gpt-realtime-2')!.profile;
    assert.equal(rt.realtime, true);
    assert.equal(rt.supports_temperature, true);
    assert.equal(findModel('gemini-3.5-flash')!.profile.inline_video, true);
    assert.equal(findModel('gpt-5.6')!.display_name, 'GPT-5.6 Sol');
    assert.equal(findModel('gpt-5.4-mini')!.max_output_tokens, 16_384);
  });

  it('hands out copies, so callers cannot change the catalog', () => {
    modelCatalog().providers[0].models[0].display_name = 'changed';
    assert.equal(modelCatalog().providers[0].models[0].display_name, 'Claude Fable 5');
  });

  it('defaults to gpt-5.6-sol and knows per-model call timeouts', () => {
    assert.equal(defaultModel(), 'gpt-5.6-sol');
    assert.equal(modelCallTimeoutMs('claude-haiku-4-5'), 60_000);
    assert.equal(modelCallTimeoutMs('gemini-3.1-pro-preview'), 600_000);
    assert.equal(modelCallTimeoutMs('gpt-5.5-pro'), 7_200_000);
    assert.equal(modelCallTimeoutMs('unknown'), 600_000);
  });
});

describe('inferProvider', () => {
  it('uses the catalog first, then name prefixes', () => {
    const cases: Array<[string, string | undefined]> = [
      ['claude-opus-5', 'anthropic'],
      ['claude-3-haiku', 'anthropic'],
      ['gemini-3.5-flash', 'gemini'],
      ['gemini-2.0-pro', 'gemini'],
      ['gpt-5.6-sol', 'openai'],
      ['gpt-4o', 'openai'],
      ['o1', 'openai'],
      ['o3-mini', 'openai'],
      ['o4-mini', 'openai'],
      ['llama3.2', undefined],
      ['o5', undefined],
      ['orca', undefined],
      ['', undefined],
    ];
    for (const [model, provider] of cases) assert.equal(inferProvider(model), provider, model);
  });
});
