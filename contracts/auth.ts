// contracts/auth.ts: wire schemas of the /auth resource (SPEC.md "Auth resources", "Auth routes";
// wire-notes §2.9), the persisted credential records, and the `[auth]` / `[realm.<id>]` config keys the
// credential store reads. contracts/routes-auth.ts holds the route catalog; actors/auth/* the behaviour.
import { Type, type Static } from 'typebox';

/** Binding and profile ids: 1-128 characters, no control characters (wire-notes §2.9: bad ids are 400). */
export const ID_MAX_LENGTH = 128;
const ID_PATTERN = '^[^\\u0000-\\u001f]+$';
const Id = Type.String({ minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN });
const ID_RE = new RegExp(ID_PATTERN);

/** The `Id` schema's rule, for ids that arrive outside a validated body (paths, session selectors). */
export function isWellFormedId(id: string): boolean {
  return id.length <= ID_MAX_LENGTH && ID_RE.test(id);
}
const OptionalId = Type.Optional(Type.Union([Id, Type.Null()]));

/** Methods a caller can store directly; `oauth` profiles are written only by the login routes. */
const StoredAuthMethod = Type.Union([Type.Literal('api_key'), Type.Literal('azure_api_key'), Type.Literal('static_bearer')], {
  $id: 'StoredAuthMethod',
});
type StoredAuthMethod = Static<typeof StoredAuthMethod>;
const AuthMethod = Type.Union([StoredAuthMethod, Type.Literal('oauth')], { $id: 'AuthMethod' });
type AuthMethod = Static<typeof AuthMethod>;

/** Public binding states (wire-notes §2.9). */
export const BindingState = Type.Union(
  [
    Type.Literal('valid'),
    Type.Literal('expiring'),
    Type.Literal('expired'),
    Type.Literal('reauth_required'),
    Type.Literal('refresh_failed'),
    Type.Literal('released'),
    Type.Literal('absent'),
    Type.Literal('missing_credential'),
  ],
  { $id: 'BindingState' },
);
export type BindingState = Static<typeof BindingState>;

/** The credential selector `{realm, binding, profile?}` (also the create/continue `auth_binding`). */
export const AuthBinding = Type.Object(
  { realm: Type.String(), binding: Type.String(), profile: Type.Optional(Type.String()) },
  { $id: 'AuthBinding' },
);
export type AuthBinding = Static<typeof AuthBinding>;

const AuthProfileView = Type.Object(
  { id: Type.String(), provider: Type.String(), auth_method: Type.Optional(AuthMethod), source_kind: Type.String() },
  { $id: 'AuthProfileView' },
);
type AuthProfileView = Static<typeof AuthProfileView>;

export const BackendProfileView = Type.Object(
  {
    id: Type.String(),
    provider: Type.String(),
    backend_kind: Type.String(),
    base_url: Type.Optional(Type.String()),
    options: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'BackendProfileView' },
);
export type BackendProfileView = Static<typeof BackendProfileView>;

const BindingView = Type.Object(
  { id: Type.String(), backend_profile: Type.String(), auth_profile: Type.String(), default_model: Type.Optional(Type.String()) },
  { $id: 'BindingView' },
);
type BindingView = Static<typeof BindingView>;

// ---- requests ----

export const RealmQuery = Type.Object(
  { realm_id: Type.String({ minLength: 1 }), profile_id: Type.Optional(Id) },
  { $id: 'AuthRealmQuery' },
);
export type RealmQuery = Static<typeof RealmQuery>;

export const StoreCredentialsRequest = Type.Object(
  {
    realm_id: Id,
    binding_id: Id,
    profile_id: OptionalId,
    provider: Type.String({ minLength: 1 }),
    auth_method: StoredAuthMethod,
    secret: Type.String({ minLength: 1 }),
  },
  { $id: 'StoreCredentialsRequest' },
);
export type StoreCredentialsRequest = Static<typeof StoreCredentialsRequest>;

export const TestBindingRequest = Type.Object({ realm_id: Id, profile_id: OptionalId }, { $id: 'TestBindingRequest' });
export type TestBindingRequest = Static<typeof TestBindingRequest>;

const LoginTarget = { provider: Type.String({ minLength: 1 }), realm_id: Id, binding_id: Id, profile_id: OptionalId };

export const LoginStartRequest = Type.Object({ ...LoginTarget, redirect_uri: Type.String({ minLength: 1 }) }, { $id: 'LoginStartRequest' });
export type LoginStartRequest = Static<typeof LoginStartRequest>;

export const LoginCompleteRequest = Type.Object(
  // The state is the one login/start issued (43 characters); anything longer names no login.
  {
    ...LoginTarget,
    code: Type.String({ minLength: 1 }),
    state: Type.String({ minLength: 1, maxLength: 256 }),
    redirect_uri: Type.String({ minLength: 1 }),
  },
  { $id: 'LoginCompleteRequest' },
);
export type LoginCompleteRequest = Static<typeof LoginCompleteRequest>;

export const DeviceStartRequest = Type.Object(LoginTarget, { $id: 'DeviceStartRequest' });
export type DeviceStartRequest = Static<typeof DeviceStartRequest>;

export const DeviceCompleteRequest = Type.Object(
  { ...LoginTarget, device_code: Type.String({ minLength: 1 }) },
  { $id: 'DeviceCompleteRequest' },
);
export type DeviceCompleteRequest = Static<typeof DeviceCompleteRequest>;

// ---- responses ----

export const ProfileList = Type.Object(
  {
    realm_id: Type.String(),
    auth_profiles: Type.Array(AuthProfileView),
    backend_profiles: Type.Array(BackendProfileView),
    bindings: Type.Array(BindingView),
  },
  { $id: 'AuthProfileList' },
);
export type ProfileList = Static<typeof ProfileList>;

export const StoreCredentialsResponse = Type.Object(
  {
    realm_id: Type.String(),
    binding_id: Type.String(),
    auth_binding: AuthBinding,
    profile_id: Type.String(),
    provider: Type.String(),
    auth_method: AuthMethod,
    stored: Type.Boolean(),
  },
  { $id: 'StoreCredentialsResponse' },
);
export type StoreCredentialsResponse = Static<typeof StoreCredentialsResponse>;

export const BindingResolved = Type.Object(
  { auth_binding: AuthBinding, binding_id: Type.String(), profile_id: Type.String(), auth_profile: AuthProfileView },
  { $id: 'BindingResolved' },
);
export type BindingResolved = Static<typeof BindingResolved>;

export const BindingCleared = Type.Object(
  { realm_id: Type.String(), binding_id: Type.String(), auth_binding: AuthBinding, profile_id: Type.String(), cleared: Type.Boolean() },
  { $id: 'BindingCleared' },
);
export type BindingCleared = Static<typeof BindingCleared>;

export const BindingTestReport = Type.Object(
  {
    state: Type.Literal('valid'),
    auth_binding: AuthBinding,
    binding_id: Type.String(),
    profile_id: Type.String(),
    provider: Type.String(),
    backend_profile_id: Type.String(),
    has_credential: Type.Boolean(),
  },
  { $id: 'BindingTestReport' },
);
export type BindingTestReport = Static<typeof BindingTestReport>;

/** Status timestamps are RFC 3339 strings; optional members are omitted, never null. */
export const BindingStatus = Type.Object(
  {
    realm_id: Type.String(),
    binding_id: Type.String(),
    auth_binding: AuthBinding,
    profile_id: Type.String(),
    provider: Type.String(),
    auth_method: Type.Optional(AuthMethod),
    state: BindingState,
    expires_at: Type.Optional(Type.String()),
    last_refresh_at: Type.Optional(Type.String()),
    account_id: Type.Optional(Type.String()),
    has_refresh_token: Type.Boolean(),
  },
  { $id: 'BindingStatus' },
);
export type BindingStatus = Static<typeof BindingStatus>;

export const LoginStartResponse = Type.Object(
  { authorize_url: Type.String(), state: Type.String(), redirect_uri: Type.String(), provider: Type.String() },
  { $id: 'LoginStartResponse' },
);
export type LoginStartResponse = Static<typeof LoginStartResponse>;

export const LoginReady = Type.Object(
  {
    realm_id: Type.String(),
    binding_id: Type.String(),
    auth_binding: AuthBinding,
    profile_id: Type.String(),
    provider: Type.String(),
    scopes: Type.Array(Type.String()),
    has_refresh_token: Type.Boolean(),
    expires_at: Type.Optional(Type.String()),
    state: Type.Optional(Type.String()),
  },
  { $id: 'LoginReady' },
);
export type LoginReady = Static<typeof LoginReady>;

export const DeviceStartResponse = Type.Object(
  {
    provider: Type.String(),
    device_code: Type.String(),
    user_code: Type.String(),
    verification_uri: Type.String(),
    verification_uri_complete: Type.Optional(Type.String()),
    expires_in: Type.Integer(),
    interval: Type.Integer(),
  },
  { $id: 'DeviceStartResponse' },
);
export type DeviceStartResponse = Static<typeof DeviceStartResponse>;

/** 202 pending, 429 slow_down, 400 access_denied / expired, 200 ready (with the LoginReady members). */
export const DeviceOutcome = Type.Object(
  { state: Type.Union(['pending', 'slow_down', 'access_denied', 'expired', 'ready'].map((s) => Type.Literal(s))) },
  { $id: 'DeviceOutcome', additionalProperties: true },
);

// ---- config ----

/**
 * `[auth.oauth.<provider>]`: the OAuth endpoints and client of one provider. Every field is optional here:
 * a provider with a built-in preset (actors/auth/oauth-presets.ts) takes each field the section leaves out
 * from the preset; other providers need at least `client_id` and `token_endpoint` (checked at login).
 */
export const OAuthProviderConfig = Type.Object(
  {
    /** false: ignore the built-in preset of this provider and use only what this section sets. */
    preset: Type.Optional(Type.Boolean()),
    client_id: Type.Optional(Type.String({ minLength: 1 })),
    client_secret: Type.Optional(Type.String()),
    authorization_endpoint: Type.Optional(Type.String({ minLength: 1 })),
    token_endpoint: Type.Optional(Type.String({ minLength: 1 })),
    device_authorization_endpoint: Type.Optional(Type.String({ minLength: 1 })),
    scopes: Type.Optional(Type.Array(Type.String())),
    /** Extra query parameters of the authorize URL (the OAuth ones Warren sets always win). */
    authorize_params: Type.Optional(Type.Record(Type.String(), Type.String())),
    /** The only redirect URIs login/start accepts (the vendor allow-lists exactly these). */
    redirect_uris: Type.Optional(Type.Array(Type.String({ minLength: 1 }))),
    /** Send the login's `state` with the authorization-code exchange (a vendor that requires it). */
    exchange_sends_state: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: true },
);
export type OAuthProviderConfig = Static<typeof OAuthProviderConfig>;

/** The OAuth client a login or refresh uses: the preset merged with `[auth.oauth.<provider>]`. */
export type EffectiveOAuthConfig = Omit<OAuthProviderConfig, 'preset' | 'client_id' | 'token_endpoint'> & {
  client_id: string;
  token_endpoint: string;
};

const OAuthFlow = Type.Union([Type.Literal('loopback'), Type.Literal('device')]);

/** One entry of GET /auth/oauth/providers: the effective client of a provider, its secret never shown. */
const OAuthProviderView = Type.Object(
  {
    provider: Type.String(),
    /** Where the fields come from: the built-in preset, the realm config, or the preset overridden by config. */
    source: Type.Union([Type.Literal('preset'), Type.Literal('config'), Type.Literal('preset+config')]),
    /** What the preset logs in as (presets only). */
    description: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    has_client_secret: Type.Boolean(),
    authorization_endpoint: Type.Optional(Type.String()),
    token_endpoint: Type.Optional(Type.String()),
    device_authorization_endpoint: Type.Optional(Type.String()),
    scopes: Type.Array(Type.String()),
    authorize_params: Type.Optional(Type.Record(Type.String(), Type.String())),
    redirect_uris: Type.Optional(Type.Array(Type.String())),
    exchange_sends_state: Type.Boolean(),
    /** The logins this client can run now: loopback (PKCE) needs an authorization endpoint, device one a device endpoint. */
    flows: Type.Array(OAuthFlow),
    /** Why no login can use this entry yet (what still needs configuring). */
    problem: Type.Optional(Type.String()),
  },
  { $id: 'OAuthProviderView' },
);

export const OAuthProviderList = Type.Object(
  { realm_id: Type.String(), providers: Type.Array(OAuthProviderView) },
  { $id: 'OAuthProviderList' },
);
export type OAuthProviderList = Static<typeof OAuthProviderList>;

/** `[auth]`: refresh cadence and OAuth providers. */
export const AuthSection = Type.Object(
  {
    /** Refresh an OAuth token this long before it expires (and report `expiring` inside the window). */
    refresh_skew_secs: Type.Optional(Type.Integer({ minimum: 0 })),
    /** How long a started login (state + PKCE verifier, or device code) stays completable. */
    login_ttl_secs: Type.Optional(Type.Integer({ minimum: 1 })),
    oauth: Type.Optional(Type.Record(Type.String(), OAuthProviderConfig)),
  },
  { additionalProperties: true },
);
export type AuthSection = Static<typeof AuthSection>;

// ---- persisted records (Store generic records; every record carries `v`) ----

/** ns `auth.profiles`: a managed-store auth profile. */
export interface AuthProfileRecord {
  v: 1;
  id: string;
  provider: string;
  auth_method: AuthMethod;
  /** True once a credential was stored and not cleared. */
  has_secret: boolean;
  /** Set by logout (the credential was released); cleared by the next store or login. */
  released_at_ms?: number;
  expires_at_ms?: number;
  last_refresh_at_ms?: number;
  account_id?: string;
  scopes?: string[];
  has_refresh_token: boolean;
  /** The outcome of the last failed refresh: `reauth` (grant rejected) or `failed` (anything else). */
  refresh_error?: 'reauth' | 'failed';
}

/** ns `auth.bindings`: a binding created by the store or login routes (config bindings are not copied). */
export interface BindingRecord {
  v: 1;
  id: string;
  backend_profile: string;
  auth_profile: string;
}

/** ns `auth.secrets`: AES-256-GCM ciphertext of the profile's secret material. */
export interface SealedSecret {
  v: 1;
  iv: string;
  tag: string;
  data: string;
}

/** The plaintext inside a SealedSecret. */
export interface SecretMaterial {
  secret?: string;
  access_token?: string;
  refresh_token?: string;
}

/** ns `auth.logins`: a started OAuth login or device flow, keyed by state or device code hash. */
export interface PendingLoginRecord {
  v: 1;
  kind: 'pkce' | 'device';
  provider: string;
  binding_id: string;
  profile_id: string | null;
  redirect_uri?: string;
  /** The PKCE verifier, sealed like a secret. */
  verifier?: SealedSecret;
  expires_at_ms: number;
  interval_secs?: number;
  last_poll_at_ms?: number;
}
