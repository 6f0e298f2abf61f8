// actors/auth/auth-login.ts: OAuth logins that store tokens under a binding (SPEC.md "Authentication"
// item 4). Loopback login: the server owns the state and the PKCE S256 verifier, kept sealed in the
// `auth.logins` records until completion. Device-code login (RFC 8628): the server enforces the provider's
// polling interval and honours slow_down. Start and complete must name the same realm, binding, profile.
import { createHash, randomBytes } from 'node:crypto';
import type {
  AuthBinding,
  AuthProfileRecord,
  DeviceCompleteRequest,
  DeviceStartRequest,
  DeviceStartResponse,
  LoginCompleteRequest,
  LoginReady,
  LoginStartRequest,
  LoginStartResponse,
  OAuthProviderList,
  PendingLoginRecord,
} from '../../contracts/auth.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { authSettings, oauthProvider, oauthProviderViews } from './auth-config.ts';
import type { AuthService, AuthServiceDeps } from './auth-service.ts';
import { exchangeCode, pollDeviceToken, startDeviceAuthorization, type TokenOutcome, type TokenSet } from './oauth-client.ts';

const b64url = (buf: Buffer): string => buf.toString('base64url');
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The device-complete answer: status plus `{state, ...}` (202 pending, 429 slow_down, 400, 200 ready). */
export interface DeviceOutcomeReply {
  status: number;
  body: Record<string, unknown>;
}

function checkLoopback(uri: string): void {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    throw new ServiceError('BAD_REQUEST', `redirect_uri is not a URL: ${uri}`);
  }
  if (u.protocol !== 'http:' || !LOOPBACK_HOSTS.has(u.hostname)) {
    throw new ServiceError('BAD_REQUEST', 'redirect_uri must be a loopback callback (http://127.0.0.1, http://localhost or http://[::1])');
  }
}

/** The provider's failure to issue tokens: its OAuth refusals are 400, transport and server faults 502. */
function tokenFailure(outcome: Extract<TokenOutcome, { ok: false }>, what: string): ServiceError {
  const providerFault = outcome.status === 0 || outcome.status >= 500 || outcome.error === 'invalid_response';
  return new ServiceError(providerFault ? 'PROVIDER_ERROR' : 'BAD_REQUEST', `${what} failed: ${outcome.error}`);
}

export class AuthLogins {
  constructor(
    private readonly service: AuthService,
    private readonly deps: AuthServiceDeps,
  ) {}

  private get creds() {
    return this.deps.credentials;
  }

  private sameTarget(rec: PendingLoginRecord, req: { provider: string; binding_id: string; profile_id?: string | null }): boolean {
    return rec.provider === req.provider && rec.binding_id === req.binding_id && (rec.profile_id ?? null) === (req.profile_id ?? null);
  }

  /** GET /auth/oauth/providers: the clients a login would use now (presets laid under the config). */
  providers(): OAuthProviderList {
    return { realm_id: this.creds.realmId, providers: oauthProviderViews(this.deps.config()) };
  }

  async start(body: LoginStartRequest): Promise<LoginStartResponse> {
    this.creds.checkRealm(body.realm_id);
    const cfg = oauthProvider(this.deps.config(), body.provider);
    if (!cfg.authorization_endpoint) throw new ServiceError('BAD_REQUEST', `[auth.oauth.${body.provider}] has no authorization_endpoint`);
    checkLoopback(body.redirect_uri);
    if (cfg.redirect_uris && !cfg.redirect_uris.includes(body.redirect_uri)) {
      throw new ServiceError(
        'BAD_REQUEST',
        `the ${body.provider} OAuth client accepts only redirect_uri ${cfg.redirect_uris.join(' or ')} ([auth.oauth.${body.provider}] redirect_uris)`,
      );
    }
    await this.creds.target(body.provider, body.binding_id, body.profile_id, 'oauth');
    const state = b64url(randomBytes(32));
    const verifier = b64url(randomBytes(32));
    const challenge = b64url(createHash('sha256').update(verifier).digest());
    await this.creds.putLogin(`pkce:${state}`, {
      v: 1,
      kind: 'pkce',
      provider: body.provider,
      binding_id: body.binding_id,
      profile_id: body.profile_id ?? null,
      redirect_uri: body.redirect_uri,
      verifier: await this.creds.sealVerifier(state, verifier),
      expires_at_ms: this.deps.now() + authSettings(this.deps.config()).loginTtlMs,
    });
    const url = new URL(cfg.authorization_endpoint);
    for (const [k, v] of Object.entries(cfg.authorize_params ?? {})) url.searchParams.set(k, v);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', cfg.client_id);
    url.searchParams.set('redirect_uri', body.redirect_uri);
    if (cfg.scopes?.length) url.searchParams.set('scope', cfg.scopes.join(' '));
    url.searchParams.set('state', state);
    url.searchParams.set('code_challenge', challenge);
    url.searchParams.set('code_challenge_method', 'S256');
    return { authorize_url: url.toString(), state, redirect_uri: body.redirect_uri, provider: body.provider };
  }

  async complete(body: LoginCompleteRequest): Promise<LoginReady> {
    this.creds.checkRealm(body.realm_id);
    const key = `pkce:${body.state}`;
    const rec = await this.creds.getLogin(key);
    if (!rec || rec.kind !== 'pkce' || rec.expires_at_ms <= this.deps.now()) {
      if (rec) await this.creds.deleteLogin(key);
      throw new ServiceError('BAD_REQUEST', 'unknown or expired login state');
    }
    if (!this.sameTarget(rec, body) || rec.redirect_uri !== body.redirect_uri) {
      throw new ServiceError(
        'BAD_REQUEST',
        'login/complete must name the same provider, realm, binding, profile and redirect_uri as login/start',
      );
    }
    // Single use: the state and verifier are gone whatever the exchange answers.
    await this.creds.deleteLogin(key);
    const verifier = rec.verifier ? await this.creds.openVerifier(body.state, rec.verifier) : undefined;
    if (!verifier) throw new ServiceError('BAD_REQUEST', 'login state can no longer be read; start again');
    const cfg = oauthProvider(this.deps.config(), body.provider);
    const outcome = await exchangeCode(cfg, body.code, body.redirect_uri, verifier, body.state, this.deps.fetch);
    if (!outcome.ok) throw tokenFailure(outcome, 'authorization code exchange');
    return this.storeTokens(body, outcome.tokens);
  }

  async deviceStart(body: DeviceStartRequest): Promise<DeviceStartResponse> {
    this.creds.checkRealm(body.realm_id);
    const cfg = oauthProvider(this.deps.config(), body.provider);
    if (!cfg.device_authorization_endpoint)
      throw new ServiceError(
        'BAD_REQUEST',
        `[auth.oauth.${body.provider}] has no device_authorization_endpoint (set one for a client that supports RFC 8628 device login)`,
      );
    await this.creds.target(body.provider, body.binding_id, body.profile_id, 'oauth');
    const d = await startDeviceAuthorization(cfg, this.deps.fetch);
    if ('error' in d)
      throw new ServiceError(
        d.status >= 400 && d.status < 500 ? 'BAD_REQUEST' : 'PROVIDER_ERROR',
        `device authorization failed: ${d.error}`,
      );
    await this.creds.putLogin(deviceKey(d.device_code), {
      v: 1,
      kind: 'device',
      provider: body.provider,
      binding_id: body.binding_id,
      profile_id: body.profile_id ?? null,
      expires_at_ms: this.deps.now() + d.expires_in * 1000,
      interval_secs: d.interval,
    });
    return { provider: body.provider, ...d };
  }

  async deviceComplete(body: DeviceCompleteRequest): Promise<DeviceOutcomeReply> {
    this.creds.checkRealm(body.realm_id);
    const key = deviceKey(body.device_code);
    const rec = await this.creds.getLogin(key);
    if (!rec || rec.kind !== 'device') throw new ServiceError('BAD_REQUEST', 'unknown device_code');
    if (!this.sameTarget(rec, body)) {
      throw new ServiceError('BAD_REQUEST', 'device/complete must name the same provider, realm, binding and profile as device/start');
    }
    const now = this.deps.now();
    if (rec.expires_at_ms <= now) {
      await this.creds.deleteLogin(key);
      return { status: 400, body: { state: 'expired' } };
    }
    // The provider's interval is enforced here, so a client polling too fast never reaches the provider.
    const intervalMs = (rec.interval_secs ?? 5) * 1000;
    if (rec.last_poll_at_ms !== undefined && now - rec.last_poll_at_ms < intervalMs) return { status: 429, body: { state: 'slow_down' } };
    const outcome = await pollDeviceToken(oauthProvider(this.deps.config(), body.provider), body.device_code, this.deps.fetch);
    if (outcome.ok) {
      await this.creds.deleteLogin(key);
      return { status: 200, body: { state: 'ready', ...(await this.storeTokens(body, outcome.tokens)) } };
    }
    switch (outcome.error) {
      case 'authorization_pending':
        await this.creds.putLogin(key, { ...rec, last_poll_at_ms: now });
        return { status: 202, body: { state: 'pending' } };
      case 'slow_down':
        // RFC 8628 §3.5: every slow_down adds 5 seconds to the interval.
        await this.creds.putLogin(key, { ...rec, last_poll_at_ms: now, interval_secs: (rec.interval_secs ?? 5) + 5 });
        return { status: 429, body: { state: 'slow_down' } };
      case 'access_denied':
        await this.creds.deleteLogin(key);
        return { status: 400, body: { state: 'access_denied' } };
      case 'expired_token':
        await this.creds.deleteLogin(key);
        return { status: 400, body: { state: 'expired' } };
      default:
        throw tokenFailure(outcome, 'device token request');
    }
  }

  private async storeTokens(req: { provider: string; binding_id: string; profile_id?: string | null }, t: TokenSet): Promise<LoginReady> {
    const { profileId, newBinding } = await this.creds.target(req.provider, req.binding_id, req.profile_id, 'oauth');
    const now = this.deps.now();
    const record: AuthProfileRecord = {
      v: 1,
      id: profileId,
      provider: req.provider,
      auth_method: 'oauth',
      has_secret: true,
      has_refresh_token: t.refresh_token !== undefined,
      scopes: t.scopes,
    };
    if (t.expires_in !== undefined) record.expires_at_ms = now + t.expires_in * 1000;
    if (t.account_id) record.account_id = t.account_id;
    await this.creds.putProfile(
      record,
      { access_token: t.access_token, ...(t.refresh_token ? { refresh_token: t.refresh_token } : {}) },
      newBinding,
    );
    this.service.refresher.schedule(record);
    this.deps.log.info({ bindingId: req.binding_id, profileId, provider: req.provider }, 'oauth login stored');
    const ref: AuthBinding = { realm: this.creds.realmId, binding: req.binding_id, ...(req.profile_id ? { profile: req.profile_id } : {}) };
    const out: LoginReady = {
      realm_id: this.creds.realmId,
      binding_id: req.binding_id,
      auth_binding: ref,
      profile_id: profileId,
      provider: req.provider,
      scopes: t.scopes,
      has_refresh_token: t.refresh_token !== undefined,
    };
    if (record.expires_at_ms !== undefined) out.expires_at = new Date(record.expires_at_ms).toISOString();
    return out;
  }
}

/** Device codes are stored by hash: the record key is not a usable credential. */
function deviceKey(deviceCode: string): string {
  return `device:${createHash('sha256').update(deviceCode).digest('base64url')}`;
}
