// cli/doctor-realm.ts: the checks of `warren doctor` about one realm: its files (manifest, config.toml,
// directory mode), which providers a turn could use (the keys present, config and auth bindings, and the
// default a turn naming no model runs on), and PostgreSQL when the realm or the environment uses it. Nothing
// here creates or changes a file. cli/doctor-command.ts runs them.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import type { Config } from '../contracts/config.ts';
import type { ProviderName } from '../contracts/session.ts';
import { isServiceError } from '../contracts/errors.ts';
import { realmConnections } from '../actors/auth/auth-config.ts';
import { CONFIG_FILE, MANIFEST_FILE, readManifest } from '../config/realm.ts';
import { ConfigFileError, defaultConfig, loadConfigFile } from '../config/toml.ts';
import { defaultModelFor, inferProvider } from '../providers/catalog.ts';
import { DEFAULT_ORDER, providerSource } from '../providers/registry.ts';
import type { CheckResult } from './doctor-checks.ts';

/** What the realm check learnt, for the checks after it. */
export interface RealmFacts {
  /** The pinned backend, or undefined when the realm does not exist yet. */
  backend?: string;
  /** The realm's config (the defaults when the realm does not exist or its config is unreadable). */
  config: Config;
}

const messageOf = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
const codeOf = (err: unknown): string | undefined =>
  typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : undefined;

/** The realm's manifest, config.toml and directory mode. A realm not created yet is fine. */
export async function checkRealm(root: string, realmId: string): Promise<{ result: CheckResult; facts: RealmFacts }> {
  const name = 'realm';
  const dir = path.join(root, realmId);
  const facts: RealmFacts = { config: defaultConfig() };
  const fail = (detail: string): { result: CheckResult; facts: RealmFacts } => ({ result: { name, status: 'fail', detail }, facts });
  try {
    facts.backend = (await readManifest(path.join(dir, MANIFEST_FILE))).backend;
  } catch (err) {
    // Absent, or below a state root that is not a directory (the state root check reports that).
    if (codeOf(err) === 'ENOENT' || codeOf(err) === 'ENOTDIR') {
      return {
        result: {
          name,
          status: 'ok',
          detail: `${realmId} does not exist yet; the first start with --realm ${realmId} creates it (lmdb unless --realm-backend)`,
        },
        facts,
      };
    }
    return fail(isServiceError(err) ? err.message : `${realmId}: ${messageOf(err)}`);
  }
  try {
    facts.config = await loadConfigFile(path.join(dir, CONFIG_FILE));
  } catch (err) {
    return fail(err instanceof ConfigFileError ? err.message : `${path.join(dir, CONFIG_FILE)}: ${messageOf(err)}`);
  }
  const mode = (await stat(dir)).mode & 0o777;
  const detail = `${realmId}: ${facts.backend} backend, ${dir} (mode 0${mode.toString(8)})`;
  if (mode & 0o077)
    return { result: { name, status: 'warn', detail: `${detail}: other users may read it (a start narrows it to 0700)` }, facts };
  return { result: { name, status: 'ok', detail }, facts };
}

/**
 * Which providers would work for a turn, by the rules of providers/registry.ts: a key variable, the
 * self_hosted base URL, or the realm's default auth binding; and what a turn naming no model runs on.
 */
export function checkProviders(env: NodeJS.ProcessEnv, config: Config, realmId: string): CheckResult {
  const name = 'providers';
  const bindings = realmConnections(config, realmId).defaultBindings;
  const sourceOf = (p: ProviderName): string | undefined =>
    providerSource(p, env, config) ?? (bindings.has(p) ? `auth binding ${bindings.get(p)}` : undefined);
  const found = DEFAULT_ORDER.flatMap((p) => {
    const source = sourceOf(p);
    return source ? [`${p} (${source})`] : [];
  });
  const configuredModel = config.agent.model;
  if (configuredModel) {
    const provider = inferProvider(configuredModel);
    if (provider && !sourceOf(provider)) {
      return { name, status: 'warn', detail: `[agent] model ${configuredModel} needs ${provider}, which has no key, base URL or binding` };
    }
  }
  if (found.length === 0) {
    return {
      name,
      status: 'warn',
      detail:
        'none configured: set ANTHROPIC_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY) or OPENAI_API_KEY, or [providers.self_hosted] ' +
        'base_url; until then only "provider":"scripted" turns work',
    };
  }
  const first = DEFAULT_ORDER.find((p) => sourceOf(p) !== undefined);
  let defaultText = '';
  if (configuredModel) defaultText = `; a turn naming no model runs [agent] model ${configuredModel}`;
  else if (first === 'anthropic' || first === 'gemini' || first === 'openai') {
    defaultText = `; a turn naming no model runs ${first} ${defaultModelFor(first)}`;
  } else if (first) defaultText = `; a turn naming no model runs ${first} ([providers.${first}] default_model)`;
  return { name, status: 'ok', detail: `${found.join(', ')}${defaultText}` };
}

/** `host:port/database` of a connection string, never its user or password. */
function safeTarget(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port || '5432'}${u.pathname}`;
  } catch {
    return '(an unparsable URL)';
  }
}

/** PostgreSQL reachability, when the realm's backend is postgres or a database URL is set. */
export async function checkPostgres(env: NodeJS.ProcessEnv, facts: RealmFacts, timeoutMs = 5_000): Promise<CheckResult> {
  const name = 'postgres';
  const needed = facts.backend === 'postgres';
  const fromEnv = env.WARREN_DATABASE_URL ? 'WARREN_DATABASE_URL' : undefined;
  const url = env.WARREN_DATABASE_URL || facts.config.storage?.postgres_url;
  if (!url) {
    if (needed)
      return { name, status: 'fail', detail: 'the realm is postgres, but neither WARREN_DATABASE_URL nor [storage] postgres_url is set' };
    return { name, status: 'ok', detail: 'not used (no postgres realm, no WARREN_DATABASE_URL)' };
  }
  const target = `${safeTarget(url)} (${fromEnv ?? '[storage] postgres_url'})`;
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  try {
    await client.connect();
    const { rows } = await client.query<{ v: string }>("select current_setting('server_version') as v");
    return { name, status: 'ok', detail: `${target} answers: PostgreSQL ${rows[0]?.v ?? '?'}` };
  } catch (err) {
    // A driver message may quote the URL; the password never reaches the report.
    let reason = messageOf(err) || codeOf(err) || 'unknown error';
    const password = (() => {
      try {
        return decodeURIComponent(new URL(url).password);
      } catch {
        return '';
      }
    })();
    if (password) reason = reason.split(password).join('***');
    return { name, status: needed ? 'fail' : 'warn', detail: `${target} unreachable: ${reason}` };
  } finally {
    await client.end().catch(() => undefined);
  }
}
