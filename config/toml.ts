// config/toml.ts: config.toml load/save (smol-toml), defaults, validation and RFC 7396 merge patch.
// Called by config/realm.ts (first-open defaults) and config/realm-config.ts (GET/PUT/PATCH /config).
import { readFile } from 'node:fs/promises';
import { parse, stringify, TomlError } from 'smol-toml';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';
import { Config } from '../contracts/config.ts';
import { ServiceError } from '../contracts/errors.ts';
import { fsErrorCode, writeFileAtomic } from './fs-atomic.ts';

const checkConfig = Compile(Config);

/** Keys that would reach an object's prototype if assigned naively. */
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/**
 * Deepest nesting of objects and arrays a config document may have. Real configs are a few levels
 * deep; the cap keeps the recursive copy, patch and TOML code below far from the stack limit, so a
 * hostile body answers 400 instead of overflowing the stack (500).
 */
const MAX_CONFIG_DEPTH = 64;

const FILE_HEADER = '# Warren realm config. PUT/PATCH /config rewrite this file (comments are not kept).\n\n';

/** A config.toml that cannot be parsed or does not validate. */
export class ConfigFileError extends Error {
  readonly path: string;
  readonly line?: number;
  readonly column?: number;
  constructor(path: string, message: string, position?: { line: number; column: number }, cause?: unknown) {
    super(message, { cause });
    this.name = 'ConfigFileError';
    this.path = path;
    if (position) {
      this.line = position.line;
      this.column = position.column;
    }
  }
}

/** True for `{}`-style objects (including smol-toml's null-prototype tables), false for arrays, dates, null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * Why `value` nests objects/arrays deeper than `maxDepth`, or undefined. Iterative, so any depth is
 * safe to inspect.
 */
export function nestingProblem(value: unknown, maxDepth: number = MAX_CONFIG_DEPTH): string | undefined {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth >= maxDepth) return `nested deeper than ${maxDepth} levels`;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return undefined;
}

/** Defines an own property safely (never invokes a `__proto__` setter). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Deep copy of plain objects and arrays; other values (numbers, strings, TOML dates) are shared. */
function cloneData(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneData);
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) setOwn(out, key, cloneData(child));
    return out;
  }
  return value;
}

/**
 * Copies a candidate config into plain objects that TOML can represent: null/undefined members are
 * dropped (TOML has no null, and in a merge patch null means "absent"); null inside arrays and
 * prototype-reaching keys are rejected. Returns the first problem as a message.
 */
function normalize(value: unknown, path: string): { value: unknown } | { error: string } {
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null || value[i] === undefined) return { error: `${path}/${i}: null is not allowed in arrays` };
      const child = normalize(value[i], `${path}/${i}`);
      if ('error' in child) return child;
      out.push(child.value);
    }
    return { value: out };
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, childValue] of Object.entries(value)) {
      if (FORBIDDEN_KEYS.has(key)) return { error: `${path}/${key}: key is not allowed` };
      if (childValue === null || childValue === undefined) continue;
      const child = normalize(childValue, `${path}/${key}`);
      if ('error' in child) return child;
      setOwn(out, key, child.value);
    }
    return { value: out };
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return { error: `${path || '/'}: must be a finite number` };
  if (typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint') {
    return { error: `${path || '/'}: unsupported value type ${typeof value}` };
  }
  return { value };
}

/**
 * Applies defaults and validates a candidate config. Returns a fresh object (the input is not touched).
 * Throws ServiceError('BAD_REQUEST', 'Invalid <label>: <path>: <message>') on the first problem.
 */
export function validateConfig(value: unknown, label: 'config' | 'patch' = 'config'): Config {
  const fail = (detail: string): never => {
    throw new ServiceError('BAD_REQUEST', `Invalid ${label}: ${detail}`);
  };
  if (!isPlainObject(value)) return fail('expected a JSON object');
  const tooDeep = nestingProblem(value);
  if (tooDeep) return fail(tooDeep);
  const normalized = normalize(value, '');
  if ('error' in normalized) return fail(normalized.error);
  const withDefaults = Value.Default(Config, normalized.value);
  if (checkConfig.Check(withDefaults)) return withDefaults;
  const [first] = checkConfig.Errors(withDefaults);
  return fail(first ? `${first.instancePath || '/'}: ${first.message}` : 'does not match the Config schema');
}

/** A fresh Config holding every default (all sections present). */
export function defaultConfig(): Config {
  return validateConfig({});
}

/**
 * RFC 7396 JSON Merge Patch: a non-object patch replaces the target; an object patch merges key by
 * key, where null deletes the key, nested objects merge recursively and arrays/scalars replace.
 * Neither input is mutated and the result shares no objects with them.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return cloneData(patch);
  const result: Record<string, unknown> = isPlainObject(target) ? (cloneData(target) as Record<string, unknown>) : {};
  for (const [key, patchValue] of Object.entries(patch)) {
    if (patchValue === null) {
      delete result[key];
    } else {
      setOwn(result, key, mergePatch(Object.hasOwn(result, key) ? result[key] : undefined, patchValue));
    }
  }
  return result;
}

/** Turns smol-toml's TomlError into one readable line with the position. */
function tomlErrorMessage(path: string, err: TomlError): string {
  const firstLine = err.message.split('\n')[0] ?? err.message;
  const reason = firstLine.replace(/^Invalid TOML document:\s*/, '');
  return `Invalid TOML in ${path} at line ${err.line}, column ${err.column}: ${reason}`;
}

/**
 * Reads and validates a config.toml, applying defaults. A missing file yields the defaults.
 * Throws ConfigFileError for unparsable TOML (with line/column) or an invalid config.
 */
export async function loadConfigFile(path: string): Promise<Config> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if (fsErrorCode(err) === 'ENOENT') return defaultConfig();
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = parse(text);
  } catch (err) {
    if (err instanceof TomlError) {
      throw new ConfigFileError(path, tomlErrorMessage(path, err), { line: err.line, column: err.column }, err);
    }
    throw err;
  }
  try {
    return validateConfig(parsed);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConfigFileError(path, `${reason} (in ${path})`, undefined, err);
  }
}

/** Serializes a config as TOML text (with a short header comment). */
export function configToToml(config: Config): string {
  return FILE_HEADER + stringify(config);
}

/** Writes config.toml atomically (temp file in the same dir, fsync, rename, fsync dir). */
export async function writeConfigFileAtomic(path: string, config: Config): Promise<void> {
  await writeFileAtomic(path, configToToml(config));
}
