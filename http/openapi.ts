// http/openapi.ts: the OpenAPI 3.1 document as a pure projection of the route catalog and the error
// table. Schemas carrying `$id` become components and are referenced. Served by GET /openapi.json
// (app.ts builds it once from contracts/routes.ts).
import { ERROR_TABLE, type ErrorCode } from '../contracts/errors.ts';
import type { RouteDef } from '../contracts/route.ts';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

type Json = Record<string, unknown>;

const COMPONENT_PREFIX = '#/components/schemas/';
const ERROR_REF = { $ref: `${COMPONENT_PREFIX}ErrorEnvelope` };
/** Keywords whose values are data, not schemas; a `$id` inside them is not a component. */
const DATA_KEYWORDS = new Set(['const', 'default', 'enum', 'examples', 'example']);

/**
 * Builds the OpenAPI 3.1 document. Every route appears under its path and method; every error code of
 * ERROR_TABLE appears in `components.schemas.ErrorCode` (enum plus `x-error-codes` {status, rpc} table).
 * Throws when two different schemas share one `$id` (a catalog bug, like a duplicate route).
 */
export function buildOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): Json {
  const components = new ComponentRegistry();
  const paths: Record<string, Json> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase()] = operation(route, components);
  }
  const codes = Object.keys(ERROR_TABLE) as ErrorCode[];
  const schemas: Json = {
    ErrorCode: {
      type: 'string',
      enum: codes,
      description: 'Error codes with their HTTP status and JSON-RPC code.',
      'x-error-codes': Object.fromEntries(codes.map((c) => [c, { ...ERROR_TABLE[c] }])),
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['error'],
      description: 'Ordinary error envelope {error, code, details?}. Auth-style routes reply with {error} only.',
      properties: {
        error: { type: 'string' },
        code: { $ref: `${COMPONENT_PREFIX}ErrorCode` },
        details: {},
      },
    },
    ...components.schemas,
  };
  const doc: Json = { openapi: '3.1.0', info: { ...info }, paths, components: { schemas } };
  return doc;
}

function operation(route: RouteDef, components: ComponentRegistry): Json {
  const op: Json = { operationId: route.id, summary: route.summary, tags: [tagOf(route.path)] };
  const parameters = [...pathParameters(route.path), ...queryParameters(route, components), ...headerParameters(route)];
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    op.requestBody = { required: route.bodyOptional !== true, content: { 'application/json': { schema: components.project(route.body) } } };
  }
  const contentType = route.response.contentType ?? 'application/json';
  const successSchema =
    contentType === 'application/json' ? (route.response.schema ? components.project(route.response.schema) : {}) : { type: 'string' };
  const responses: Json = {
    [String(route.response.status)]: { description: route.summary, content: { [contentType]: { schema: successSchema } } },
  };
  for (const [status, codes] of errorsByStatus(route)) {
    responses[String(status)] = {
      description: codes.join(', '),
      content: { 'application/json': { schema: ERROR_REF } },
      'x-error-codes': codes,
    };
  }
  op.responses = responses;
  if (route.capability) op['x-capability'] = route.capability;
  return op;
}

/** Listed codes plus the ones the router itself can answer for this route. */
function errorsByStatus(route: RouteDef): Map<number, ErrorCode[]> {
  const codes = new Set<ErrorCode>(route.errors);
  if (route.body || route.query || route.path.includes('{')) codes.add('BAD_REQUEST');
  if (route.body) {
    codes.add('PAYLOAD_TOO_LARGE');
    codes.add('UNSUPPORTED_MEDIA_TYPE');
  }
  if (route.capability) codes.add('CAPABILITY_UNAVAILABLE');
  codes.add('INTERNAL_ERROR');
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_TABLE[code].status;
    const list = byStatus.get(status);
    if (list) list.push(code);
    else byStatus.set(status, [code]);
  }
  return new Map([...byStatus].sort((a, b) => a[0] - b[0]));
}

function pathParameters(path: string): Json[] {
  const out: Json[] = [];
  for (const m of path.matchAll(/\{([^{}]+)\}/g)) {
    out.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  return out;
}

function queryParameters(route: RouteDef, components: ComponentRegistry): Json[] {
  const schema = route.query as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  if (!schema?.properties) return [];
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties).map(([name, prop]) => {
    const param: Json = { name, in: 'query', required: required.has(name), schema: components.project(prop) };
    const description = (prop as { description?: unknown }).description;
    if (typeof description === 'string') param.description = description;
    return param;
  });
}

function headerParameters(route: RouteDef): Json[] {
  return (route.headers ?? []).map((name) => ({ name, in: 'header', required: false, schema: { type: 'string' } }));
}

function tagOf(path: string): string {
  return path.split('/')[1] || 'root';
}

/** Hoists `$id` schemas into components and rewrites bare `$ref: 'Name'` into component refs. */
class ComponentRegistry {
  readonly schemas: Record<string, unknown> = {};
  private readonly serialized = new Map<string, string>();
  private readonly memo = new WeakMap<object, unknown>();

  project(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.project(s));
    if (typeof schema !== 'object' || schema === null) return schema;
    const cached = this.memo.get(schema);
    if (cached !== undefined) return cached;
    const source = schema as Json;
    const copy: Json = {};
    for (const [key, value] of Object.entries(source)) {
      if (key === '$id') continue;
      if (key === '$ref' && typeof value === 'string' && !value.startsWith('#')) copy.$ref = COMPONENT_PREFIX + componentName(value);
      else copy[key] = DATA_KEYWORDS.has(key) ? value : this.project(value);
    }
    let result: unknown = copy;
    if (typeof source.$id === 'string') {
      const name = componentName(source.$id);
      const text = JSON.stringify(copy);
      const prior = this.serialized.get(name);
      if (prior !== undefined && prior !== text) throw new Error(`two different schemas share $id ${source.$id}`);
      this.serialized.set(name, text);
      this.schemas[name] = copy;
      result = { $ref: COMPONENT_PREFIX + name };
    }
    this.memo.set(schema, result);
    return result;
  }
}

function componentName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
