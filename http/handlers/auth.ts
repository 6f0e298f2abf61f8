// http/handlers/auth.ts: the /auth routes (SPEC.md "Auth routes"). Each maps the validated request onto
// the auth service (actors/auth) and its result onto the response; errors are `{error}` only (the router
// projects thrown errors; the test and device outcomes carry their own `state` bodies).
import type {
  DeviceCompleteRequest, DeviceStartRequest, LoginCompleteRequest, LoginStartRequest, RealmQuery, StoreCredentialsRequest, TestBindingRequest,
} from '../../contracts/auth.ts';
import type { AuthLogins } from '../../actors/auth/auth-login.ts';
import type { AuthService } from '../../actors/auth/auth-service.ts';
import type { HandlerContext, HandlerTable } from '../handler.ts';

const q = (ctx: HandlerContext): RealmQuery => ctx.query as RealmQuery;

/** Handlers of AUTH_ROUTES. */
export function authHandlers(auth: AuthService, logins: AuthLogins): HandlerTable {
  return {
    'auth.profiles.list': async (ctx) => ({ status: 200, body: await auth.list(q(ctx).realm_id) }),
    'auth.profiles.store': async (ctx) => ({ status: 201, body: await auth.store(ctx.body as StoreCredentialsRequest) }),
    'auth.bindings.get': async (ctx) => ({ status: 200, body: await auth.get(ctx.params.binding_id, q(ctx).realm_id, q(ctx).profile_id) }),
    'auth.bindings.clear': async (ctx) => ({ status: 200, body: await auth.clear(ctx.params.binding_id, q(ctx).realm_id, q(ctx).profile_id, 'delete') }),
    'auth.bindings.logout': async (ctx) => ({ status: 200, body: await auth.clear(ctx.params.binding_id, q(ctx).realm_id, q(ctx).profile_id, 'release') }),
    'auth.bindings.status': async (ctx) => ({ status: 200, body: await auth.status(ctx.params.binding_id, q(ctx).realm_id, q(ctx).profile_id) }),
    'auth.bindings.test': async (ctx) => {
      const body = ctx.body as TestBindingRequest;
      const r = await auth.test(ctx.params.binding_id, body.realm_id, body.profile_id);
      return r.ok ? { status: 200, body: r.report } : { status: 422, body: { state: 'error', error: r.error } };
    },
    'auth.login.start': async (ctx) => ({ status: 200, body: await logins.start(ctx.body as LoginStartRequest) }),
    'auth.login.complete': async (ctx) => ({ status: 200, body: await logins.complete(ctx.body as LoginCompleteRequest) }),
    'auth.login.deviceStart': async (ctx) => ({ status: 200, body: await logins.deviceStart(ctx.body as DeviceStartRequest) }),
    'auth.login.deviceComplete': async (ctx) => logins.deviceComplete(ctx.body as DeviceCompleteRequest),
  };
}
