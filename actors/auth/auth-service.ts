// actors/auth/auth-service.ts: the credential operations behind the /auth binding routes (store, list,
// resolve, clear, test, status, logout) and the turn-time credential of a session (selector or realm
// default binding, refreshed when due). OAuth logins are in auth-login.ts, refresh in auth-refresher.ts.
import type { Logger } from 'pino';
import type {
  AuthBinding,
  AuthProfileRecord,
  BindingCleared,
  BindingResolved,
  BindingStatus,
  BindingTestReport,
  ProfileList,
  StoreCredentialsRequest,
  StoreCredentialsResponse,
} from '../../contracts/auth.ts';
import type { Config } from '../../contracts/config.ts';
import { isServiceError, ServiceError } from '../../contracts/errors.ts';
import type { ProviderCredential } from '../../providers/provider.ts';
import { authSettings } from './auth-config.ts';
import { AuthRefresher } from './auth-refresher.ts';
import { bindingState, refreshDue } from './binding-status.ts';
import { checkId, CredentialStore, type ResolvedBinding } from './credential-store.ts';

export interface AuthServiceDeps {
  credentials: CredentialStore;
  config(): Config;
  env: NodeJS.ProcessEnv;
  now(): number;
  log: Logger;
  /** fetch of the OAuth endpoints (the outbound guard's); default: the global one. */
  fetch?: typeof fetch;
}

const iso = (ms: number | undefined): string | undefined => (ms === undefined ? undefined : new Date(ms).toISOString());

/** PROVIDER_ERROR for a binding that cannot supply a credential at call time (never retried). */
function credentialFailure(r: { provider: string; bindingId: string }, model: string, why: string): ServiceError {
  return new ServiceError('PROVIDER_ERROR', `auth binding '${r.bindingId}' ${why}`, {
    error: { kind: 'llm_failure', provider: r.provider, model, terminal: true, retryable: false, reason: 'auth' },
  });
}

export class AuthService {
  readonly refresher: AuthRefresher;
  private readonly creds: CredentialStore;

  /** Settles once stored OAuth credentials have their refresh timers (the realm key is open by then). */
  private readonly started: Promise<void>;

  constructor(private readonly deps: AuthServiceDeps) {
    this.creds = deps.credentials;
    this.refresher = new AuthRefresher(deps);
    this.started = this.creds.ready().then(() => this.refresher.start());
    this.started.catch((err: unknown) => deps.log.error({ err }, 'auth credential store failed to start'));
  }

  get realmId(): string {
    return this.creds.realmId;
  }

  /** Waits for startup (a failure to open the realm key fails every credential operation). */
  ready(): Promise<void> {
    return this.started;
  }

  async close(): Promise<void> {
    await this.started.catch(() => {});
    await this.refresher.close();
  }

  private skewMs(): number {
    return authSettings(this.deps.config()).skewMs;
  }

  async list(realmId: string): Promise<ProfileList> {
    this.creds.checkRealm(realmId);
    const conn = this.creds.connections();
    const profiles = new Map<string, ProfileList['auth_profiles'][number]>();
    for (const [id, p] of conn.authProfiles)
      profiles.set(id, {
        id,
        provider: p.provider,
        ...(p.auth_method ? { auth_method: p.auth_method as 'api_key' } : {}),
        source_kind: p.source_kind,
      });
    for (const p of await this.creds.listProfiles()) {
      if (!profiles.has(p.id))
        profiles.set(p.id, { id: p.id, provider: p.provider, auth_method: p.auth_method, source_kind: 'managed_store' });
    }
    const bindings = new Map<string, ProfileList['bindings'][number]>();
    for (const [id, b] of conn.bindings)
      bindings.set(id, {
        id,
        backend_profile: b.backend_profile,
        auth_profile: b.auth_profile ?? id,
        ...(b.default_model ? { default_model: b.default_model } : {}),
      });
    for (const b of await this.creds.listBindings())
      if (!bindings.has(b.id)) bindings.set(b.id, { id: b.id, backend_profile: b.backend_profile, auth_profile: b.auth_profile });
    const backendIds = new Set<string>([...conn.backends.keys(), ...[...bindings.values()].map((b) => b.backend_profile)]);
    const backends = [...backendIds].map((id) => this.creds.backend(id, conn)).filter((b) => b !== undefined);
    const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    return {
      realm_id: this.realmId,
      auth_profiles: [...profiles.values()].sort(byId),
      backend_profiles: backends.sort(byId),
      bindings: [...bindings.values()].sort(byId),
    };
  }

  /** POST /auth/profiles: creates the binding when it does not exist (backend = the provider's default). */
  async store(body: StoreCredentialsRequest): Promise<StoreCredentialsResponse> {
    this.creds.checkRealm(body.realm_id);
    const { profileId, newBinding } = await this.creds.target(body.provider, body.binding_id, body.profile_id, body.auth_method);
    const record: AuthProfileRecord = {
      v: 1,
      id: profileId,
      provider: body.provider,
      auth_method: body.auth_method,
      has_secret: true,
      has_refresh_token: false,
    };
    await this.creds.putProfile(record, { secret: body.secret }, newBinding);
    this.refresher.forget(profileId);
    const ref: AuthBinding = { realm: this.realmId, binding: body.binding_id, ...(body.profile_id ? { profile: body.profile_id } : {}) };
    return {
      realm_id: this.realmId,
      binding_id: body.binding_id,
      auth_binding: ref,
      profile_id: profileId,
      provider: body.provider,
      auth_method: body.auth_method,
      stored: true,
    };
  }

  async get(bindingId: string, realmId: string, profileId?: string): Promise<BindingResolved> {
    this.creds.checkRealm(realmId);
    const r = await this.creds.resolve(bindingId, profileId);
    const method = r.profile?.auth_method ?? r.configProfile?.auth_method;
    return {
      auth_binding: r.ref,
      binding_id: bindingId,
      profile_id: r.profileId,
      auth_profile: {
        id: r.profileId,
        provider: r.provider,
        ...(method ? { auth_method: method as 'api_key' } : {}),
        source_kind: r.configProfile?.source_kind ?? 'managed_store',
      },
    };
  }

  /** DELETE (mode delete) and logout (mode release, which publishes the release as state `released`). */
  async clear(bindingId: string, realmId: string, profileId: string | undefined, mode: 'delete' | 'release'): Promise<BindingCleared> {
    this.creds.checkRealm(realmId);
    const r = await this.creds.resolve(bindingId, profileId);
    await this.refresher.settle(r.profileId);
    const profile = await this.creds.resolve(bindingId, profileId).then((x) => x.profile);
    const cleared = await this.creds.clear(profile, r.profileId, mode, this.deps.now());
    this.refresher.forget(r.profileId);
    this.deps.log.info(
      { bindingId, profileId: r.profileId, mode },
      mode === 'release' ? 'auth binding released' : 'auth credentials cleared',
    );
    return { realm_id: this.realmId, binding_id: bindingId, auth_binding: r.ref, profile_id: r.profileId, cleared };
  }

  /** POST .../test: resolution report; `ok: false` carries the message of the 422 body. */
  async test(
    bindingId: string,
    realmId: string,
    profileId?: string | null,
  ): Promise<{ ok: true; report: BindingTestReport } | { ok: false; error: string }> {
    this.creds.checkRealm(realmId);
    // A malformed id is bad input (400), not a binding that failed to resolve (422).
    checkId('binding_id', bindingId);
    let r: ResolvedBinding;
    try {
      r = await this.creds.resolve(bindingId, profileId);
    } catch (err) {
      if (isServiceError(err) && err.status < 500) return { ok: false, error: `Binding resolution failed: ${err.message}` };
      throw err;
    }
    const has =
      r.configProfile?.source_kind === 'env'
        ? !!r.configProfile.env && !!this.deps.env[r.configProfile.env]
        : r.profile?.has_secret === true && (await this.creds.readSecret(r.profileId)).readable;
    return {
      ok: true,
      report: {
        state: 'valid',
        auth_binding: r.ref,
        binding_id: bindingId,
        profile_id: r.profileId,
        provider: r.provider,
        backend_profile_id: r.backend.id,
        has_credential: has,
      },
    };
  }

  async status(bindingId: string, realmId: string, profileId?: string): Promise<BindingStatus> {
    this.creds.checkRealm(realmId);
    const first = await this.creds.resolve(bindingId, profileId);
    // A refresh already under way settles first, so the state read is never half-written.
    await this.refresher.settle(first.profileId);
    const r = await this.creds.resolve(bindingId, profileId);
    const p = r.profile;
    const env = r.configProfile?.source_kind === 'env' ? { set: !!r.configProfile.env && !!this.deps.env[r.configProfile.env] } : undefined;
    const readable = p?.has_secret ? (await this.creds.readSecret(r.profileId)).readable : true;
    const state = bindingState({ profile: p, secretReadable: readable, env, nowMs: this.deps.now(), skewMs: this.skewMs() });
    const out: BindingStatus = {
      realm_id: this.realmId,
      binding_id: bindingId,
      auth_binding: r.ref,
      profile_id: r.profileId,
      provider: r.provider,
      state,
      has_refresh_token: p?.has_refresh_token === true,
    };
    const method = p?.auth_method ?? r.configProfile?.auth_method;
    if (method) out.auth_method = method as 'api_key';
    if (p?.expires_at_ms !== undefined) out.expires_at = iso(p.expires_at_ms);
    if (p?.last_refresh_at_ms !== undefined) out.last_refresh_at = iso(p.last_refresh_at_ms);
    if (p?.account_id) out.account_id = p.account_id;
    return out;
  }

  /**
   * Checks a create/continue selector before anything is created: the active realm, a known binding and
   * provider agreement. Answers the binding's provider (and default model) for the session to use.
   */
  async checkSelector(ref: AuthBinding): Promise<{ provider: string; defaultModel?: string }> {
    if (ref.realm !== this.realmId)
      throw new ServiceError('BAD_REQUEST', `auth_binding names realm '${ref.realm}', but this server serves realm '${this.realmId}'`);
    try {
      const r = await this.creds.resolve(ref.binding, ref.profile);
      return { provider: r.provider, ...(r.defaultModel ? { defaultModel: r.defaultModel } : {}) };
    } catch (err) {
      if (isServiceError(err) && err.code === 'NOT_FOUND')
        throw new ServiceError('BAD_REQUEST', `unknown auth binding '${ref.binding}' in realm '${this.realmId}'`);
      throw err;
    }
  }

  /**
   * The credential for one provider call: the session's selector, else the realm's default binding for
   * the provider (`[realm.<id>] default_bindings.<provider>` or `default_binding`), else undefined (the
   * `<PROVIDER>_API_KEY` environment). Refreshes a due OAuth token first.
   */
  async credentialFor(ref: AuthBinding | undefined, provider: string, model: string): Promise<ProviderCredential | undefined> {
    let bindingId: string;
    let profileId: string | undefined;
    if (ref) {
      await this.checkSelector(ref);
      bindingId = ref.binding;
      profileId = ref.profile;
    } else {
      const conn = this.creds.connections();
      const dflt = conn.defaultBindings.get(provider) ?? conn.defaultBinding;
      if (!dflt) return undefined;
      bindingId = dflt;
    }
    let r: ResolvedBinding;
    try {
      r = await this.creds.resolve(bindingId, profileId);
    } catch (err) {
      if (isServiceError(err) && err.status < 500)
        throw credentialFailure({ provider, bindingId }, model, `cannot be resolved: ${err.message}`);
      throw err;
    }
    if (r.provider !== provider) {
      // A realm-wide default bound to another provider does not apply; an explicit selector must match.
      if (!ref) return undefined;
      throw new ServiceError(
        'BAD_REQUEST',
        `auth binding '${bindingId}' is for provider '${r.provider}', but the session uses '${provider}'`,
      );
    }
    const baseUrl = r.backend.base_url;
    const withBase = (c: ProviderCredential): ProviderCredential => (baseUrl ? { ...c, baseUrl } : c);
    if (r.configProfile?.source_kind === 'env') {
      const value = r.configProfile.env ? this.deps.env[r.configProfile.env] : undefined;
      if (!value) throw credentialFailure(r, model, `reads ${r.configProfile.env ?? 'an unnamed variable'}, which is not set`);
      return withBase({ secret: value, style: styleOf(r.configProfile.auth_method) });
    }
    await this.refresher.settle(r.profileId);
    if (refreshDue(r.profile, this.deps.now(), this.skewMs())) {
      await this.refresher.refresh(r.profileId);
      r = await this.creds.resolve(bindingId, profileId);
    }
    const p = r.profile;
    const { material, readable } = await this.creds.readSecret(r.profileId);
    const secret = material?.access_token ?? material?.secret;
    const state = bindingState({ profile: p, secretReadable: readable, nowMs: this.deps.now(), skewMs: this.skewMs() });
    if (!p || !secret) throw credentialFailure(r, model, `has no usable credential (state: ${state})`);
    if (p.expires_at_ms !== undefined && p.expires_at_ms <= this.deps.now())
      throw credentialFailure(r, model, `holds an expired token (state: ${state})`);
    return withBase({ secret, style: styleOf(p.auth_method) });
  }
}

function styleOf(method: string | undefined): ProviderCredential['style'] {
  if (method === 'azure_api_key') return 'azure';
  if (method === 'static_bearer' || method === 'oauth') return 'bearer';
  return 'native';
}
