// contracts/routes-auth.ts: catalog entries of the /auth routes (SPEC.md "Auth routes"; wire-notes §2.9).
// Every entry answers errors as `{error}` only. http/handlers/auth.ts serves them.
import type { ErrorCode } from './errors.ts';
import type { RouteDef } from './route.ts';
import {
  BindingCleared, BindingResolved, BindingStatus, BindingTestReport, DeviceCompleteRequest, DeviceOutcome, DeviceStartRequest,
  DeviceStartResponse, LoginCompleteRequest, LoginReady, LoginStartRequest, LoginStartResponse, ProfileList, RealmQuery,
  StoreCredentialsRequest, StoreCredentialsResponse, TestBindingRequest,
} from './auth.ts';

const ERRORS: ErrorCode[] = ['BAD_REQUEST', 'NOT_FOUND', 'CONFLICT'];
const OAUTH_ERRORS: ErrorCode[] = [...ERRORS, 'PROVIDER_ERROR'];
const common = { capability: 'auth', errorBody: 'error_only' as const };

export const AUTH_ROUTE = {
  profilesList: {
    ...common, id: 'auth.profiles.list', method: 'GET', path: '/auth/profiles', summary: 'List auth profiles, backend profiles and bindings',
    query: RealmQuery, response: { status: 200, schema: ProfileList }, errors: ERRORS,
  },
  profilesStore: {
    ...common, id: 'auth.profiles.store', method: 'POST', path: '/auth/profiles', summary: 'Store a credential for a binding (encrypted at rest)',
    body: StoreCredentialsRequest, response: { status: 201, schema: StoreCredentialsResponse }, errors: ERRORS,
  },
  bindingsGet: {
    ...common, id: 'auth.bindings.get', method: 'GET', path: '/auth/bindings/{binding_id}', summary: 'Resolve a binding profile',
    query: RealmQuery, response: { status: 200, schema: BindingResolved }, errors: ERRORS,
  },
  bindingsClear: {
    ...common, id: 'auth.bindings.clear', method: 'DELETE', path: '/auth/bindings/{binding_id}', summary: 'Clear stored credentials',
    query: RealmQuery, response: { status: 200, schema: BindingCleared }, errors: ERRORS,
  },
  bindingsTest: {
    ...common, id: 'auth.bindings.test', method: 'POST', path: '/auth/bindings/{binding_id}/test', summary: 'Test that a binding resolves (422 {state:"error"} when not)',
    body: TestBindingRequest, response: { status: 200, schema: BindingTestReport }, errors: ERRORS,
  },
  bindingsStatus: {
    ...common, id: 'auth.bindings.status', method: 'GET', path: '/auth/bindings/{binding_id}/status', summary: 'Binding credential status',
    query: RealmQuery, response: { status: 200, schema: BindingStatus }, errors: ERRORS,
  },
  bindingsLogout: {
    ...common, id: 'auth.bindings.logout', method: 'POST', path: '/auth/bindings/{binding_id}/logout', summary: 'Clear credentials and release the binding',
    query: RealmQuery, response: { status: 200, schema: BindingCleared }, errors: ERRORS,
  },
  loginStart: {
    ...common, id: 'auth.login.start', method: 'POST', path: '/auth/login/start', summary: 'Start an OAuth loopback login (PKCE S256)',
    body: LoginStartRequest, response: { status: 200, schema: LoginStartResponse }, errors: OAUTH_ERRORS,
  },
  loginComplete: {
    ...common, id: 'auth.login.complete', method: 'POST', path: '/auth/login/complete', summary: 'Complete an OAuth loopback login and store its tokens',
    body: LoginCompleteRequest, response: { status: 200, schema: LoginReady }, errors: OAUTH_ERRORS,
  },
  deviceStart: {
    ...common, id: 'auth.login.deviceStart', method: 'POST', path: '/auth/login/device/start', summary: 'Start a device-code login',
    body: DeviceStartRequest, response: { status: 200, schema: DeviceStartResponse }, errors: OAUTH_ERRORS,
  },
  deviceComplete: {
    ...common, id: 'auth.login.deviceComplete', method: 'POST', path: '/auth/login/device/complete',
    summary: 'Poll a device-code login: 202 pending, 429 slow_down, 400 access_denied/expired, 200 ready',
    body: DeviceCompleteRequest, response: { status: 200, schema: DeviceOutcome }, errors: OAUTH_ERRORS,
  },
} satisfies Record<string, RouteDef>;

/** In catalog order (route registration and OpenAPI follow it). */
export const AUTH_ROUTES: RouteDef[] = Object.values(AUTH_ROUTE);
