// actors/turn-features/output-schema.ts: turns a request's `output_schema` (wrapper or raw JSON Schema)
// into a checked schema with a compiled validator. Invalid JSON Schema, a non-object root or a bad
// wrapper field is a 400 before anything runs. Validators are compiled once per distinct schema (ajv 8
// + ajv-formats; compiling is the slow part) and kept in a bounded cache.
import { createRequire } from 'node:module';
import type { Ajv, ValidateFunction } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import type addFormatsModule from 'ajv-formats';
import { ServiceError } from '../../contracts/errors.ts';

// ajv-formats is CommonJS; under NodeNext its default export arrives wrapped.
type AddFormats = (ajv: Ajv | Ajv2020) => unknown;
// ajv is loaded on the first output_schema, not at start: it is about 10 MiB of a server's idle RSS.
const require = createRequire(import.meta.url);

function loadAjv(): { draft07: Ajv; draft2020: Ajv2020 } {
  const { Ajv: Ajv07 } = require('ajv') as typeof import('ajv');
  const { Ajv2020: Ajv20 } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const formatsExport = require('ajv-formats') as typeof addFormatsModule as unknown as AddFormats | { default: AddFormats };
  const addFormats: AddFormats = typeof formatsExport === 'function' ? formatsExport : formatsExport.default;
  const draft07 = new Ajv07({ allErrors: true, strict: false });
  const draft2020 = new Ajv20({ allErrors: true, strict: false });
  addFormats(draft07);
  addFormats(draft2020);
  return { draft07, draft2020 };
}

/** The accepted `format` values of the wrapper (`meerkat_v1` is the reference implementation's name). */
const OUTPUT_FORMATS = ['warren_v1', 'meerkat_v1'] as const;

export interface ResolvedOutputSchema {
  /** The caller's schema, validated locally in full whatever a provider can express. */
  schema: Record<string, unknown>;
  /** Name sent in the vendor's slot (OpenAI requires one); default "output". */
  name: string;
  strict: boolean;
  compat: 'lossy' | 'strict';
  validate: ValidateFunction;
}

const WRAPPER_KEYS = new Set(['schema', 'name', 'strict', 'compat', 'format', 'description']);
const CACHE_MAX = 256;

function bad(message: string): ServiceError {
  return new ServiceError('BAD_REQUEST', `invalid output_schema: ${message}`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The wrapper form: an object schema under `schema` and nothing but wrapper fields beside it. */
function isWrapper(v: Record<string, unknown>): boolean {
  return isObject(v.schema) && Object.keys(v).every((k) => WRAPPER_KEYS.has(k));
}

function rootIsObject(schema: Record<string, unknown>): boolean {
  const t = schema.type;
  return t === 'object' || (Array.isArray(t) && t.length === 1 && t[0] === 'object');
}

/** Compiles and caches validators; one per server (the module unit owns it). */
export class OutputSchemaCompiler {
  private ajv: { draft07: Ajv; draft2020: Ajv2020 } | undefined;
  private readonly cache = new Map<string, { fn: ValidateFunction; ajv: Ajv | Ajv2020; compiled: object }>();

  /** Resolves a request's `output_schema`; throws 400 BAD_REQUEST for anything unusable. */
  resolve(raw: unknown): ResolvedOutputSchema {
    if (!isObject(raw)) throw bad('expected an object');
    let schema: Record<string, unknown> = raw;
    let name = 'output';
    let strict = false;
    let compat: 'lossy' | 'strict' = 'lossy';
    if (isWrapper(raw)) {
      schema = raw.schema as Record<string, unknown>;
      if (raw.name !== undefined) {
        if (typeof raw.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(raw.name)) throw bad('name must be 1-64 letters, digits, _ or -');
        name = raw.name;
      }
      if (raw.strict !== undefined) {
        if (typeof raw.strict !== 'boolean') throw bad('strict must be a boolean');
        strict = raw.strict;
      }
      if (raw.compat !== undefined) {
        if (raw.compat !== 'lossy' && raw.compat !== 'strict') throw bad('compat must be "lossy" or "strict"');
        compat = raw.compat;
      }
      if (raw.format !== undefined && !(OUTPUT_FORMATS as readonly unknown[]).includes(raw.format)) {
        throw bad(`format must be one of ${OUTPUT_FORMATS.join(', ')}`);
      }
    }
    if (!rootIsObject(schema)) throw bad('the schema root must be {"type": "object", ...}');
    return { schema, name, strict, compat, validate: this.validator(schema) };
  }

  private validator(schema: Record<string, unknown>): ValidateFunction {
    const key = JSON.stringify(schema);
    const hit = this.cache.get(key);
    if (hit) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit.fn;
    }
    const ajv = (this.ajv ??= loadAjv());
    const draft = typeof schema.$schema === 'string' && /draft-0[4-7]/.test(schema.$schema) ? ajv.draft07 : ajv.draft2020;
    if (!draft.validateSchema(schema)) throw bad(`not a valid JSON Schema: ${draft.errorsText(draft.errors)}`);
    // Compiled without its $id, so two callers' schemas with one $id never clash in the instance.
    const { $id: _ignored, ...compiled } = schema;
    let fn: ValidateFunction;
    try {
      fn = draft.compile(compiled);
    } catch (err) {
      throw bad(`cannot be compiled: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.cache.set(key, { fn, ajv: draft, compiled });
    if (this.cache.size > CACHE_MAX) {
      const [oldKey, old] = this.cache.entries().next().value as [string, { ajv: Ajv | Ajv2020; compiled: object }];
      this.cache.delete(oldKey);
      old.ajv.removeSchema(old.compiled);
    }
    return fn;
  }
}

/** A readable account of why `value` failed `validate` (fed back to the model on retry). */
export function validationMessage(validate: ValidateFunction): string {
  const errs = validate.errors ?? [];
  return (
    errs
      .slice(0, 8)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`)
      .join('; ') || 'does not match the schema'
  );
}
