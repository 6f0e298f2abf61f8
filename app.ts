// app.ts: the one composition root. Opens the realm (files, config, store), builds the providers,
// tools, supervisor and HTTP layer, and listens. main.ts and every integration test call createApp.
import { mkdir } from 'node:fs/promises';
import type { Logger } from 'pino';
import { Supervisor } from './actors/supervisor.ts';
import type { SessionDeps } from './actors/session-types.ts';
import type { Config } from './contracts/config.ts';
import { LATER_ROUTES } from './contracts/routes-later.ts';
import { SESSION_ROUTES } from './contracts/routes-sessions.ts';
import { SYSTEM_ROUTES, WARREN_VERSION } from './contracts/routes-system.ts';
import type { StartOptions } from './config/flags.ts';
import { createLogger } from './config/logger.ts';
import { RealmConfig } from './config/realm-config.ts';
import { openRealm } from './config/realm.ts';
import { createHttpServer } from './http/create-server.ts';
import { eventHandlers } from './http/handlers/events.ts';
import { sessionHandlers } from './http/handlers/sessions.ts';
import { systemHandlers } from './http/handlers/system.ts';
import { buildOpenApi } from './http/openapi.ts';
import { createRouter } from './http/router.ts';
import { modelCatalog } from './providers/catalog.ts';
import type { Provider, ProviderName } from './providers/provider.ts';
import { createProviderRegistry, type ProviderRegistry } from './providers/registry.ts';
import { openStore } from './storage/open-store.ts';
import type { Store } from './storage/store.ts';
import { buildToolset } from './tools/registry.ts';
import type { RecordStore } from './tools/task-store.ts';

export interface AppOptions extends Partial<StartOptions> {
  logger?: Logger;
  /** Ready-made providers by name (tests and bench use the scripted provider). */
  providerOverrides?: Partial<Record<ProviderName, Provider>>;
  env?: NodeJS.ProcessEnv;
  /** Idle session actors are evicted after this long (default 5 minutes). */
  idleEvictMs?: number;
  /** An idle session sheds its live XState actor, hub and writer after this long (default 2 s). */
  shedAfterMs?: number;
  maxResidentSessions?: number;
}

export interface App {
  url: string;
  realmId: string;
  transport: 'uws' | 'node';
  close(): Promise<void>;
}

/** Capabilities this build implements (everything else reports NotCompiled). */
const BUILT = new Set(['sessions', 'streaming', 'builtins', 'shell', 'session_store', 'session_events', 'session_streams', 'runtime_backed_sessions', 'event_replay']);

function recordsFor(store: Store, ns: string): RecordStore {
  return {
    get: (key) => store.getRecord(ns, key),
    put: (key, value) => store.commit([{ op: 'putRecord', ns, key, value }]),
    list: (async () => store.listRecords(ns)) as RecordStore['list'],
  };
}

/** Starts a Warren server. Resolves once it listens; `close()` stops it and flushes storage. */
export async function createApp(opts: AppOptions = {}): Promise<App> {
  const log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'info' });
  const env = opts.env ?? process.env;
  const realm = await openRealm({
    realm: opts.realm, stateRoot: opts.stateRoot, backendHint: opts.realmBackend,
    isolated: opts.isolated ?? !opts.realm, instance: opts.instance, logger: log,
  });
  const realmConfig = await RealmConfig.open(realm, { instanceId: opts.instance, exposePaths: opts.exposePaths ?? false, logger: log });
  const store = await openStore(realm.backend, realm.storeDir);
  const contextRoot = opts.contextRoot ?? process.cwd();
  await mkdir(contextRoot, { recursive: true });

  const makeProviders = (cfg: Config): ProviderRegistry => createProviderRegistry({
    env, config: cfg, logger: log.child({ component: 'providers' }), overrides: opts.providerOverrides,
    retry: { maxRetries: cfg.retry.max_retries, initialDelayMs: cfg.retry.initial_delay_ms, maxDelayMs: cfg.retry.max_delay_ms, multiplier: cfg.retry.multiplier },
  });
  let providers = makeProviders(realmConfig.current());
  const retired: ProviderRegistry[] = [];
  realmConfig.onChange((cfg) => {
    retired.push(providers);
    providers = makeProviders(cfg);
  });

  const deps: SessionDeps = {
    store,
    log: log.child({ component: 'sessions' }),
    realmId: realm.realmId,
    contextRoot,
    providers: { resolve: (m, p) => providers.resolve(m, p) },
    config: () => realmConfig.current(),
    buildToolset: (sessionId, flags) => {
      if (!flags.builtins && !flags.shell) return null;
      const cfg = realmConfig.current();
      return buildToolset({
        builtins: flags.builtins, shell: flags.shell, records: recordsFor(store, `tasks:${sessionId}`),
        shellOptions: { program: cfg.shell.program, timeoutSecs: cfg.shell.timeout_secs, maxOutputChars: cfg.shell.max_output_chars },
      });
    },
    now: Date.now,
  };
  const supervisor = new Supervisor(deps, {
    idleEvictMs: opts.idleEvictMs ?? 5 * 60_000,
    shedAfterMs: opts.shedAfterMs ?? 2_000,
    maxResident: opts.maxResidentSessions ?? 200_000,
    overdueRunMs: 30 * 60_000,
  });

  const routes = [...SYSTEM_ROUTES, ...SESSION_ROUTES, ...LATER_ROUTES];
  const openapi = buildOpenApi(routes, { title: 'Warren', version: WARREN_VERSION });
  let baseUrl = '';
  const handlers = {
    ...systemHandlers({
      config: realmConfig,
      realm: { realmId: realm.realmId, instanceId: opts.instance, backend: realm.backend, stateRoot: opts.stateRoot, contextRoot },
      catalog: modelCatalog,
      sessionHealth: () => supervisor.health(),
      baseUrl: () => baseUrl,
      routes,
      openapi: () => openapi,
      built: BUILT,
    }),
    ...sessionHandlers(supervisor, realm.realmId),
    ...eventHandlers(supervisor, realm.realmId),
  };
  const maxBodyBytes = realmConfig.current().limits.max_body_bytes;
  const httpLog = log.child({ component: 'http' });
  const server = await createHttpServer(opts.httpTransport ?? 'auto', {
    handler: createRouter({ routes, handlers, logger: httpLog, maxBodyBytes }),
    maxBodyBytes,
    logger: httpLog,
  });
  const host = opts.host ?? realmConfig.current().rest.host;
  const { port } = await server.listen(host, opts.port ?? realmConfig.current().rest.port);
  baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  log.info({ url: baseUrl, realm: realm.realmId, backend: realm.backend, transport: server.kind }, 'listening');

  let closing: Promise<void> | null = null;
  return {
    url: baseUrl,
    realmId: realm.realmId,
    transport: server.kind,
    close: () => {
      closing ??= (async () => {
        await supervisor.close();
        await server.close();
        await Promise.all([providers, ...retired].map((p) => p.close()));
        await store.close();
        log.info({ realm: realm.realmId }, 'stopped');
      })();
      return closing;
    },
  };
}
