// actors/auth/binding-status.ts: the public state of a binding's credential (wire-notes §2.9), computed
// from its profile record and the clock. Pure; auth-service.ts and the turn-time resolver call it.
import type { AuthProfileRecord, BindingState } from '../../contracts/auth.ts';

export interface StatusInput {
  profile: AuthProfileRecord | undefined;
  /** False when a stored ciphertext no longer opens (replaced or lost realm key). */
  secretReadable: boolean;
  /** Env-sourced profile (`source_kind = "env"`): whether its variable is set. */
  env?: { set: boolean };
  nowMs: number;
  skewMs: number;
}

/**
 * absent: nothing stored; released: logged out; missing_credential: the stored secret cannot be read (or
 * an env-sourced variable is unset); reauth_required: the provider rejected the refresh grant;
 * refresh_failed: the last refresh failed otherwise; expired / expiring: past / inside the refresh window.
 */
export function bindingState(s: StatusInput): BindingState {
  if (s.env) return s.env.set ? 'valid' : 'missing_credential';
  const p = s.profile;
  if (!p || !p.has_secret) return p?.released_at_ms !== undefined ? 'released' : 'absent';
  if (!s.secretReadable) return 'missing_credential';
  if (p.refresh_error === 'reauth') return 'reauth_required';
  if (p.refresh_error === 'failed') return 'refresh_failed';
  if (p.expires_at_ms !== undefined) {
    if (p.expires_at_ms <= s.nowMs) return 'expired';
    if (p.expires_at_ms - s.skewMs <= s.nowMs) return 'expiring';
  }
  return 'valid';
}

/**
 * When an OAuth credential is due for refresh: `skewMs` before expiry. After a refresh, never earlier than
 * half the new token's lifetime, so a provider issuing tokens shorter than the skew is not hammered.
 * Undefined when the profile cannot be refreshed (no refresh token, grant rejected, no expiry).
 */
export function refreshDueAt(p: AuthProfileRecord | undefined, skewMs: number): number | undefined {
  if (
    !p ||
    !p.has_secret ||
    p.auth_method !== 'oauth' ||
    !p.has_refresh_token ||
    p.refresh_error === 'reauth' ||
    p.expires_at_ms === undefined
  )
    return undefined;
  const due = p.expires_at_ms - skewMs;
  return p.last_refresh_at_ms === undefined ? due : Math.max(due, p.last_refresh_at_ms + (p.expires_at_ms - p.last_refresh_at_ms) / 2);
}

/** True when an OAuth credential should be refreshed now. */
export function refreshDue(p: AuthProfileRecord | undefined, nowMs: number, skewMs: number): boolean {
  const due = refreshDueAt(p, skewMs);
  return due !== undefined && due <= nowMs;
}
