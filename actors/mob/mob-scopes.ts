// actors/mob/mob-scopes.ts: mob operator scopes. The owner (no principal presented: local consoles, the
// CLI, the owner bridge) has every scope. A granted principal has exactly its unexpired scopes: a grant
// with `expires_at_ms <= now_ms` is expired, evaluated at each decision against the injected clock. An
// unknown principal has none. A denial is 403 `ScopeDenied` (JSON-RPC -32025) carrying the required
// scope and the caller's effective set. Grants are Store records (`mob.grants`, keyed by principal); a
// grant record that does not match its schema is logged as refused and counts as no grant (fails closed).
import { MOB_SCOPES, type GrantRecord, type MobScope } from '../../contracts/mob.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { MOB_GRANT_KIND, namespaceOf, readValidRecord, readValidRecords } from '../../storage/record-kinds.ts';
import type { Store } from '../../storage/store.ts';

const NS = namespaceOf(MOB_GRANT_KIND);

/** Who is asking: the owner, or a named principal. */
export type Caller = { owner: true } | { owner: false; principal: string };

const OWNER: Caller = { owner: true };

export class ScopeGate {
  private grants = new Map<string, GrantRecord>();

  /** `shared`: other processes (cluster nodes) write the same grants, so decisions re-read them (fresh, reload). */
  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly shared = false,
  ) {}

  async open(): Promise<void> {
    const grants = new Map<string, GrantRecord>();
    for (const { key, value } of await readValidRecords<GrantRecord>(this.store, MOB_GRANT_KIND)) grants.set(key, value);
    this.grants = grants;
  }

  /** On a shared store: re-reads the caller's grant, so a grant or revoke made through another node applies here at once. */
  async fresh(caller: Caller): Promise<void> {
    if (!this.shared || caller.owner) return;
    const grant = await readValidRecord<GrantRecord>(this.store, MOB_GRANT_KIND, caller.principal);
    if (grant !== undefined) this.grants.set(caller.principal, grant);
    else this.grants.delete(caller.principal);
  }

  /** On a shared store: re-reads every grant (listing and revoking see other nodes' writes). */
  async reload(): Promise<void> {
    if (this.shared) await this.open();
  }

  /** The caller's effective scopes now. */
  effective(caller: Caller): MobScope[] {
    if (caller.owner) return [...MOB_SCOPES];
    const grant = this.grants.get(caller.principal);
    if (!grant) return [];
    if (grant.expires_at_ms !== undefined && grant.expires_at_ms <= this.now()) return [];
    return [...grant.scopes];
  }

  /** Throws ScopeDenied unless the caller holds `scope` right now. */
  require(caller: Caller, scope: MobScope): void {
    const effective = this.effective(caller);
    if (effective.includes(scope)) return;
    throw new ServiceError('ScopeDenied', `scope ${scope} required`, { required: scope, effective, presented: effective });
  }

  async grant(caller: Caller, principal: string, scopes: MobScope[], expiresAtMs?: number): Promise<GrantRecord> {
    this.require(caller, 'AdminGrants');
    const rec: GrantRecord = {
      v: 1,
      principal,
      scopes: [...new Set(scopes)],
      granted_at_ms: this.now(),
      ...(expiresAtMs !== undefined ? { expires_at_ms: expiresAtMs } : {}),
    };
    await this.store.commit([{ op: 'putRecord', ns: NS, key: principal, value: rec }]);
    this.grants.set(principal, rec);
    return rec;
  }

  async revoke(caller: Caller, principal: string): Promise<boolean> {
    this.require(caller, 'AdminGrants');
    if (!this.grants.has(principal)) return false;
    await this.store.commit([{ op: 'deleteRecord', ns: NS, key: principal }]);
    this.grants.delete(principal);
    return true;
  }

  list(caller: Caller): Array<GrantRecord & { expired: boolean }> {
    this.require(caller, 'AdminGrants');
    const now = this.now();
    return [...this.grants.values()].map((g) => ({ ...g, expired: g.expires_at_ms !== undefined && g.expires_at_ms <= now }));
  }
}

/**
 * The caller of a request: `x-warren-principal` names a principal; without it the caller is the owner.
 * With API keys on, http/inbound-auth.ts drops the client's header and sets it from the key (`key:<id>`;
 * none for an admin key), so the principal is the key's identity, never self-declared.
 */
export function callerOf(headers: Record<string, string>): Caller {
  const p = headers['x-warren-principal']?.trim();
  return p ? { owner: false, principal: p } : OWNER;
}
