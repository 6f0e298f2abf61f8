// actors/auth/auth-config.ts: reads the credential keys of the realm config: `[auth]` (refresh skew,
// login lifetime, `[auth.oauth.<provider>]` endpoints) and the `[realm.<id>]` connection set (backend
// profiles, auth profiles, bindings, default bindings). Pure functions over the current Config.
import { Compile } from 'typebox/compile';
import { AuthSection, OAuthProviderConfig } from '../../contracts/auth.ts';
import type { Config } from '../../contracts/config.ts';
import { ServiceError } from '../../contracts/errors.ts';

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

/** `[auth.oauth.<provider>]`, or BAD_REQUEST naming the missing section. */
export function oauthProvider(cfg: Config, provider: string): OAuthProviderConfig {
  const raw = asObj(asObj((cfg as Obj).auth).oauth)[provider];
  if (raw === undefined)
    throw new ServiceError('BAD_REQUEST', `OAuth login is not configured for provider '${provider}' ([auth.oauth.${provider}])`);
  if (!checkOAuth.Check(raw)) throw new ServiceError('BAD_REQUEST', `[auth.oauth.${provider}] needs client_id and token_endpoint`);
  return raw;
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
