// actors/auth/credential-store.ts: the realm credential store. Bindings and auth profiles live in the
// Store's generic records (namespaces below), secrets sealed with the realm key; config-declared
// `[realm.<id>]` backends, auth profiles and bindings are merged in. auth-service.ts and auth-login.ts
// are the callers; nothing here returns or logs secret material except readSecret.
import {
  ID_MAX_LENGTH,
  isWellFormedId,
  type AuthBinding,
  type AuthProfileRecord,
  type BackendProfileView,
  type BindingRecord,
  type PendingLoginRecord,
  type SealedSecret,
  type SecretMaterial,
} from '../../contracts/auth.ts';
import type { Config } from '../../contracts/config.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { PROVIDER_NAMES } from '../../providers/registry.ts';
import type { Store, StoreOp } from '../../storage/store.ts';
import { realmConnections, type ConfigAuthProfile, type RealmConnections } from './auth-config.ts';
import type { RealmCipher } from './realm-key.ts';
import {
  AUTH_BINDING_KIND,
  AUTH_LOGIN_KIND,
  AUTH_PROFILE_KIND,
  AUTH_SECRET_KIND,
  readRecord,
  readRecords,
} from '../../storage/record-kinds.ts';

export const NS = {
  profiles: 'auth.profiles',
  bindings: 'auth.bindings',
  secrets: 'auth.secrets',
  logins: 'auth.logins',
} as const;

/** A binding resolved to its backend profile and auth profile. */
export interface ResolvedBinding {
  ref: AuthBinding;
  bindingId: string;
  profileId: string;
  provider: string;
  backend: BackendProfileView;
  source: 'config' | 'store';
  defaultModel?: string;
  /** The config declaration of the auth profile, when there is one. */
  configProfile?: ConfigAuthProfile;
  profile?: AuthProfileRecord;
}

function isProviderName(p: string): boolean {
  return (PROVIDER_NAMES as readonly string[]).includes(p);
}

/**
 * A binding or profile id from a path, query or selector: 1-128 characters without control characters
 * (the body schemas' rule, contracts/auth.ts), else 400 (wire-notes §2.9: bad ids are 400, unknown ones 404).
 */
export function checkId(what: 'binding_id' | 'profile_id', id: string): void {
  if (!isWellFormedId(id)) {
    throw new ServiceError('BAD_REQUEST', `${what} must be 1-${ID_MAX_LENGTH} characters without control characters`);
  }
}

export class CredentialStore {
  constructor(
    private readonly store: Store,
    /** Opened at startup (the key file may need creating); every sealing operation awaits it. */
    private readonly cipher: Promise<RealmCipher>,
    readonly realmId: string,
    private readonly config: () => Config,
  ) {}

  /** Resolves once the realm key is open (rejects when it cannot be read or created). */
  async ready(): Promise<void> {
    await this.cipher;
  }

  /** Parsed once per config object (configs are deeply frozen and replaced, never edited, on a write). */
  private parsed: { config: Config; conn: RealmConnections } | null = null;

  connections(): RealmConnections {
    const config = this.config();
    if (this.parsed?.config !== config) this.parsed = { config, conn: realmConnections(config, this.realmId) };
    return this.parsed.conn;
  }

  /** The active realm only: a request naming another realm is never served from this one. */
  checkRealm(realmId: string): void {
    if (realmId !== this.realmId) throw new ServiceError('NOT_FOUND', `Unknown realm: ${realmId}`);
  }

  /** A backend profile by id: config `[realm.<id>.backend.<id>]`, or the implicit one named after a provider. */
  backend(id: string, conn = this.connections()): BackendProfileView | undefined {
    const b = conn.backends.get(id);
    if (b) return { id, ...b };
    return isProviderName(id) ? { id, provider: id, backend_kind: 'default' } : undefined;
  }

  async bindingDecl(
    id: string,
    conn = this.connections(),
  ): Promise<{ backend_profile: string; auth_profile?: string; default_model?: string; source: 'config' | 'store' } | undefined> {
    const c = conn.bindings.get(id);
    if (c) return { ...c, source: 'config' };
    const r = await readRecord<BindingRecord>(this.store, AUTH_BINDING_KIND, id);
    return r ? { backend_profile: r.backend_profile, auth_profile: r.auth_profile, source: 'store' } : undefined;
  }

  /**
   * Resolves binding + optional profile override. NOT_FOUND for an unknown binding; BAD_REQUEST when
   * its backend profile is unknown or the auth profile belongs to another provider.
   */
  async resolve(bindingId: string, profileOverride?: string | null): Promise<ResolvedBinding> {
    checkId('binding_id', bindingId);
    if (profileOverride) checkId('profile_id', profileOverride);
    const conn = this.connections();
    const decl = await this.bindingDecl(bindingId, conn);
    if (!decl) throw new ServiceError('NOT_FOUND', `Unknown binding '${bindingId}' in realm '${this.realmId}'`);
    const backend = this.backend(decl.backend_profile, conn);
    if (!backend) throw new ServiceError('BAD_REQUEST', `binding '${bindingId}' names unknown backend profile '${decl.backend_profile}'`);
    const profileId = profileOverride ?? decl.auth_profile ?? bindingId;
    const configProfile = conn.authProfiles.get(profileId);
    const profile = await readRecord<AuthProfileRecord>(this.store, AUTH_PROFILE_KIND, profileId);
    const profileProvider = configProfile?.provider ?? profile?.provider;
    if (profileProvider !== undefined && profileProvider !== backend.provider) {
      throw new ServiceError(
        'BAD_REQUEST',
        `auth profile '${profileId}' is for provider '${profileProvider}', binding '${bindingId}' for '${backend.provider}'`,
      );
    }
    const ref: AuthBinding = { realm: this.realmId, binding: bindingId };
    if (profileOverride) ref.profile = profileOverride;
    const out: ResolvedBinding = { ref, bindingId, profileId, provider: backend.provider, backend, source: decl.source };
    if (decl.default_model) out.defaultModel = decl.default_model;
    if (configProfile) out.configProfile = configProfile;
    if (profile) out.profile = profile;
    return out;
  }

  /**
   * Where a credential for `binding` (+ optional profile) of `provider` with `method` goes, checked
   * (wire-notes §2.9): provider must be known and match the binding; a config profile must be sourced
   * from the managed store; an existing profile must use the same method. A missing binding is created
   * with the provider's default backend profile (returned as `newBinding`, written with the profile).
   */
  async target(
    provider: string,
    bindingId: string,
    profileOverride: string | null | undefined,
    method: string,
  ): Promise<{ profileId: string; newBinding?: BindingRecord }> {
    if (!isProviderName(provider)) throw new ServiceError('BAD_REQUEST', `unknown provider '${provider}'`);
    const decl = await this.bindingDecl(bindingId);
    if (!decl) {
      const profileId = profileOverride ?? bindingId;
      const existing = await readRecord<AuthProfileRecord>(this.store, AUTH_PROFILE_KIND, profileId);
      if (existing && existing.provider !== provider)
        throw new ServiceError('BAD_REQUEST', `auth profile '${profileId}' is for provider '${existing.provider}'`);
      if (existing && !deleted(existing) && existing.auth_method !== method)
        throw new ServiceError('BAD_REQUEST', `auth profile '${profileId}' uses auth_method '${existing.auth_method}', not '${method}'`);
      return { profileId, newBinding: { v: 1, id: bindingId, backend_profile: provider, auth_profile: profileId } };
    }
    const r = await this.resolve(bindingId, profileOverride);
    if (r.provider !== provider)
      throw new ServiceError('BAD_REQUEST', `binding '${bindingId}' is for provider '${r.provider}', not '${provider}'`);
    if (r.configProfile && r.configProfile.source_kind !== 'managed_store') {
      throw new ServiceError(
        'BAD_REQUEST',
        `auth profile '${r.profileId}' is sourced from ${r.configProfile.source_kind}, not the managed store`,
      );
    }
    // A deleted profile's record only remembers its method for the status route: a new store may change it.
    const existingMethod = (r.profile && !deleted(r.profile) ? r.profile.auth_method : undefined) ?? r.configProfile?.auth_method;
    if (existingMethod !== undefined && existingMethod !== method) {
      throw new ServiceError('BAD_REQUEST', `auth profile '${r.profileId}' uses auth_method '${existingMethod}', not '${method}'`);
    }
    return { profileId: r.profileId };
  }

  private aad(profileId: string): string {
    return `${this.realmId}/${profileId}`;
  }

  /** The decrypted material (undefined when none is stored); `readable` false when it does not open. */
  async readSecret(profileId: string): Promise<{ material?: SecretMaterial; readable: boolean }> {
    const sealed = await readRecord<SealedSecret>(this.store, AUTH_SECRET_KIND, profileId);
    if (!sealed) return { readable: true };
    const material = (await this.cipher).open(this.aad(profileId), sealed);
    return material ? { material, readable: true } : { readable: false };
  }

  /** Writes the profile record (and the sealed material, and a new binding) in one atomic commit. */
  async putProfile(profile: AuthProfileRecord, material?: SecretMaterial, binding?: BindingRecord): Promise<void> {
    const ops: StoreOp[] = [{ op: 'putRecord', ns: NS.profiles, key: profile.id, value: profile }];
    if (material)
      ops.push({ op: 'putRecord', ns: NS.secrets, key: profile.id, value: (await this.cipher).seal(this.aad(profile.id), material) });
    if (binding) ops.push({ op: 'putRecord', ns: NS.bindings, key: binding.id, value: binding });
    await this.store.commit(ops);
  }

  /**
   * Removes the secret. Logout keeps the profile marked released; delete keeps a secret-less record of
   * the profile (state `absent`) so the binding's status still names its provider and auth_method.
   */
  async clear(profile: AuthProfileRecord | undefined, profileId: string, mode: 'delete' | 'release', nowMs: number): Promise<boolean> {
    const had = profile?.has_secret === true;
    const ops: StoreOp[] = [{ op: 'deleteRecord', ns: NS.secrets, key: profileId }];
    if (profile) {
      const cleared: AuthProfileRecord = {
        v: 1,
        id: profile.id,
        provider: profile.provider,
        auth_method: profile.auth_method,
        has_secret: false,
        has_refresh_token: false,
        ...(mode === 'release' ? { released_at_ms: nowMs } : {}),
      };
      ops.push({ op: 'putRecord', ns: NS.profiles, key: profileId, value: cleared });
    }
    await this.store.commit(ops);
    return had;
  }

  async listProfiles(): Promise<AuthProfileRecord[]> {
    return (await readRecords<AuthProfileRecord>(this.store, AUTH_PROFILE_KIND)).map((r) => r.value);
  }

  async listBindings(): Promise<BindingRecord[]> {
    return (await readRecords<BindingRecord>(this.store, AUTH_BINDING_KIND)).map((r) => r.value);
  }

  async sealVerifier(key: string, verifier: string): Promise<SealedSecret> {
    return (await this.cipher).seal(`${this.realmId}/login/${key}`, { secret: verifier });
  }

  async openVerifier(key: string, sealed: SealedSecret): Promise<string | undefined> {
    return (await this.cipher).open(`${this.realmId}/login/${key}`, sealed)?.secret;
  }

  getLogin(key: string): Promise<PendingLoginRecord | undefined> {
    return readRecord<PendingLoginRecord>(this.store, AUTH_LOGIN_KIND, key);
  }

  putLogin(key: string, rec: PendingLoginRecord): Promise<void> {
    return this.store.commit([{ op: 'putRecord', ns: NS.logins, key, value: rec }]);
  }

  deleteLogin(key: string): Promise<void> {
    return this.store.commit([{ op: 'deleteRecord', ns: NS.logins, key }]);
  }
}

/** A profile whose credential was deleted (not released): its record only keeps provider and auth_method. */
function deleted(p: AuthProfileRecord): boolean {
  return !p.has_secret && p.released_at_ms === undefined;
}
