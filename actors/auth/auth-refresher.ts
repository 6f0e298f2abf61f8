// actors/auth/auth-refresher.ts: refreshes OAuth tokens before they expire. Each stored OAuth credential
// with a refresh token gets one timer due `refresh_skew_secs` before expiry; the turn-time resolver also
// refreshes a due token on use. Concurrent refreshes of one profile share one grant. A rejected grant
// (invalid_grant) marks the profile reauth_required; any other failure refresh_failed (retried on use).
import type { Logger } from 'pino';
import type { AuthProfileRecord } from '../../contracts/auth.ts';
import type { Config } from '../../contracts/config.ts';
import { authSettings, oauthProvider } from './auth-config.ts';
import { refreshDueAt } from './binding-status.ts';
import type { CredentialStore } from './credential-store.ts';
import { refreshTokens } from './oauth-client.ts';

export interface RefresherDeps {
  credentials: CredentialStore;
  config(): Config;
  now(): number;
  log: Logger;
  /** fetch of the OAuth endpoints (the outbound guard's); default: the global one. */
  fetch?: typeof fetch;
}

/** setTimeout's longest delay; longer waits are re-armed when they fire. */
const MAX_DELAY_MS = 2_147_483_647;

export class AuthRefresher {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly inflight = new Map<string, Promise<void>>();
  private closed = false;

  constructor(private readonly deps: RefresherDeps) {}

  async start(): Promise<void> {
    for (const p of await this.deps.credentials.listProfiles()) this.schedule(p);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.all([...this.inflight.values()]);
  }

  /** Waits for a refresh of `profileId` that is under way, if any. */
  async settle(profileId: string): Promise<void> {
    await this.inflight.get(profileId);
  }

  /** Drops the timer of a profile whose credential was replaced or cleared. */
  forget(profileId: string): void {
    const t = this.timers.get(profileId);
    if (t) clearTimeout(t);
    this.timers.delete(profileId);
  }

  /** Arms (or re-arms) the refresh timer of an OAuth profile that holds a refresh token. */
  schedule(p: AuthProfileRecord): void {
    this.forget(p.id);
    // A failed refresh is not retried by timer (the next use retries it); a rejected grant never is.
    const due = p.refresh_error ? undefined : refreshDueAt(p, authSettings(this.deps.config()).skewMs);
    if (this.closed || due === undefined) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, due - this.deps.now()));
    const timer = setTimeout(() => {
      this.timers.delete(p.id);
      if (this.deps.now() < due) {
        // Re-armed after a maximal setTimeout delay.
        void this.deps.credentials
          .listProfiles()
          .then((all) => {
            const cur = all.find((x) => x.id === p.id);
            if (cur) this.schedule(cur);
          })
          .catch(() => {});
        return;
      }
      this.refresh(p.id).catch((err: unknown) => this.deps.log.warn({ err, profileId: p.id }, 'scheduled credential refresh failed'));
    }, delay);
    timer.unref();
    this.timers.set(p.id, timer);
  }

  /** Refreshes now (joining a refresh under way). Never throws for a provider refusal: the profile records it. */
  refresh(profileId: string): Promise<void> {
    const running = this.inflight.get(profileId);
    if (running) return running;
    const run = this.refreshOnce(profileId).finally(() => this.inflight.delete(profileId));
    this.inflight.set(profileId, run);
    return run;
  }

  private async refreshOnce(profileId: string): Promise<void> {
    const creds = this.deps.credentials;
    const profile = (await creds.listProfiles()).find((p) => p.id === profileId);
    if (!profile || profile.auth_method !== 'oauth' || !profile.has_secret) return;
    const { material } = await creds.readSecret(profileId);
    const refreshToken = material?.refresh_token;
    if (!refreshToken) return;
    const outcome = await refreshTokens(oauthProvider(this.deps.config(), profile.provider), refreshToken, this.deps.fetch);
    const now = this.deps.now();
    // The credential may have been replaced or cleared while the grant was in flight: keep the newer state.
    const current = (await creds.listProfiles()).find((p) => p.id === profileId);
    if (!current || !current.has_secret || current.auth_method !== 'oauth') return;
    if (!outcome.ok) {
      const refresh_error = outcome.error === 'invalid_grant' ? 'reauth' : 'failed';
      await creds.putProfile({ ...current, refresh_error });
      this.deps.log.warn(
        { profileId, provider: profile.provider, oauthError: outcome.error, status: outcome.status },
        'credential refresh failed',
      );
      return;
    }
    const t = outcome.tokens;
    const next: AuthProfileRecord = {
      v: 1,
      id: current.id,
      provider: current.provider,
      auth_method: 'oauth',
      has_secret: true,
      has_refresh_token: true,
      last_refresh_at_ms: now,
      scopes: t.scopes,
    };
    if (t.expires_in !== undefined) next.expires_at_ms = now + t.expires_in * 1000;
    const account = t.account_id ?? current.account_id;
    if (account) next.account_id = account;
    await creds.putProfile(next, { access_token: t.access_token, refresh_token: t.refresh_token ?? refreshToken });
    this.deps.log.info({ profileId, provider: profile.provider }, 'credential refreshed');
    this.schedule(next);
  }
}
