// client/src/client.ts: WarrenClient, one typed method per Warren route (types from the server's
// contracts via types.ts), errors thrown as WarrenError, and the two event streams (a session's events,
// the actor inspection stream) as async iterators that reconnect with Last-Event-ID.
import { errorFromResponse } from './errors.ts';
import { sseFrames, type SseOptions } from './sse.ts';
import { isKnownEvent } from './event-kinds.ts';
import type {
  ActorDetail,
  ActorList,
  ActorListQuery,
  ActorTransition,
  ArchiveResponse,
  CancelResponse,
  CapabilitiesResponse,
  ConfigEnvelope,
  ConfigPatchBody,
  ConfigPutBody,
  ContinueSessionRequest,
  CreateSessionRequest,
  History,
  HostInfo,
  InterruptResponse,
  LedgerPage,
  MachineGraph,
  ModelCatalog,
  RealmDetail,
  RealmList,
  RuntimeCapabilities,
  RuntimeHealth,
  SessionDetail,
  SessionEventEnvelope,
  AnySessionEvent,
  SessionList,
  SessionLoaded,
  SessionStatus,
  SessionStreamItem,
  SessionTimeline,
  StreamTruncated,
  SystemContextRequest,
  SystemContextResponse,
  SystemPromptRequest,
  SystemPromptResponse,
  TurnResponse,
  HelpRequest,
  HelpResponse,
  BindingCleared,
  BindingResolved,
  BindingStatus,
  BindingTestReport,
  DeviceCompleteRequest,
  DeviceOutcome,
  DeviceStartRequest,
  DeviceStartResponse,
  LoginCompleteRequest,
  LoginReady,
  LoginStartRequest,
  LoginStartResponse,
  OAuthProviderList,
  ProfileList,
  RealmQuery,
  StoreCredentialsRequest,
  StoreCredentialsResponse,
  TestBindingRequest,
  ForkRequest,
  ForkResponse,
  ImportResponse,
  ReplayAccepted,
  ReplayReport,
  ReplayRequest,
  RerunReport,
  RerunRequest,
  SessionTurns,
} from './types.ts';

export { WarrenError, isWarrenError } from './errors.ts';
export { SseParser, sseFrames, type SseFrame, type SseOptions } from './sse.ts';
export type * from './types.ts';

export interface ClientOptions {
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as X-Warren-Request-Id (create and continue), so POST /requests/{id}/cancel can target the turn. */
  requestId?: string;
}

type Query = Record<string, string | number | undefined>;

/**
 * Every host feature flag (tsc refuses this object when a flag is missing). A flag an older server does
 * not send decodes as false (SPEC.md "Runtime host", "Versioning").
 */
const HOST_FEATURE_FLAGS: Record<keyof RuntimeCapabilities['features'], false> = {
  runtime_backed_sessions: false,
  mobs: false,
  multi_host_mobs: false,
  mcp_live: false,
  comms: false,
  blobs: false,
  session_events: false,
  session_streams: false,
  schedules: false,
  skills: false,
  event_replay: false,
  artifacts: false,
  approvals: false,
  external_members: false,
  secure_remote_rpc: false,
  durable_jobs: false,
};

function decodeHostCapabilities(caps: RuntimeCapabilities): RuntimeCapabilities {
  return { ...caps, features: { ...HOST_FEATURE_FLAGS, ...caps.features } };
}

/** Streams of the inspection route yield transitions, plus control frames. */
export type InspectStreamItem =
  | { type: 'transition'; id: number; data: ActorTransition }
  | { type: 'stream_truncated'; data: StreamTruncated }
  | { type: 'inspect_loaded'; data: { type: 'inspect_loaded'; last_seq: number } };

export class WarrenClient {
  private readonly base: string;
  private readonly doFetch: typeof fetch;

  constructor(
    baseUrl: string,
    private readonly opts: ClientOptions = {},
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
    this.doFetch = opts.fetch ?? ((input, init) => fetch(input, init));
  }

  /** One request; JSON in and out. Any route, including ones this client has no method for yet. */
  async request<T>(
    method: string,
    path: string,
    init: { body?: unknown; query?: Query; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<T> {
    const res = await this.raw(method, path, init);
    const text = await res.text();
    if (!res.ok) throw errorFromResponse(res.status, text, res.headers.get('x-request-id') ?? undefined);
    return ((res.headers.get('content-type') ?? '').startsWith('application/json') && text ? JSON.parse(text) : text) as T;
  }

  private raw(
    method: string,
    path: string,
    init: { body?: unknown; query?: Query; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response> {
    const headers: Record<string, string> = { ...this.opts.headers, ...init.headers };
    if (init.body !== undefined) headers['content-type'] = 'application/json';
    return this.doFetch(this.url(path, init.query), {
      method,
      headers,
      signal: init.signal,
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
  }

  private url(path: string, query?: Query): string {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) q.append(k, String(v));
    const qs = q.toString();
    return `${this.base}${path}${qs ? `?${qs}` : ''}`;
  }

  private turnHeaders(o: CallOptions): Record<string, string> {
    return o.requestId ? { 'x-warren-request-id': o.requestId } : {};
  }

  // Sessions (SPEC.md "Sessions and turns").
  createSession(body: CreateSessionRequest, o: CallOptions = {}): Promise<TurnResponse> {
    return this.request('POST', '/sessions', { body, headers: this.turnHeaders(o), signal: o.signal });
  }
  continueSession(id: string, body: Omit<ContinueSessionRequest, 'session_id'>, o: CallOptions = {}): Promise<TurnResponse> {
    return this.request('POST', `/sessions/${enc(id)}/messages`, {
      body: { session_id: id, ...body },
      headers: this.turnHeaders(o),
      signal: o.signal,
    });
  }
  /** POST /help: a help session answers a question about Warren from its documentation. */
  help(body: HelpRequest, o: CallOptions = {}): Promise<HelpResponse> {
    return this.request('POST', '/help', { body, headers: this.turnHeaders(o), signal: o.signal });
  }
  listSessions(query: { limit?: number; offset?: number; label?: string } = {}): Promise<SessionList> {
    return this.request('GET', '/sessions', { query });
  }
  getSession(id: string): Promise<SessionDetail> {
    return this.request('GET', `/sessions/${enc(id)}`);
  }
  sessionStatus(id: string): Promise<SessionStatus> {
    return this.request('GET', `/sessions/${enc(id)}/status`);
  }
  history(id: string, query: { offset?: number; limit?: number } = {}): Promise<History> {
    return this.request('GET', `/sessions/${enc(id)}/history`, { query });
  }
  appendSystemContext(id: string, body: SystemContextRequest): Promise<SystemContextResponse> {
    return this.request('POST', `/sessions/${enc(id)}/system_context`, { body });
  }
  replaceSystemPrompt(id: string, body: SystemPromptRequest): Promise<SystemPromptResponse> {
    return this.request('POST', `/sessions/${enc(id)}/system_prompt`, { body });
  }
  interrupt(id: string): Promise<InterruptResponse> {
    return this.request('POST', `/sessions/${enc(id)}/interrupt`);
  }
  archive(id: string): Promise<ArchiveResponse> {
    return this.request('DELETE', `/sessions/${enc(id)}`);
  }
  cancelRequest(requestId: string): Promise<CancelResponse> {
    return this.request('POST', `/requests/${enc(requestId)}/cancel`);
  }
  ledger(id: string, query: { after_seq?: number; to_seq?: number; limit?: number } = {}): Promise<LedgerPage> {
    return this.request('GET', `/sessions/${enc(id)}/ledger`, { query });
  }

  /** Replays the session from its recording in a new session (no model, no tool call): identical or the first divergence. */
  replay(id: string, body: ReplayRequest = {}): Promise<ReplayReport> {
    return this.request('POST', `/sessions/${enc(id)}/replay`, { body });
  }
  /** The same, detached (`Prefer: respond-async`): 202 with the replay session; poll replayReport. */
  replayAsync(id: string, body: ReplayRequest = {}): Promise<ReplayAccepted> {
    return this.request('POST', `/sessions/${enc(id)}/replay`, { body, headers: { prefer: 'respond-async' } });
  }
  replayReport(replayId: string): Promise<ReplayReport> {
    return this.request('GET', `/sessions/${enc(replayId)}/replay-report`);
  }
  /** The session's turns: where each starts, its prompt, and the fork and replay bounds that stop at it. */
  turns(id: string): Promise<SessionTurns> {
    return this.request('GET', `/sessions/${enc(id)}/turns`);
  }
  fork(id: string, body: ForkRequest = {}): Promise<ForkResponse> {
    return this.request('POST', `/sessions/${enc(id)}/fork`, { body });
  }
  rerun(id: string, body: RerunRequest): Promise<RerunReport> {
    return this.request('POST', `/sessions/${enc(id)}/rerun`, { body });
  }
  /** The session as one versioned JSON Lines file. */
  exportSession(id: string): Promise<string> {
    return this.request('GET', `/sessions/${enc(id)}/export`);
  }
  /** Imports an exported file (`newId`: under a fresh id instead of its own). */
  async importSession(file: string, opts: { newId?: boolean } = {}): Promise<ImportResponse> {
    const res = await this.doFetch(this.url('/sessions/import', { new_id: opts.newId ? 'true' : undefined }), {
      method: 'POST',
      headers: { ...this.opts.headers, 'content-type': 'application/x-ndjson' },
      body: file,
    });
    const text = await res.text();
    if (!res.ok) throw errorFromResponse(res.status, text, res.headers.get('x-request-id') ?? undefined);
    return JSON.parse(text) as ImportResponse;
  }

  /**
   * The session's events: `session_loaded` on each connection, then every event in seq order. A dropped
   * connection is resumed with Last-Event-ID (Warren replays from its ledger), so on persistent realms
   * no event is lost or repeated. Ends when the session's stream ends (`done`) or `signal` aborts.
   */
  async *sessionEvents(id: string, opts: Omit<SseOptions, 'fetch'> & { afterSeq?: number } = {}): AsyncGenerator<SessionStreamItem> {
    const lastEventId = opts.afterSeq !== undefined ? String(opts.afterSeq) : opts.lastEventId;
    for await (const f of sseFrames(this.url(`/sessions/${enc(id)}/events`), {
      ...opts,
      lastEventId,
      fetch: this.doFetch,
      headers: { ...this.opts.headers, ...opts.headers },
    })) {
      if (f.event === 'done') return;
      if (f.event === 'session_loaded') yield { type: 'session_loaded', data: JSON.parse(f.data) as SessionLoaded };
      else if (f.event === 'stream_truncated') yield { type: 'stream_truncated', data: JSON.parse(f.data) as StreamTruncated };
      else if (f.id !== undefined) {
        const data = JSON.parse(f.data) as SessionEventEnvelope;
        yield isKnownEvent(f.event)
          ? ({ type: 'event', event: f.event, id: Number(f.id), data } as AnySessionEvent)
          : { type: 'unknown_event', event: f.event, id: Number(f.id), data };
      }
    }
  }

  // System and observation routes.
  health(): Promise<string> {
    return this.request('GET', '/health');
  }
  openapi(): Promise<{ openapi: string; [k: string]: unknown }> {
    return this.request('GET', '/openapi.json');
  }
  getConfig(): Promise<ConfigEnvelope> {
    return this.request('GET', '/config');
  }
  replaceConfig(body: ConfigPutBody): Promise<ConfigEnvelope> {
    return this.request('PUT', '/config', { body });
  }
  patchConfig(body: ConfigPatchBody): Promise<ConfigEnvelope> {
    return this.request('PATCH', '/config', { body });
  }
  realms(): Promise<RealmList> {
    return this.request('GET', '/realms');
  }
  realm(id: string): Promise<RealmDetail> {
    return this.request('GET', `/realms/${enc(id)}`);
  }
  capabilities(): Promise<CapabilitiesResponse> {
    return this.request('GET', '/capabilities');
  }
  async runtimeCapabilities(): Promise<RuntimeCapabilities> {
    return decodeHostCapabilities(await this.request<RuntimeCapabilities>('GET', '/runtime/capabilities'));
  }
  runtimeHealth(): Promise<RuntimeHealth> {
    return this.request('GET', '/runtime/health');
  }
  async hostInfo(): Promise<HostInfo> {
    const info = await this.request<HostInfo>('GET', '/runtime/host_info');
    return { ...info, capabilities: decodeHostCapabilities(info.capabilities) };
  }
  modelCatalog(): Promise<ModelCatalog> {
    return this.request('GET', '/models/catalog');
  }
  skills(): Promise<{ skills: unknown[] }> {
    return this.request('GET', '/skills');
  }
  /** Prometheus text. */
  metrics(): Promise<string> {
    return this.request('GET', '/metrics');
  }

  // Outbound credentials (the /auth routes; their errors carry only `error`, so `code` is 'UNKNOWN').
  authProfiles(query: RealmQuery): Promise<ProfileList> {
    return this.request('GET', '/auth/profiles', { query });
  }
  storeCredentials(body: StoreCredentialsRequest): Promise<StoreCredentialsResponse> {
    return this.request('POST', '/auth/profiles', { body });
  }
  binding(bindingId: string, query: RealmQuery): Promise<BindingResolved> {
    return this.request('GET', `/auth/bindings/${enc(bindingId)}`, { query });
  }
  clearBinding(bindingId: string, query: RealmQuery): Promise<BindingCleared> {
    return this.request('DELETE', `/auth/bindings/${enc(bindingId)}`, { query });
  }
  testBinding(bindingId: string, body: TestBindingRequest): Promise<BindingTestReport> {
    return this.request('POST', `/auth/bindings/${enc(bindingId)}/test`, { body });
  }
  bindingStatus(bindingId: string, query: RealmQuery): Promise<BindingStatus> {
    return this.request('GET', `/auth/bindings/${enc(bindingId)}/status`, { query });
  }
  logoutBinding(bindingId: string, query: RealmQuery): Promise<BindingCleared> {
    return this.request('POST', `/auth/bindings/${enc(bindingId)}/logout`, { query });
  }
  /** The OAuth clients logins use: built-in presets with the realm's `[auth.oauth.*]` overrides. */
  oauthProviders(): Promise<OAuthProviderList> {
    return this.request('GET', '/auth/oauth/providers');
  }
  loginStart(body: LoginStartRequest): Promise<LoginStartResponse> {
    return this.request('POST', '/auth/login/start', { body });
  }
  loginComplete(body: LoginCompleteRequest): Promise<LoginReady> {
    return this.request('POST', '/auth/login/complete', { body });
  }
  deviceStart(body: DeviceStartRequest): Promise<DeviceStartResponse> {
    return this.request('POST', '/auth/login/device/start', { body });
  }
  /** 202 while pending is a success answer too (its body says so). */
  deviceComplete(body: DeviceCompleteRequest): Promise<DeviceOutcome> {
    return this.request('POST', '/auth/login/device/complete', { body });
  }

  // Inspection (the actor viewer's API).
  actors(query: ActorListQuery = {}): Promise<ActorList> {
    return this.request('GET', '/inspect/actors', { query });
  }
  actor(kind: string, id: string): Promise<ActorDetail> {
    return this.request('GET', `/inspect/actors/${enc(kind)}/${enc(id)}`);
  }
  machine(kind: string): Promise<MachineGraph> {
    return this.request('GET', `/inspect/machines/${enc(kind)}`);
  }
  timeline(sessionId: string, query: { after_seq?: number; limit?: number } = {}): Promise<SessionTimeline> {
    return this.request('GET', `/inspect/sessions/${enc(sessionId)}/timeline`, { query });
  }
  /** Actor transitions as they happen (inspection is on only while some stream is open). */
  async *inspectEvents(
    filter: { kind?: string; id?: string } = {},
    opts: Omit<SseOptions, 'fetch'> = {},
  ): AsyncGenerator<InspectStreamItem> {
    for await (const f of sseFrames(this.url('/inspect/events', filter), {
      ...opts,
      fetch: this.doFetch,
      headers: { ...this.opts.headers, ...opts.headers },
    })) {
      if (f.event === 'done') return;
      const data = JSON.parse(f.data) as unknown;
      if (f.event === 'transition' && f.id !== undefined) yield { type: 'transition', id: Number(f.id), data: data as ActorTransition };
      else if (f.event === 'stream_truncated') yield { type: 'stream_truncated', data: data as StreamTruncated };
      else if (f.event === 'inspect_loaded') yield { type: 'inspect_loaded', data: data as { type: 'inspect_loaded'; last_seq: number } };
    }
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
