// http/modules/auth-module.ts: outbound provider credentials as a module unit: the twelve /auth routes,
// the `[auth]` config section, the credential resolver sessions use for `auth_binding` and realm default
// bindings, and the refresh timers (stopped at close). The realm key file sits in the realm directory.
import { join } from 'node:path';
import { AuthLogins } from '../../actors/auth/auth-login.ts';
import { AuthService } from '../../actors/auth/auth-service.ts';
import { CredentialStore } from '../../actors/auth/credential-store.ts';
import { openRealmKey, REALM_KEY_FILE } from '../../actors/auth/realm-key.ts';
import { AUTH_ROUTES } from '../../contracts/routes-auth.ts';
import { authHandlers } from '../handlers/auth.ts';
import type { ModuleContext, ModuleUnit } from '../module-unit.ts';

export function authModule(ctx: ModuleContext): ModuleUnit {
  const { deps } = ctx.supervisor;
  if (!ctx.realm.dir) throw new Error('the auth module needs the realm directory (RealmInfo.dir)');
  const key = openRealmKey(join(ctx.realm.dir, REALM_KEY_FILE));
  const credentials = new CredentialStore(deps.store, key, ctx.realm.realmId, ctx.supervisor.deps.config);
  const authDeps = {
    credentials,
    config: ctx.supervisor.deps.config,
    env: ctx.env,
    now: ctx.clock('auth'),
    log: ctx.log.child({ component: 'auth' }),
    fetch: deps.outbound?.fetch,
  };
  const auth = new AuthService(authDeps);
  const logins = new AuthLogins(auth, authDeps);
  // Sessions resolve `auth_binding` selectors and realm default bindings through this service.
  deps.credentials = auth;
  return {
    name: 'auth',
    routes: AUTH_ROUTES,
    handlers: authHandlers(auth, logins),
    configKeys: ['auth'],
    capabilities: [{ id: 'auth', gate: null }],
    close: () => auth.close(),
  };
}
