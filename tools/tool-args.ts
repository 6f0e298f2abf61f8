// tools/tool-args.ts: compiles a tool's typebox argument schema once and turns validation failures into
// one readable message for the model. Used by every builtin tool (task tools, datetime, shell).
import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import type { ToolOutcome } from './tool.ts';

/** Result of checking a tool call's arguments. */
type ArgsResult<T> = { ok: true; value: T } | { ok: false; message: string };

/** A compiled argument checker plus the plain JSON Schema to advertise as `input_schema`. */
export interface ToolArgs<T> {
  /** Plain JSON Schema (typebox's non-enumerable markers stripped) for ToolSpec.input_schema. */
  readonly jsonSchema: Record<string, unknown>;
  parse(args: unknown): ArgsResult<T>;
}

interface SchemaError {
  keyword: string;
  instancePath: string;
  message: string;
  params: Record<string, unknown>;
}

function describe(error: SchemaError): string | undefined {
  const where = error.instancePath === '' ? 'arguments' : error.instancePath.slice(1).replaceAll('/', '.');
  const p = error.params;
  switch (error.keyword) {
    // additionalProperties also yields a per-property "schema is false"; the summary below names them.
    case 'boolean':
      return undefined;
    case 'required':
      return `${where}: missing required ${list(p.requiredProperties)}`;
    case 'additionalProperties':
      return `${where}: unknown ${list(p.additionalProperties)}`;
    case 'enum':
      return `${where}: must be one of ${list(p.allowedValues)}`;
    default:
      return `${where}: ${error.message}`;
  }
}

function list(value: unknown): string {
  return Array.isArray(value) ? value.map((v) => JSON.stringify(v)).join(', ') : String(value);
}

/**
 * Compiles `schema` once. `parse` treats missing arguments (`undefined`/`null`) as `{}` because some
 * providers send no arguments object for a tool without parameters.
 */
export function compileArgs<S extends TSchema>(schema: S): ToolArgs<Static<S>> {
  const validator = Compile(schema);
  const jsonSchema = JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
  return {
    jsonSchema,
    parse(args: unknown): ArgsResult<Static<S>> {
      const value = args ?? {};
      if (validator.Check(value)) return { ok: true, value: value as Static<S> };
      const lines = (validator.Errors(value) as SchemaError[]).map(describe).filter((l) => l !== undefined);
      return { ok: false, message: [...new Set(lines)].join('; ') || 'arguments do not match the schema' };
    },
  };
}

/** The outcome a tool returns for arguments that fail validation. */
export function invalidArgs(tool: string, message: string): ToolOutcome {
  return { content: `invalid arguments for ${tool}: ${message}`, is_error: true };
}

/** JSON text result. */
export function jsonResult(value: unknown, isError = false): ToolOutcome {
  const content = JSON.stringify(value);
  return isError ? { content, is_error: true } : { content };
}
