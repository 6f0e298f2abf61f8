// providers/json-schema-slot.ts: what each vendor's native JSON-schema slot can express. Anthropic
// (`output_config.format`), OpenAI Responses (`text.format`), Gemini (`responseJsonSchema`) and Chat
// Completions servers (`response_format`) each accept a subset of JSON Schema; `lowerSchema` removes
// what a slot cannot hold and reports each removal as a warning. The full schema is still checked by
// Warren after the reply (actors/turn-features/extraction.ts), so a removal loosens only the hint.
import type { SchemaWarning } from '../contracts/turn-features.ts';
import type { ProviderName } from '../contracts/session.ts';

type Json = Record<string, unknown>;

/** Keywords that describe rather than constrain: dropped silently where a slot does not take them. */
const ANNOTATIONS = new Set(['$schema', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly']);

/** Keywords a slot cannot express (anthropic, openai) or the only ones it can (gemini). */
const ANTHROPIC_UNSUPPORTED = new Set([
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
  'maxItems',
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'dependentRequired',
  'dependentSchemas',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'minContains',
  'maxContains',
  'uniqueItems',
]);
const OPENAI_UNSUPPORTED = new Set([
  'patternProperties',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
  'dependentRequired',
  'dependentSchemas',
  'not',
  'if',
  'then',
  'else',
  'allOf',
  'contains',
  'minContains',
  'maxContains',
]);
const GEMINI_SUPPORTED = new Set([
  '$id',
  '$defs',
  '$ref',
  '$anchor',
  'type',
  'format',
  'title',
  'description',
  'enum',
  'items',
  'prefixItems',
  'minItems',
  'maxItems',
  'minimum',
  'maximum',
  'anyOf',
  'oneOf',
  'properties',
  'additionalProperties',
  'required',
  'propertyOrdering',
  'nullable',
]);

/** Subschema-holding keywords: name → how its value holds schemas. */
const CHILDREN: Record<string, 'one' | 'map' | 'list'> = {
  items: 'one',
  additionalProperties: 'one',
  not: 'one',
  if: 'one',
  then: 'one',
  else: 'one',
  contains: 'one',
  propertyNames: 'one',
  unevaluatedProperties: 'one',
  unevaluatedItems: 'one',
  properties: 'map',
  patternProperties: 'map',
  $defs: 'map',
  definitions: 'map',
  dependentSchemas: 'map',
  anyOf: 'list',
  oneOf: 'list',
  allOf: 'list',
  prefixItems: 'list',
};

/** The slot a provider's wire offers for a JSON schema; null means prompt-only extraction. */
export function jsonSchemaSlot(provider: ProviderName): string | null {
  switch (provider) {
    case 'anthropic':
      return 'output_config.format';
    case 'openai':
      return 'text.format';
    case 'gemini':
      return 'generationConfig.responseJsonSchema';
    case 'self_hosted':
    case 'other':
      return 'response_format';
    case 'scripted':
      return null;
  }
}

export interface LoweredSchema {
  schema: Json;
  warnings: SchemaWarning[];
}

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const esc = (k: string): string => k.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The schema as `provider`'s slot can take it, and a warning per feature removed. `strict` is the
 * wrapper's flag: OpenAI's strict mode needs closed objects with every property required.
 */
export function lowerSchema(provider: ProviderName, schema: Json, strict: boolean): LoweredSchema {
  const warnings: SchemaWarning[] = [];
  const warn = (path: string, message: string) => warnings.push({ provider, path: path || '/', message });

  const drops = (key: string, value: unknown): string | null => {
    if (provider === 'anthropic') {
      if (key === 'minItems' && typeof value === 'number' && value > 1) return 'minItems above 1';
      return ANTHROPIC_UNSUPPORTED.has(key) ? `'${key}'` : null;
    }
    if (provider === 'openai') return OPENAI_UNSUPPORTED.has(key) ? `'${key}'` : null;
    if (provider === 'gemini') return GEMINI_SUPPORTED.has(key) || ANNOTATIONS.has(key) ? null : `'${key}'`;
    return null;
  };

  const walk = (node: unknown, path: string): unknown => {
    if (!isObject(node)) return node;
    const out: Json = {};
    for (const [key, value] of Object.entries(node)) {
      const here = `${path}/${esc(key)}`;
      if (key === '$schema' || (ANNOTATIONS.has(key) && provider === 'gemini')) continue;
      const what = drops(key, value);
      if (what) {
        warn(here, `${what} is not supported by the ${provider} JSON-schema slot; removed from the hint (Warren still validates it)`);
        continue;
      }
      const kind = CHILDREN[key];
      if (kind === 'one') out[key] = walk(value, here);
      else if (kind === 'map' && isObject(value))
        out[key] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, `${here}/${esc(k)}`)]));
      else if (kind === 'list' && Array.isArray(value)) out[key] = value.map((v, i) => walk(v, `${here}/${i}`));
      else out[key] = value;
    }
    closeObject(out, path);
    return out;
  };

  // Object nodes get explicit properties; Anthropic and OpenAI strict need closed objects, and OpenAI
  // strict needs every property listed as required.
  const closeObject = (node: Json, path: string): void => {
    if (node.type !== 'object') return;
    if (!isObject(node.properties)) node.properties = {};
    const closes = provider === 'anthropic' || (provider === 'openai' && strict);
    if (!closes) return;
    if (node.additionalProperties !== undefined && node.additionalProperties !== false) {
      warn(`${path}/additionalProperties`, `open objects are not supported by the ${provider} JSON-schema slot; sent as closed`);
    }
    node.additionalProperties = false;
    if (provider === 'openai') {
      const keys = Object.keys(node.properties as Json);
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      const optional = keys.filter((k) => !required.includes(k));
      if (optional.length) {
        warn(`${path}/required`, `OpenAI strict mode cannot express optional properties (${optional.join(', ')}); sent as required`);
        node.required = keys;
      }
    }
  };

  return { schema: walk(schema, '') as Json, warnings };
}
