// http/handlers/auth.ts: the /auth routes (SPEC.md "Auth routes"). Each maps the validated request onto
// the auth service (actors/auth) and its result onto the response; errors are `{error}` only (the router
// projects thrown errors; the test and device outcomes carry their own `state` bodies).
import type { AuthLogins } from '../../actors/auth/auth-login.ts';
import type { AuthService } from '../../actors/auth/auth-service.ts';
import { AUTH_ROUTE } from '../../contracts/routes-auth.ts';
import { on, type HandlerTable } from '../handler.ts';

/** Handlers of AUTH_ROUTES. */
export function authHandlers(auth: AuthService, logins: AuthLogins): HandlerTable {
  return {
    ...on(AUTH_ROUTE.profilesList, async (ctx) => ({ status: 200, body: await auth.list(ctx.query.realm_id) })),
    ...on(AUTH_ROUTE.profilesStore, async (ctx) => ({ status: 201, body: await auth.store(ctx.body) })),
    ...on(AUTH_ROUTE.bindingsGet, async (ctx) => ({
      status: 200,
      body: await auth.get(ctx.params.binding_id, ctx.query.realm_id, ctx.query.profile_id),
    })),
    ...on(AUTH_ROUTE.bindingsClear, async (ctx) => ({
      status: 200,
      body: await auth.clear(ctx.params.binding_id, ctx.query.realm_id, ctx.query.profile_id, 'delete'),
    })),
    ...on(AUTH_ROUTE.bindingsLogout, async (ctx) => ({
      status: 200,
      body: await auth.clear(ctx.params.binding_id, ctx.query.realm_id, ctx.query.profile_id, 'release'),
    })),
    ...on(AUTH_ROUTE.bindingsStatus, async (ctx) => ({
      status: 200,
      body: await auth.status(ctx.params.binding_id, ctx.query.realm_id, ctx.query.profile_id),
    })),
    ...on(AUTH_ROUTE.bindingsTest, async (ctx) => {
      const body = ctx.body;
      const r = await auth.test(ctx.params.binding_id, body.realm_id, body.profile_id);
      return r.ok ? { status: 200, body: r.report } : { status: 422, body: { state: 'error', error: r.error } };
    }),
    ...on(AUTH_ROUTE.oauthProviders, () => ({ status: 200, body: logins.providers() })),
    ...on(AUTH_ROUTE.loginStart, async (ctx) => ({ status: 200, body: await logins.start(ctx.body) })),
    ...on(AUTH_ROUTE.loginComplete, async (ctx) => ({ status: 200, body: await logins.complete(ctx.body) })),
    ...on(AUTH_ROUTE.deviceStart, async (ctx) => ({ status: 200, body: await logins.deviceStart(ctx.body) })),
    ...on(AUTH_ROUTE.deviceComplete, async (ctx) => logins.deviceComplete(ctx.body)),
  };
}
