// actors/auth/oauth-client.ts: the OAuth 2.0 calls to a provider's configured endpoints (RFC 6749 code
// and refresh grants with PKCE, RFC 8628 device authorization) of a preset or configured client. Form-encoded requests, JSON replies,
// every failure reduced to an OAuth error code. Called by auth-login.ts and auth-refresher.ts only.
import type { EffectiveOAuthConfig } from '../../contracts/auth.ts';

export interface TokenSet {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
  scopes: string[];
  account_id?: string;
}

/** `error` is the provider's OAuth error code, or `network` / `invalid_response` for transport faults. */
export type TokenOutcome = { ok: true; tokens: TokenSet } | { ok: false; error: string; status: number };

export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval: number;
}

type Obj = Record<string, unknown>;
const TIMEOUT_MS = 30_000;

/** The fetch of OAuth calls: the outbound guard's ([network] rules after DNS) or the global one. */
export type OAuthFetch = typeof fetch;

async function postForm(
  url: string,
  form: Record<string, string>,
  fetchFn: OAuthFetch = fetch,
): Promise<{ status: number; body: Obj } | null> {
  try {
    const res = await fetchFn(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = {};
    }
    return { status: res.status, body: typeof body === 'object' && body !== null ? (body as Obj) : {} };
  } catch {
    return null;
  }
}

function client(cfg: EffectiveOAuthConfig): Record<string, string> {
  return cfg.client_secret ? { client_id: cfg.client_id, client_secret: cfg.client_secret } : { client_id: cfg.client_id };
}

function tokenOutcome(r: Awaited<ReturnType<typeof postForm>>, requestedScopes: string[]): TokenOutcome {
  if (!r) return { ok: false, error: 'network', status: 0 };
  const b = r.body;
  if (r.status < 200 || r.status >= 300 || typeof b.access_token !== 'string' || b.access_token === '') {
    return { ok: false, error: typeof b.error === 'string' ? b.error : 'invalid_response', status: r.status };
  }
  const tokens: TokenSet = {
    access_token: b.access_token,
    scopes: typeof b.scope === 'string' ? b.scope.split(' ').filter(Boolean) : requestedScopes,
  };
  if (typeof b.refresh_token === 'string' && b.refresh_token !== '') tokens.refresh_token = b.refresh_token;
  if (typeof b.expires_in === 'number' && b.expires_in > 0) tokens.expires_in = b.expires_in;
  if (typeof b.account_id === 'string') tokens.account_id = b.account_id;
  return { ok: true, tokens };
}

/** Exchanges an authorization code with its PKCE verifier (and the login's state when the client asks for it). */
export async function exchangeCode(
  cfg: EffectiveOAuthConfig,
  code: string,
  redirectUri: string,
  verifier: string,
  state: string,
  fetchFn?: OAuthFetch,
): Promise<TokenOutcome> {
  const r = await postForm(
    cfg.token_endpoint,
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...(cfg.exchange_sends_state ? { state } : {}),
      ...client(cfg),
    },
    fetchFn,
  );
  return tokenOutcome(r, cfg.scopes ?? []);
}

/** Refresh-token grant. */
export async function refreshTokens(cfg: EffectiveOAuthConfig, refreshToken: string, fetchFn?: OAuthFetch): Promise<TokenOutcome> {
  const r = await postForm(cfg.token_endpoint, { grant_type: 'refresh_token', refresh_token: refreshToken, ...client(cfg) }, fetchFn);
  return tokenOutcome(r, cfg.scopes ?? []);
}

/** RFC 8628 §3.1: device authorization request. Undefined reply fields fall back to the RFC defaults. */
export async function startDeviceAuthorization(
  cfg: EffectiveOAuthConfig,
  fetchFn?: OAuthFetch,
): Promise<DeviceAuthorization | { error: string; status: number }> {
  if (!cfg.device_authorization_endpoint) return { error: 'device_authorization_endpoint is not configured', status: 0 };
  const form: Record<string, string> = { ...client(cfg) };
  if (cfg.scopes?.length) form.scope = cfg.scopes.join(' ');
  const r = await postForm(cfg.device_authorization_endpoint, form, fetchFn);
  if (!r) return { error: 'network', status: 0 };
  const b = r.body;
  if (r.status !== 200 || typeof b.device_code !== 'string' || typeof b.user_code !== 'string' || typeof b.verification_uri !== 'string') {
    return { error: typeof b.error === 'string' ? b.error : 'invalid_response', status: r.status };
  }
  const out: DeviceAuthorization = {
    device_code: b.device_code,
    user_code: b.user_code,
    verification_uri: b.verification_uri,
    expires_in: typeof b.expires_in === 'number' ? b.expires_in : 1800,
    interval: typeof b.interval === 'number' && b.interval >= 0 ? b.interval : 5,
  };
  if (typeof b.verification_uri_complete === 'string') out.verification_uri_complete = b.verification_uri_complete;
  return out;
}

/** RFC 8628 §3.4: one device access token request. */
export async function pollDeviceToken(cfg: EffectiveOAuthConfig, deviceCode: string, fetchFn?: OAuthFetch): Promise<TokenOutcome> {
  const r = await postForm(
    cfg.token_endpoint,
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: deviceCode,
      ...client(cfg),
    },
    fetchFn,
  );
  return tokenOutcome(r, cfg.scopes ?? []);
}
