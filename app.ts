// app.ts: the one composition root. Opens the realm (files, config, store), builds the providers,
// tools, supervisor and HTTP layer, and listens. main.ts and every integration test call createApp.
import { join } from 'node:path';
import { REALM_KEY_FILE } from './actors/auth/realm-key.ts';
import { mkdir, rm } from 'node:fs/promises';
import type { Logger } from 'pino';
import { Observability } from './actors/observe/observability.ts';
import { withStoreHealth } from './actors/store-health.ts';
import type { Clock } from './actors/clock.ts';
import { Supervisor } from './actors/supervisor.ts';
import { OutboundGuard, OutboundPolicy, type Resolver } from './actors/net/outbound-guard.ts';
import type { Config } from './contracts/config.ts';
import { WARREN_VERSION } from './contracts/routes-system.ts';
import type { StartOptions } from './config/flags.ts';
import { createLogger } from './config/logger.ts';
import { RealmConfig } from './config/realm-config.ts';
import { openRealm, type RealmInfo } from './config/realm.ts';
import { configGuardPolicy } from './http/browser-guard.ts';
import { createHttpServer } from './http/create-server.ts';
import { composeModules, type ModuleFactory } from './http/module-unit.ts';
import { authModule } from './http/modules/auth-module.ts';
import { commsModule } from './http/modules/comms-module.ts';
import { eventsModule } from './http/modules/events-module.ts';
import { extensionsModule } from './http/modules/extensions-module.ts';
import { mcpModule } from './http/modules/mcp-module.ts';
import { mobModule } from './http/modules/mob-module.ts';
import { observeModule } from './http/modules/observe-module.ts';
import { schedulesModule } from './http/modules/schedules-module.ts';
import { sessionsModule } from './http/modules/sessions-module.ts';
import { skillsModule } from './http/modules/skills-module.ts';
import { contextModule } from './http/modules/context-module.ts';
import { systemModule } from './http/modules/system-module.ts';
import { workgraphModule } from './http/modules/workgraph-module.ts';
import { workBindingsModule } from './http/modules/work-bindings-module.ts';
import { turnFeaturesModule } from './http/modules/turn-features-module.ts';
import { protocolsModule } from './http/modules/protocols-module.ts';
import { replayModule } from './http/modules/replay-module.ts';
import { buildOpenApi } from './http/openapi.ts';
import { createRouter } from './http/router.ts';
import { setupInboundAuth } from './http/inbound-auth.ts';
import { modelCatalog } from './providers/catalog.ts';
import type { Provider } from './providers/provider.ts';
import type { ProviderName } from './contracts/session.ts';
import { createProviderRegistry, type ProviderRegistry } from './providers/registry.ts';
import { realmConnections } from './actors/auth/auth-config.ts';
import { openStore } from './storage/open-store.ts';
import { setCorruptRecordLog } from './storage/record-kinds.ts';
import { clusterForwarding } from './http/cluster-forward.ts';
import { clusterForwardOptions } from './http/modules/cluster-setup.ts';
import { startCluster } from './actors/cluster/cluster-node.ts';
import { LedgerTails } from './actors/cluster/ledger-tail.ts';
import { OwnerCalls } from './actors/cluster/owner-calls.ts';

/**
 * Every subsystem, one line each, in route catalog order (see docs/runtime.md "How to add a subsystem").
 */
const MODULES: readonly ModuleFactory[] = [
  systemModule,
  sessionsModule,
  eventsModule,
  authModule,
  mcpModule,
  workgraphModule,
  turnFeaturesModule,
  extensionsModule,
  skillsModule,
  contextModule,
  commsModule,
  mobModule,
  workBindingsModule,
  protocolsModule,
  replayModule,
];

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
  /** Injected clocks by subsystem (e.g. `auth`: token expiry and login lifetimes); default Date.now. Tests move them. */
  clocks?: Record<string, () => number>;
  /** Time source of the schedules (wall time and timers); tests pass a ManualClock. Default: the system clock. */
  clock?: Clock;
  /** A dispatched scheduled turn's claim lease; another process recovers the occurrence after it (default 30 min). */
  scheduleTurnLeaseMs?: number;
  /** Name resolution of outbound connections (tests map names to addresses); default: the system resolver. */
  outboundResolver?: Resolver;
}

export interface App {
  url: string;
  realmId: string;
  /** The realm's directory (config.toml, realm_manifest.json, store/). */
  realmDir: string;
  /** The backend the realm's manifest pins. */
  backend: RealmInfo['backend'];
  /** Inbound API keys: 'required' when requests need a key (SECURITY.md). */
  inboundAuth: 'off' | 'required';
  transport: 'uws' | 'node';
  /** Resolves once no schedule firing or scheduled turn is in progress (tests gate on it). */
  schedulesSettled(): Promise<void>;
  close(): Promise<void>;
}

/** Starts a Warren server. Resolves once it listens; `close()` stops it and flushes storage. */
export async function createApp(opts: AppOptions = {}): Promise<App> {
  const log = opts.logger ?? createLogger({ level: opts.logLevel ?? 'info' });
  // A stored record refused on read (storage/record-kinds.ts) is logged here, once per record.
  setCorruptRecordLog((fields, msg) => log.error({ component: 'store', ...fields }, msg));
  const env = opts.env ?? process.env;
  const realm = await openRealm({
    realm: opts.realm,
    stateRoot: opts.stateRoot,
    backendHint: opts.realmBackend,
    isolated: opts.isolated ?? !opts.realm,
    instance: opts.instance,
    logger: log,
  });
  try {
    return await startOnRealm(realm, opts, log, env);
  } catch (err) {
    // A start that fails (a port in use, a store that cannot open) leaves no realm behind it created.
    if (realm.created) await rm(realm.dir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

/** Everything after the realm is open: storage, the actor runtime, the modules and the listener. */
async function startOnRealm(realm: RealmInfo, opts: AppOptions, log: Logger, env: NodeJS.ProcessEnv): Promise<App> {
  const realmConfig = await RealmConfig.open(realm, { instanceId: opts.instance, exposePaths: opts.exposePaths ?? false, logger: log });
  // Outbound connections made for requests are checked on the resolved address ([network] rules).
  let outboundPolicy = OutboundPolicy.fromConfig(realmConfig.current());
  const outbound = new OutboundGuard(() => outboundPolicy, opts.outboundResolver);
  realmConfig.onChange((cfg) => {
    outboundPolicy = OutboundPolicy.fromConfig(cfg);
    outbound.policyChanged();
  });
  // Observation wraps the store (timed commits) and hooks the runtime, so it exists before both.
  const observe = new Observability({
    backend: realm.backend,
    log: log.child({ component: 'observe' }),
    config: () => realmConfig.current(),
    // Trace export connects under the same [network] rules.
    exportAgent: (protocol) => outbound.nodeAgent(protocol),
  });
  await observe.ready().catch((err: unknown) => log.error({ err }, 'trace export could not start'));
  const storage = realmConfig.current().storage;
  const postgresUrl = env.WARREN_DATABASE_URL || storage?.postgres_url;
  const rawStore = await openStore(realm.backend, realm.storeDir, {
    postgres: postgresUrl ? { url: postgresUrl, poolMax: storage?.pool_max } : undefined,
  });
  // On a realm several processes can open (lmdb, sqlite, postgres) this process is one node of a cluster:
  // session, mob and binding writes are fenced by its leases.
  const cluster = startCluster(rawStore, realmConfig.current(), log);
  const store = withStoreHealth(observe.wrapStore(cluster ? cluster.fence(rawStore) : rawStore));
  const contextRoot = opts.contextRoot ?? process.cwd();
  await mkdir(contextRoot, { recursive: true });

  const makeProviders = (cfg: Config): ProviderRegistry =>
    createProviderRegistry({
      env,
      connect: outbound.connector,
      config: cfg,
      logger: log.child({ component: 'providers' }),
      overrides: opts.providerOverrides,
      // A realm default binding per provider counts as configured when a turn names no model.
      hasBinding: (provider) => realmConnections(cfg, realm.realmId).defaultBindings.has(provider),
      retry: {
        maxRetries: cfg.retry.max_retries,
        initialDelayMs: cfg.retry.initial_delay_ms,
        maxDelayMs: cfg.retry.max_delay_ms,
        multiplier: cfg.retry.multiplier,
      },
    });
  let providers = makeProviders(realmConfig.current());
  const retired: ProviderRegistry[] = [];
  realmConfig.onChange((cfg) => {
    retired.push(providers);
    providers = makeProviders(cfg);
  });

  const headsSql = cluster?.heads;
  const supervisor = new Supervisor({
    store,
    log: log.child({ component: 'sessions' }),
    realmId: realm.realmId,
    contextRoot,
    providers: { resolve: (m, p, c) => providers.resolve(m, p, c) },
    config: () => realmConfig.current(),
    now: Date.now,
    outbound,
    observer: observe.runtimeObserver(),
    cluster,
    // Event streams of sessions hosted by another node (or by none) follow the shared ledger.
    ledgerTails: cluster
      ? new LedgerTails({
          store,
          log: log.child({ component: 'ledger-tail' }),
          pollMs: () => realmConfig.current().cluster?.tail_poll_ms ?? 200,
          hostsHere: (id) => cluster.leases.holds('session', id),
          now: Date.now,
          // One query per poll period for every session this node tails.
          heads: headsSql,
        })
      : undefined,
    // Comms deliveries and MCP tool calls reach the node serving their session through it.
    ownerCalls: cluster ? new OwnerCalls() : undefined,
  });
  if (cluster) {
    supervisor.registry.ownership = cluster;
    cluster.onLost((kind, id) => supervisor.registry.drop(kind, id));
    const tails = supervisor.deps.ledgerTails;
    supervisor.onClose(async () => tails?.close());
    cluster.onOrphan((kind, id) => supervisor.registry.wake(kind, id));
    cluster.onTakeover(
      (kind, id) =>
        void supervisor.registry
          .takenOver(kind, id)
          .catch((err: unknown) => log.error({ err, kind, id }, 'resuming a taken-over actor failed')),
    );
  }
  let baseUrl = '';
  const schedules = schedulesModule({ clock: opts.clock, turnLeaseMs: opts.scheduleTurnLeaseMs });
  const { routes, handlers, units } = composeModules([...MODULES, schedules.factory, observeModule(observe)], {
    supervisor,
    sessionPolicy: {
      idleEvictMs: opts.idleEvictMs ?? 5 * 60_000,
      shedAfterMs: opts.shedAfterMs ?? 2_000,
      maxResident: opts.maxResidentSessions ?? 200_000,
      overdueRunMs: 30 * 60_000,
    },
    realm: {
      realmId: realm.realmId,
      instanceId: opts.instance,
      backend: realm.backend,
      stateRoot: opts.stateRoot,
      contextRoot,
      userConfigRoot: opts.userConfigRoot,
      dir: realm.dir,
    },
    env,
    log,
    clock: (name) => opts.clocks?.[name] ?? Date.now,
    config: realmConfig,
    modelCatalog,
    openapi: (all) => buildOpenApi(all, { title: 'Warren', version: WARREN_VERSION }),
    baseUrl: () => baseUrl,
  });
  for (const unit of units) await unit.start?.();
  const maxBodyBytes = realmConfig.current().limits.max_body_bytes;
  const httpLog = log.child({ component: 'http' });
  const router = createRouter({
    routes,
    handlers,
    logger: httpLog,
    maxBodyBytes,
    maxJsonDepth: realmConfig.current().limits.max_json_depth,
  });
  // Everything started so far is stopped in this order by close(), and by a start that fails from here
  // on (a refused inbound-auth setup, a port in use): nothing keeps running behind a failed start.
  let server: Awaited<ReturnType<typeof createHttpServer>> | undefined;
  const shutdown = async (): Promise<void> => {
    await supervisor.close();
    await server?.close();
    await Promise.all([providers, ...retired].map((p) => p.close()));
    await cluster?.close();
    await outbound.close();
    await store.close();
  };
  let inbound: Awaited<ReturnType<typeof setupInboundAuth>>;
  try {
    const host = opts.host ?? realmConfig.current().rest.host;
    // Inbound API keys (SECURITY.md): decided before listening; refuses a keyless start beyond loopback.
    inbound = await setupInboundAuth({
      store: rawStore,
      host,
      insecureNoAuth: opts.insecureNoAuth ?? false,
      config: () => realmConfig.current(),
      routes,
      log: httpLog,
      cluster: cluster !== undefined,
      realmKeyPath: join(realm.dir, REALM_KEY_FILE),
      now: opts.clocks?.['inbound-auth'],
    });
    const forwardOptions = cluster
      ? { ...clusterForwardOptions(cluster, supervisor, observe, httpLog), peerHeaders: inbound.peerHeaders }
      : undefined;
    server = await createHttpServer(opts.httpTransport ?? 'auto', {
      handler: inbound.wrap(cluster && forwardOptions ? clusterForwarding(router, forwardOptions) : router),
      maxBodyBytes,
      logger: httpLog,
      websockets: inbound.websockets(units.flatMap((u) => u.websockets ?? [])),
      guard: {
        policy: configGuardPolicy(
          () => realmConfig.current(),
          () => host,
        ),
        log: httpLog,
      },
    });
    const { port } = await server.listen(host, opts.port ?? realmConfig.current().rest.port);
    baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    await cluster?.start(baseUrl);
  } catch (err) {
    await shutdown().catch((closeErr: unknown) => log.warn({ err: closeErr }, 'stopping after a failed start failed'));
    throw err;
  }
  log.info({ url: baseUrl, realm: realm.realmId, backend: realm.backend, transport: server.kind, node: cluster?.nodeId }, 'listening');

  let closing: Promise<void> | null = null;
  return {
    url: baseUrl,
    realmId: realm.realmId,
    realmDir: realm.dir,
    backend: realm.backend,
    inboundAuth: inbound.mode,
    transport: server.kind,
    schedulesSettled: () => schedules.settled(),
    close: () => {
      closing ??= (async () => {
        await shutdown();
        log.info({ realm: realm.realmId }, 'stopped');
      })();
      return closing;
    },
  };
}
