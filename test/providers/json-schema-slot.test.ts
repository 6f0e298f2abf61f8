import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { jsonSchemaSlot, lowerSchema } from '../../providers/json-schema-slot.ts';

const SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, pattern: '^[a-z]+$', default: 'x' },
    tags: { type: 'array', items: { type: 'string' }, minItems: 2, uniqueItems: true },
    meta: { type: 'object', additionalProperties: { type: 'string' } },
    either: { not: { type: 'null' } },
  },
  required: ['name'],
};

const paths = (p: ReturnType<typeof lowerSchema>) => p.warnings.map((w) => w.path);

describe('json schema slots', () => {
  it('names the native slot of each wire; scripted has none (prompt-only)', () => {
    assert.deepEqual(
      ['anthropic', 'openai', 'gemini', 'self_hosted', 'other', 'scripted'].map((p) => jsonSchemaSlot(p as never)),
      ['output_config.format', 'text.format', 'generationConfig.responseJsonSchema', 'response_format', 'response_format', null],
    );
  });

  it('anthropic: drops numeric/string/array constraints it cannot express and closes objects', () => {
    const r = lowerSchema('anthropic', SCHEMA, false);
    assert.deepEqual(paths(r), [
      '/properties/name/minLength',
      '/properties/tags/minItems',
      '/properties/tags/uniqueItems',
      '/properties/meta/additionalProperties',
      '/properties/either/not',
    ]);
    const s = r.schema as { properties: Record<string, Record<string, unknown>>; additionalProperties: unknown; $schema?: unknown };
    assert.equal(s.$schema, undefined);
    assert.equal(s.additionalProperties, false);
    assert.equal(s.properties.name.pattern, '^[a-z]+$');
    assert.equal(s.properties.meta.additionalProperties, false);
    assert.deepEqual(s.properties.meta.properties, {});
  });

  it('openai strict: closed objects, every property required (with a warning), composition it lacks dropped', () => {
    const r = lowerSchema('openai', SCHEMA, true);
    assert.deepEqual(paths(r), ['/properties/meta/additionalProperties', '/properties/either/not', '/required']);
    assert.deepEqual((r.schema as { required: string[] }).required, ['name', 'tags', 'meta', 'either']);
    assert.deepEqual(lowerSchema('openai', { type: 'object', properties: { a: { type: 'string', minLength: 2 } } }, false).warnings, []);
  });

  it('gemini: keeps only the supported subset; annotations go silently', () => {
    const r = lowerSchema('gemini', SCHEMA, false);
    assert.deepEqual(paths(r), [
      '/properties/name/minLength',
      '/properties/name/pattern',
      '/properties/tags/uniqueItems',
      '/properties/either/not',
    ]);
    assert.equal((r.schema as { properties: { name: Record<string, unknown> } }).properties.name.default, undefined);
  });

  it('chat completions servers take the schema as it is', () => {
    const r = lowerSchema('self_hosted', SCHEMA, true);
    assert.deepEqual(r.warnings, []);
    assert.equal((r.schema as { properties: { name: { minLength: number } } }).properties.name.minLength, 1);
  });
});
