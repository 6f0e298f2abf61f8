// actors/auth/auth-config.ts: reads the credential keys of the realm config: `[auth]` (refresh skew,
// login lifetime, `[auth.oauth.<provider>]` laid over the built-in presets of oauth-presets.ts) and the
// `[realm.<id>]` connection set (backend profiles, auth profiles, bindings, default bindings). Pure
// functions over the current Config.
import { Compile } from 'typebox/compile';
import { AuthSection, OAuthProviderConfig, type EffectiveOAuthConfig, type OAuthProviderList } from '../../contracts/auth.ts';
import type { Config } from '../../contracts/config.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { OAUTH_PRESETS } from './oauth-presets.ts';

const DEFAULT_REFRESH_SKEW_SECS = 300;
const DEFAULT_LOGIN_TTL_SECS = 600;

const checkAuth = Compile(AuthSection);
const checkOAuth = Compile(OAuthProviderConfig);

type Obj = Record<string, unknown>;
const asObj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export interface AuthSettings {
  skewMs: number;
  loginTtlMs: number;
}

/** `[auth]` refresh skew and login lifetime (defaults when the section is absent or malformed). */
export function authSettings(cfg: Config): AuthSettings {
  const raw = (cfg as Obj).auth;
  const s = raw !== undefined && checkAuth.Check(raw) ? raw : {};
  return {
    skewMs: (s.refresh_skew_secs ?? DEFAULT_REFRESH_SKEW_SECS) * 1000,
    loginTtlMs: (s.login_ttl_secs ?? DEFAULT_LOGIN_TTL_SECS) * 1000,
  };
}

type ProviderView = OAuthProviderList['providers'][number];

/** The section laid over the preset field by field (a field the section sets replaces the preset's). */
function merged(cfg: Config, provider: string): { fields: OAuthProviderConfig; source: ProviderView['source'] } | undefined {
  const raw = asObj(asObj((cfg as Obj).auth).oauth)[provider];
  // Config writes are validated against the same schema; this guards a file edited by hand.
  if (raw !== undefined && !checkOAuth.Check(raw)) throw new ServiceError('BAD_REQUEST', `[auth.oauth.${provider}] is malformed`);
  const section = raw as OAuthProviderConfig | undefined;
  const preset = Object.hasOwn(OAUTH_PRESETS, provider) && section?.preset !== false ? OAUTH_PRESETS[provider] : undefined;
  if (!section) return preset ? { fields: { ...preset.config }, source: 'preset' } : undefined;
  const set = Object.fromEntries(Object.entries(section).filter(([k, v]) => k !== 'preset' && v !== undefined));
  return preset ? { fields: { ...preset.config, ...set }, source: 'preset+config' } : { fields: set, source: 'config' };
}

function presetNames(): string {
  return Object.keys(OAUTH_PRESETS).sort().join(', ');
}

/**
 * The OAuth client of `provider`: its built-in preset (oauth-presets.ts) with each field of
 * `[auth.oauth.<provider>]` laid over it. BAD_REQUEST naming what to configure when there is neither, or
 * when the result lacks a client id or token endpoint.
 */
export function oauthProvider(cfg: Config, provider: string): EffectiveOAuthConfig {
  const m = merged(cfg, provider);
  if (!m)
    throw new ServiceError(
      'BAD_REQUEST',
      `OAuth login is not configured for provider '${provider}': Warren has built-in presets for ${presetNames()} only; ` +
        `set [auth.oauth.${provider}] with client_id, token_endpoint and authorization_endpoint (loopback login) ` +
        'or device_authorization_endpoint (device login)',
    );
  const missing = missingFields(m.fields);
  if (missing) throw new ServiceError('BAD_REQUEST', `[auth.oauth.${provider}] needs ${missing}`);
  return m.fields as EffectiveOAuthConfig;
}

function missingFields(f: OAuthProviderConfig): string | undefined {
  const missing = [f.client_id ? '' : 'client_id', f.token_endpoint ? '' : 'token_endpoint'].filter(Boolean);
  return missing.length ? missing.join(' and ') : undefined;
}

/** GET /auth/oauth/providers: every preset and every configured provider, as login would use them. */
export function oauthProviderViews(cfg: Config): ProviderView[] {
  const names = new Set([...Object.keys(OAUTH_PRESETS), ...Object.keys(asObj(asObj((cfg as Obj).auth).oauth))]);
  const views: ProviderView[] = [];
  for (const provider of [...names].sort()) {
    let m: ReturnType<typeof merged>;
    try {
      m = merged(cfg, provider);
    } catch (err) {
      views.push({
        provider,
        source: 'config',
        has_client_secret: false,
        scopes: [],
        exchange_sends_state: false,
        flows: [],
        problem: (err as Error).message,
      });
      continue;
    }
    if (!m) continue;
    const f = m.fields;
    const missing = missingFields(f);
    const view: ProviderView = {
      provider,
      source: m.source,
      has_client_secret: typeof f.client_secret === 'string' && f.client_secret !== '',
      scopes: f.scopes ?? [],
      exchange_sends_state: f.exchange_sends_state === true,
      flows: missing
        ? []
        : [...(f.authorization_endpoint ? (['loopback'] as const) : []), ...(f.device_authorization_endpoint ? (['device'] as const) : [])],
    };
    if (m.source !== 'config') view.description = OAUTH_PRESETS[provider].description;
    for (const k of ['client_id', 'authorization_endpoint', 'token_endpoint', 'device_authorization_endpoint'] as const) {
      if (f[k]) view[k] = f[k];
    }
    if (f.authorize_params && Object.keys(f.authorize_params).length) view.authorize_params = f.authorize_params;
    if (f.redirect_uris) view.redirect_uris = f.redirect_uris;
    if (missing) view.problem = `[auth.oauth.${provider}] needs ${missing}`;
    else if (view.flows.length === 0)
      view.problem = `[auth.oauth.${provider}] needs authorization_endpoint or device_authorization_endpoint`;
    views.push(view);
  }
  return views;
}

interface ConfigBackend {
  provider: string;
  backend_kind: string;
  base_url?: string;
  options?: Obj;
}
export interface ConfigAuthProfile {
  provider: string;
  auth_method?: string;
  source_kind: string;
  env?: string;
}
interface ConfigBinding {
  backend_profile: string;
  auth_profile?: string;
  default_model?: string;
}

/** The `[realm.<id>]` section of the active realm. */
export interface RealmConnections {
  backends: Map<string, ConfigBackend>;
  authProfiles: Map<string, ConfigAuthProfile>;
  bindings: Map<string, ConfigBinding>;
  defaultBinding?: string;
  defaultBindings: Map<string, string>;
}

/** Parses `[realm.<realmId>]`: `backend.<id>`, `auth.<id>`, `binding.<id>`, `default_binding`, `default_bindings`. */
export function realmConnections(cfg: Config, realmId: string): RealmConnections {
  const section = asObj(asObj((cfg as Obj).realm)[realmId]);
  const out: RealmConnections = { backends: new Map(), authProfiles: new Map(), bindings: new Map(), defaultBindings: new Map() };
  for (const [id, raw] of Object.entries(asObj(section.backend))) {
    const b = asObj(raw);
    const provider = str(b.provider);
    if (!provider) continue;
    const backend: ConfigBackend = { provider, backend_kind: str(b.backend_kind) ?? 'default' };
    const baseUrl = str(b.base_url);
    if (baseUrl) backend.base_url = baseUrl;
    if (b.options !== undefined) backend.options = asObj(b.options);
    out.backends.set(id, backend);
  }
  for (const [id, raw] of Object.entries(asObj(section.auth))) {
    const a = asObj(raw);
    const provider = str(a.provider);
    if (!provider) continue;
    const profile: ConfigAuthProfile = { provider, source_kind: str(a.source_kind) ?? 'managed_store' };
    if (str(a.auth_method)) profile.auth_method = str(a.auth_method);
    if (str(a.env)) profile.env = str(a.env);
    out.authProfiles.set(id, profile);
  }
  for (const [id, raw] of Object.entries(asObj(section.binding))) {
    const b = asObj(raw);
    const backend = str(b.backend_profile) ?? str(b.backend);
    if (!backend) continue;
    const binding: ConfigBinding = { backend_profile: backend };
    const auth = str(b.auth_profile) ?? str(b.auth);
    if (auth) binding.auth_profile = auth;
    if (str(b.default_model)) binding.default_model = str(b.default_model);
    out.bindings.set(id, binding);
  }
  if (str(section.default_binding)) out.defaultBinding = str(section.default_binding);
  for (const [provider, id] of Object.entries(asObj(section.default_bindings))) {
    if (str(id)) out.defaultBindings.set(provider, id as string);
  }
  return out;
}
