// providers/registry.ts: picks and lazily builds the provider for a session. The one place that
// reads provider env vars (*_API_KEY, *_BASE_URL) and `[providers.<name>]` config sections.
// Called by app.ts (composition root) and the session actors through `resolve`.
import { API_KEY_ENV_PATTERN, isApiKeyEnvName } from '../contracts/config.ts';
import type { Logger } from 'pino';
import { ServiceError } from '../contracts/errors.ts';
import { createHash } from 'node:crypto';
import type { Provider, ProviderCredential } from './provider.ts';
import type { ProviderName } from '../contracts/session.ts';
import { misconfigured } from './errors.ts';
import { defaultModel, defaultModelFor, inferProvider } from './catalog.ts';
import type { RetryPolicy, SleepFn } from './retry.ts';
import type { AdapterOptions } from './wire-call.ts';
import { ANTHROPIC_DEFAULT_BASE_URL, createAnthropicProvider } from './anthropic.ts';
import { OPENAI_DEFAULT_BASE_URL, createOpenAIProvider } from './openai.ts';
import { GEMINI_DEFAULT_BASE_URL, createGeminiProvider } from './gemini.ts';
import { createOpenAICompatibleProvider } from './openai-compatible.ts';
import { scriptedFromConfig } from './scripted.ts';

export const PROVIDER_NAMES: readonly ProviderName[] = ['anthropic', 'openai', 'gemini', 'self_hosted', 'other', 'scripted'];

/** `[providers.<name>]`. `default_model` is used by self_hosted/other when no model is given. */
export interface ProviderConfigSection {
  base_url?: string;
  /** Name of the env variable holding the key (overrides ANTHROPIC_API_KEY etc.). */
  api_key_env?: string;
  /** Whole-call deadline per attempt. */
  timeout_secs?: number;
  default_model?: string;
  [key: string]: unknown;
}

export interface ProviderRegistryOptions {
  env: NodeJS.ProcessEnv;
  config: { providers?: Record<string, ProviderConfigSection | undefined> };
  logger?: Logger;
  /** Ready-made providers (tests, bench): used instead of building an adapter for that name. */
  overrides?: Partial<Record<ProviderName, Provider>>;
  retry?: Partial<RetryPolicy>;
  /** Injected into every adapter (tests use an instant sleep). */
  sleep?: SleepFn;
  random?: () => number;
  /** True when the realm has an auth binding for `provider` (counts as configured for the default choice). */
  hasBinding?: (provider: ProviderName) => boolean;
  /** Connector of every adapter's HTTP agent (the outbound guard: [network] rules on the resolved address). */
  connect?: AdapterOptions['connect'];
}

interface ResolvedProvider {
  provider: Provider;
  name: ProviderName;
  model: string;
}

export interface ProviderRegistry {
  /** The provider for `name`, built on first use. */
  get(name: ProviderName): Provider;
  /**
   * Chooses provider and model: an explicit provider wins (BAD_REQUEST when unknown); otherwise the
   * provider is inferred from the model; no model means the provider's default, or with no provider
   * either, the catalog default of the first configured provider (anthropic, gemini, openai, self_hosted).
   * A `credential` (from an auth binding) replaces the environment key and, when set, the base URL.
   */
  resolve(model?: string | null, provider?: string | null, credential?: ProviderCredential): ResolvedProvider;
  /** Closes every adapter built so far. */
  close(): Promise<void>;
}

const KEY_ENV: Record<ProviderName, string> = {
  anthropic: 'ANTHROPIC_API_KEY',
  openai: 'OPENAI_API_KEY',
  gemini: 'GEMINI_API_KEY',
  self_hosted: 'SELF_HOSTED_API_KEY',
  other: 'OTHER_API_KEY',
  scripted: '',
};
const BASE_ENV: Partial<Record<ProviderName, string>> = {
  anthropic: 'ANTHROPIC_BASE_URL',
  openai: 'OPENAI_BASE_URL',
  gemini: 'GEMINI_BASE_URL',
};
const DEFAULT_BASE: Partial<Record<ProviderName, string>> = {
  anthropic: ANTHROPIC_DEFAULT_BASE_URL,
  openai: OPENAI_DEFAULT_BASE_URL,
  gemini: GEMINI_DEFAULT_BASE_URL,
};

/** Which provider a turn with no model and no provider runs on: the first one configured, in this order. */
export const DEFAULT_ORDER: readonly ProviderName[] = ['anthropic', 'gemini', 'openai', 'self_hosted'];

const filled = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v : undefined);

/**
 * What configures `name` for a call from the environment and config (not counting auth bindings): the key
 * variable that is set (catalog vendors; GOOGLE_API_KEY also serves gemini), or `[providers.self_hosted]
 * base_url`; undefined when nothing does. `warren doctor` reports it; the default choice below uses it.
 */
export function providerSource(name: ProviderName, env: NodeJS.ProcessEnv, config: ProviderRegistryOptions['config']): string | undefined {
  const s = config.providers?.[name] ?? {};
  if (name === 'self_hosted') return filled(s.base_url) ? '[providers.self_hosted] base_url' : undefined;
  const keyEnv = s.api_key_env ?? KEY_ENV[name];
  if (keyEnv && filled(env[keyEnv])) return keyEnv;
  if (name === 'gemini' && !s.api_key_env && filled(env.GOOGLE_API_KEY)) return 'GOOGLE_API_KEY';
  return undefined;
}

const NO_PROVIDER_MESSAGE =
  'no LLM provider is configured: set ANTHROPIC_API_KEY, GEMINI_API_KEY (or GOOGLE_API_KEY) or OPENAI_API_KEY, ' +
  'or [providers.self_hosted] base_url, or add an auth binding; or send "provider":"scripted" for a demo turn';

function isProviderName(v: string): v is ProviderName {
  return (PROVIDER_NAMES as readonly string[]).includes(v);
}

/** Creates the registry. Nothing is built and no key is checked until a provider is used. */
export function createProviderRegistry(opts: ProviderRegistryOptions): ProviderRegistry {
  const built = new Map<ProviderName, Provider>();
  const section = (name: ProviderName): ProviderConfigSection => opts.config.providers?.[name] ?? {};
  const nonEmpty = (v: string | undefined): string | undefined => (v && v.trim() !== '' ? v : undefined);

  function adapterOptions(name: ProviderName, credential?: ProviderCredential): AdapterOptions {
    const s = section(name);
    if (credential) {
      const baseEnvName = BASE_ENV[name];
      const base =
        credential.baseUrl ?? nonEmpty(s.base_url) ?? (baseEnvName ? nonEmpty(opts.env[baseEnvName]) : undefined) ?? DEFAULT_BASE[name];
      const o: AdapterOptions = {
        apiKey: credential.secret,
        apiKeyEnv: 'the auth binding',
        authStyle: credential.style,
        baseUrl: base,
        logger: opts.logger,
        retry: opts.retry,
        sleep: opts.sleep,
        random: opts.random,
        connect: opts.connect,
      };
      if (typeof s.timeout_secs === 'number' && s.timeout_secs > 0) o.callTimeoutMs = s.timeout_secs * 1000;
      return o;
    }
    // A name outside the documented pattern is never read (config validation refuses it; this guards use).
    const refused = s.api_key_env !== undefined && !isApiKeyEnvName(s.api_key_env);
    const apiKeyEnv = refused
      ? `${s.api_key_env} (refused: api_key_env must match ${API_KEY_ENV_PATTERN}), so it`
      : (s.api_key_env ?? KEY_ENV[name]);
    let apiKey = refused ? undefined : nonEmpty(opts.env[apiKeyEnv]);
    if (!apiKey && name === 'gemini' && !s.api_key_env) apiKey = nonEmpty(opts.env.GOOGLE_API_KEY);
    const baseEnv = BASE_ENV[name];
    const baseUrl = nonEmpty(s.base_url) ?? (baseEnv ? nonEmpty(opts.env[baseEnv]) : undefined) ?? DEFAULT_BASE[name];
    const o: AdapterOptions = {
      apiKey,
      apiKeyEnv,
      baseUrl,
      logger: opts.logger,
      retry: opts.retry,
      sleep: opts.sleep,
      random: opts.random,
      connect: opts.connect,
    };
    if (typeof s.timeout_secs === 'number' && s.timeout_secs > 0) o.callTimeoutMs = s.timeout_secs * 1000;
    return o;
  }

  function build(name: ProviderName, credential?: ProviderCredential): Provider {
    const o = adapterOptions(name, credential);
    switch (name) {
      case 'anthropic':
        return createAnthropicProvider(o);
      case 'openai':
        return createOpenAIProvider(o);
      case 'gemini':
        return createGeminiProvider(o);
      case 'scripted':
        return scriptedFromConfig(opts.config.providers?.scripted);
      case 'self_hosted':
      case 'other':
        if (!o.baseUrl) return unconfigured(name, `[providers.${name}] base_url is not set`);
        // The key is optional for self-hosted servers unless api_key_env names one explicitly.
        return createOpenAICompatibleProvider({ ...o, baseUrl: o.baseUrl, name, requireApiKey: section(name).api_key_env !== undefined });
    }
  }

  function getProvider(name: ProviderName): Provider {
    const override = opts.overrides?.[name];
    if (override) return override;
    let p = built.get(name);
    if (!p) built.set(name, (p = build(name)));
    return p;
  }

  // Adapters for binding credentials, keyed by a hash of the credential (a refreshed token gets a new
  // adapter); the oldest is closed past the cap (undici lets its calls in flight finish).
  const bound = new Map<string, Provider>();
  const MAX_BOUND = 64;
  function getBound(name: ProviderName, credential: ProviderCredential): Provider {
    const override = opts.overrides?.[name];
    if (override) return override;
    const key = createHash('sha256')
      .update(JSON.stringify([name, credential.style, credential.baseUrl ?? '', credential.secret]))
      .digest('base64url');
    let p = bound.get(key);
    if (p) {
      bound.delete(key);
      bound.set(key, p);
      return p;
    }
    p = build(name, credential);
    bound.set(key, p);
    if (bound.size > MAX_BOUND) {
      const [oldestKey, oldest] = bound.entries().next().value as [string, Provider];
      bound.delete(oldestKey);
      oldest.close?.().catch(() => {});
    }
    return p;
  }

  /** True when `name` has what a call needs: its key variable (catalog vendors) or a base URL (self_hosted). */
  const configured = (name: ProviderName): boolean => providerSource(name, opts.env, opts.config) !== undefined;

  /**
   * The provider a turn without a model or provider runs on: the first of DEFAULT_ORDER that is
   * configured (or has an auth binding), with its catalog default model; none configured is one
   * error naming every variable that would do.
   */
  function defaultChoice(): ResolvedProvider {
    const hit = DEFAULT_ORDER.find((name) => configured(name) || (opts.hasBinding?.(name) ?? false));
    if (hit) return { provider: getProvider(hit), name: hit, model: defaultModelOf(hit) };
    const fallback = inferProvider(defaultModel()) ?? 'openai';
    return { provider: opts.overrides?.[fallback] ?? unconfigured(fallback, NO_PROVIDER_MESSAGE), name: fallback, model: defaultModel() };
  }

  function defaultModelOf(name: ProviderName): string {
    if (name === 'anthropic' || name === 'openai' || name === 'gemini') return defaultModelFor(name);
    if (name === 'scripted') return 'scripted';
    const m = nonEmpty(section(name).default_model);
    if (!m) throw new ServiceError('BAD_REQUEST', `provider '${name}' requires a model (or [providers.${name}] default_model)`);
    return m;
  }

  return {
    get: getProvider,
    resolve(model, provider, credential) {
      const m = nonEmpty(model ?? undefined);
      const p = nonEmpty(provider ?? undefined);
      const get = (name: ProviderName): Provider => (credential ? getBound(name, credential) : getProvider(name));
      if (p !== undefined) {
        if (!isProviderName(p)) {
          throw new ServiceError('BAD_REQUEST', `unknown provider '${p}'; expected one of ${PROVIDER_NAMES.join(', ')}`);
        }
        return { provider: get(p), name: p, model: m ?? defaultModelOf(p) };
      }
      if (m === undefined) return defaultChoice();
      const chosen = m;
      const inferred = inferProvider(chosen);
      if (!inferred) throw new ServiceError('BAD_REQUEST', `model '${chosen}' requires an explicit provider or a catalogued model`);
      return { provider: get(inferred), name: inferred, model: chosen };
    },
    async close() {
      const all = [...built.values(), ...bound.values()];
      built.clear();
      bound.clear();
      await Promise.all(all.map((p) => p.close?.()));
    },
  };
}

/** A provider whose every call fails with PROVIDER_ERROR (so sessions can still be created). */
function unconfigured(name: ProviderName, message: string): Provider {
  return {
    name,
    preflight: (model) => misconfigured(name, model, message),
    async call(req) {
      throw misconfigured(name, req.model, message);
    },
  };
}
