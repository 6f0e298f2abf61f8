// config/realm-config.ts: the realm's live config and its generation compare-and-set (wire-notes §1.4,
// §2.8, §11 item 18). The /config handlers call replace/patch/envelope; app.ts subscribes with onChange.
// Writers are serialized in-process by a promise chain and across processes by config_state.json.lock,
// and the generation is always re-read from disk under the lock, so exactly one of several writers
// holding the same expected_generation wins.
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { MASK, maskMap, restoreMap } from '../contracts/secret-paths.ts';
import { redactDatabaseUrl } from '../contracts/cluster.ts';
import type { Config, ConfigEnvelope } from '../contracts/config.ts';
import { ServiceError } from '../contracts/errors.ts';
import { withFileLock } from './file-lock.ts';
import { fsErrorCode, writeFileAtomic } from './fs-atomic.ts';
import type { RealmInfo } from './realm.ts';
import { isPlainObject, loadConfigFile, mergePatch, nestingProblem, validateConfig, writeConfigFileAtomic } from './toml.ts';

export interface RealmConfigOptions {
  instanceId?: string;
  /** Include resolved_paths in the envelope (`--expose-paths`). */
  exposePaths: boolean;
  logger: Logger;
}

type ConfigListener = (config: Config) => void;

/** Reads config_state.json; a missing file means generation 0. */
async function readGeneration(file: string): Promise<number> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if (fsErrorCode(err) === 'ENOENT') return 0;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ServiceError('INTERNAL_ERROR', `Config state ${file} is not valid JSON`);
  }
  const generation = isPlainObject(parsed) ? parsed.generation : undefined;
  if (typeof generation !== 'number' || !Number.isSafeInteger(generation) || generation < 0) {
    throw new ServiceError('INTERNAL_ERROR', `Config state ${file} has no valid generation`);
  }
  return generation;
}

function deepFreeze<T>(value: T): T {
  if (Array.isArray(value) || isPlainObject(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Splits a PUT/PATCH body into the document and the optional expected generation. A body with a `key`
 * member is the wrapped form; its other members besides `expected_generation` are ignored (SPEC.md
 * "Versioning": request fields this server does not know are ignored), so a newer client's wrapped body
 * keeps its compare-and-set instead of being stored as a direct document. The Config has no section
 * named `config` or `patch`.
 */
function unwrap(body: unknown, key: 'config' | 'patch'): { doc: Record<string, unknown>; expected?: number } {
  const invalid = (detail: string) => new ServiceError('BAD_REQUEST', `Invalid ${key}: ${detail}`);
  if (!isPlainObject(body)) throw invalid('expected a JSON object');
  // Checked before any recursive merge or copy touches the document (a deep body would overflow the stack).
  const tooDeep = nestingProblem(body);
  if (tooDeep) throw invalid(tooDeep);
  if (!Object.hasOwn(body, key)) return { doc: body };
  const doc = body[key];
  if (!isPlainObject(doc)) throw invalid(`'${key}' must be a JSON object`);
  const expected = body.expected_generation;
  if (expected === undefined || expected === null) return { doc };
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0) {
    throw invalid('expected_generation must be a non-negative integer or null');
  }
  return { doc, expected };
}

/** The realm's config.toml plus its CAS generation, with the GET/PUT/PATCH /config operations. */
export class RealmConfig {
  readonly #realm: RealmInfo;
  readonly #instanceId: string | null;
  readonly #exposePaths: boolean;
  readonly #logger: Logger;
  readonly #listeners = new Set<ConfigListener>();
  #config: Config;
  #generation: number;
  /** Tail of the in-process writer chain; each write waits for the previous one. */
  #chain: Promise<unknown> = Promise.resolve();

  private constructor(realm: RealmInfo, opts: RealmConfigOptions, config: Config, generation: number) {
    this.#realm = realm;
    this.#instanceId = opts.instanceId ?? null;
    this.#exposePaths = opts.exposePaths;
    this.#logger = opts.logger;
    this.#config = deepFreeze(config);
    this.#generation = generation;
  }

  /** Loads config.toml and config_state.json of an opened realm. */
  static async open(realm: RealmInfo, opts: RealmConfigOptions): Promise<RealmConfig> {
    const config = await loadConfigFile(realm.configPath);
    const generation = await readGeneration(realm.configStatePath);
    return new RealmConfig(realm, opts, config, generation);
  }

  /** The current config (deeply frozen; all sections present). */
  current(): Config {
    return this.#config;
  }

  generation(): number {
    return this.#generation;
  }

  /** The GET /config body. resolved_paths only with `--expose-paths`. */
  envelope(): ConfigEnvelope {
    const envelope: ConfigEnvelope = {
      config: redactSecrets(this.#config),
      generation: this.#generation,
      realm_id: this.#realm.realmId,
      instance_id: this.#instanceId,
      backend: this.#realm.backend,
    };
    if (this.#exposePaths) {
      envelope.resolved_paths = {
        root: this.#realm.dir,
        manifest_path: this.#realm.manifestPath,
        config_path: this.#realm.configPath,
        config_state_path: this.#realm.configStatePath,
        store_dir: this.#realm.storeDir,
      };
    }
    return envelope;
  }

  /** Registers a listener called after every successful write or reload that changed the config. */
  onChange(cb: ConfigListener): () => void {
    this.#listeners.add(cb);
    return () => this.#listeners.delete(cb);
  }

  /** PUT /config: a direct Config or `{config, expected_generation?}`. Returns the new envelope. */
  async replace(body: unknown): Promise<ConfigEnvelope> {
    const { doc, expected } = unwrap(body, 'config');
    const next = validateConfig(doc, 'config');
    return this.#commit(expected, async () => next);
  }

  /** PATCH /config: a direct RFC 7396 patch or `{patch, expected_generation?}`. Returns the new envelope. */
  async patch(body: unknown): Promise<ConfigEnvelope> {
    const { doc, expected } = unwrap(body, 'patch');
    return this.#commit(expected, async () => {
      // Merge onto the file as it is now: another process may have written since we last read it.
      const base = await loadConfigFile(this.#realm.configPath);
      return validateConfig(mergePatch(base, doc), 'patch');
    });
  }

  /** Re-reads config.toml and config_state.json (picks up writes by other processes). */
  async reload(): Promise<ConfigEnvelope> {
    return this.#serialize(async () => {
      const config = await loadConfigFile(this.#realm.configPath);
      const generation = await readGeneration(this.#realm.configStatePath);
      const changed = generation !== this.#generation;
      this.#config = deepFreeze(config);
      this.#generation = generation;
      if (changed) this.#notify();
      return this.envelope();
    });
  }

  #serialize<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(fn, fn);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  /** Compare-and-set under both locks, then write config.toml and config_state.json atomically. */
  #commit(expected: number | undefined, build: () => Promise<Config>): Promise<ConfigEnvelope> {
    const lockPath = `${this.#realm.configStatePath}.lock`;
    return this.#serialize(() =>
      withFileLock(lockPath, async () => {
        const current = await readGeneration(this.#realm.configStatePath);
        if (expected !== undefined && expected !== current) {
          throw new ServiceError('BAD_REQUEST', `Generation conflict: expected ${expected}, current ${current}`);
        }
        const next = keepRedacted(await build(), this.#config);
        await writeConfigFileAtomic(this.#realm.configPath, next);
        await writeFileAtomic(this.#realm.configStatePath, `${JSON.stringify({ generation: current + 1 })}\n`);
        this.#config = deepFreeze(next);
        this.#generation = current + 1;
        this.#logger.info({ realmId: this.#realm.realmId, generation: this.#generation }, 'config updated');
        this.#notify();
        return this.envelope();
      }),
    );
  }

  #notify(): void {
    for (const listener of this.#listeners) {
      try {
        listener(this.#config);
      } catch (err) {
        this.#logger.error({ err }, 'config change listener failed');
      }
    }
  }
}

/** How GET /config shows a secret (contracts/secret-paths.ts). */
const REDACTED = MASK;

/** `[[tools.mcp_servers]]` with every `headers` / `env` value masked. */
function maskMcpServers(config: Config): Config {
  const servers = config.tools.mcp_servers ?? [];
  if (!servers.some((s) => s.headers !== undefined || s.env !== undefined)) return config;
  const masked = servers.map((s) => ({
    ...s,
    ...(s.headers !== undefined ? { headers: maskMap(s.headers) } : {}),
    ...(s.env !== undefined ? { env: maskMap(s.env) } : {}),
  }));
  return { ...config, tools: { ...config.tools, mcp_servers: masked } };
}

/** A written-back `[[tools.mcp_servers]]`: `***` values keep what the server of that name stores. */
function restoreMcpServers(next: Config, current: Config): Config {
  const stored = new Map((current.tools.mcp_servers ?? []).map((s) => [s.name, s]));
  const servers = next.tools.mcp_servers ?? [];
  if (!servers.some((s) => Object.values({ ...s.headers, ...s.env }).includes(MASK))) return next;
  const kept = servers.map((s) => {
    const old = stored.get(s.name);
    return {
      ...s,
      ...(s.headers !== undefined ? { headers: restoreMap(s.headers, old?.headers) } : {}),
      ...(s.env !== undefined ? { env: restoreMap(s.env, old?.env) } : {}),
    };
  });
  return { ...next, tools: { ...next.tools, mcp_servers: kept } };
}

/**
 * The config GET /config shows: the database URL's password and every OAuth client secret replaced by
 * `***` (no route returns a secret).
 */
function redactSecrets(config: Config): Config {
  let out = maskMcpServers(config);
  const url = config.storage?.postgres_url;
  if (url !== undefined) out = { ...out, storage: { ...config.storage!, postgres_url: redactDatabaseUrl(url) } };
  const oauth = config.auth?.oauth;
  if (oauth && Object.values(oauth).some((p) => p.client_secret !== undefined)) {
    const redacted = Object.fromEntries(
      Object.entries(oauth).map(([id, p]) => [id, p.client_secret === undefined ? p : { ...p, client_secret: REDACTED }]),
    );
    out = { ...out, auth: { ...config.auth, oauth: redacted } };
  }
  return out;
}

/**
 * A written config that carries back what GET /config showed keeps the stored secrets: the redacted
 * database URL, and a client secret of `***` for a provider that has one.
 */
function keepRedacted(next: Config, current: Config): Config {
  let out = restoreMcpServers(next, current);
  const url = current.storage?.postgres_url;
  if (url !== undefined && next.storage?.postgres_url === redactDatabaseUrl(url) && next.storage.postgres_url !== url) {
    out = { ...out, storage: { ...next.storage, postgres_url: url } };
  }
  const oauth = next.auth?.oauth;
  const stored = current.auth?.oauth;
  if (oauth && stored && Object.entries(oauth).some(([id, p]) => p.client_secret === REDACTED && stored[id]?.client_secret !== undefined)) {
    const kept = Object.fromEntries(
      Object.entries(oauth).map(([id, p]) => {
        const secret = stored[id]?.client_secret;
        return [id, p.client_secret === REDACTED && secret !== undefined ? { ...p, client_secret: secret } : p];
      }),
    );
    out = { ...out, auth: { ...next.auth, oauth: kept } };
  }
  return out;
}
