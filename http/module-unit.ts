// http/module-unit.ts: how a subsystem plugs into Warren. A module unit is one factory, in a file the
// subsystem owns (http/modules/<name>-module.ts), that returns everything the subsystem adds: route
// catalog entries and their handlers, actor kinds (registered with ctx.supervisor.registry), tools for
// sessions, config keys and the capabilities it builds. app.ts lists the factories, one line each;
// composeModules() builds the route table and the capability registry from them. See docs/runtime.md.
import type { Config } from '../contracts/config.ts';
import type { RouteDef } from '../contracts/route.ts';
import type { CapabilityDecl } from '../actors/capability-registry.ts';
import { SessionHost, type SessionPolicy } from '../actors/session/session-host.ts';
import type { Supervisor } from '../actors/supervisor.ts';
import type { ToolContribution } from '../actors/tool-contributions.ts';
import type { HandlerTable } from './handler.ts';
import type { WebSocketRoute } from './transport.ts';
import type { Logger } from 'pino';

/** The realm this server serves (reported by the system routes). */
interface RealmInfo {
  realmId: string;
  instanceId?: string;
  backend: string;
  stateRoot?: string;
  contextRoot: string;
  /** `--user-config-root`, when given (user-level skills live under it). */
  userConfigRoot?: string;
  /** The realm's directory (`<state root>/<realm>/`), for files a subsystem keeps beside the config. */
  dir?: string;
}

/** The realm's live config, as the /config routes need it (config/realm-config.ts satisfies it). */
interface ConfigAccess {
  envelope(): unknown;
  replace(body: unknown): Promise<unknown>;
  patch(body: unknown): Promise<unknown>;
  current(): Config;
}

/** What every module factory receives. Late-bound getters are valid once the server listens. */
export interface ModuleContext {
  /** The runtime root: actor registry, capability registry, request ids, tool contributions, deps. */
  supervisor: Supervisor;
  /** The session kind (created on first use); the stable entry to run turns from other subsystems. */
  sessions(): SessionHost;
  realm: RealmInfo;
  config: ConfigAccess;
  /** The process environment the server was started with (tests pass their own). */
  env: NodeJS.ProcessEnv;
  /** The root logger: a module logs through `log.child({ component })` (one component key per line). */
  log: Logger;
  /** The clock of a named subsystem (injected by tests through AppOptions.clocks), else Date.now. */
  clock(name: string): () => number;
  /** The GET /models/catalog body. */
  modelCatalog(): unknown;
  /** The composed route catalog (every module's routes, then the not-yet-built ones). */
  routes(): readonly RouteDef[];
  openapi(): object;
  /** `http://<host>:<port>` of the listening server. */
  baseUrl(): string;
  /** Every module's health readings, merged. */
  health(): Record<string, number>;
}

/** Everything one subsystem adds. Every field is optional except the name. */
export interface ModuleUnit {
  /** Short unique name ('sessions', 'schedules'); used in wiring errors and logs. */
  name: string;
  /** Catalog entries this module serves, in catalog order. */
  routes?: readonly RouteDef[];
  /** Handlers keyed by route id; every key must name a route of some module. */
  handlers?: HandlerTable;
  /** Actor kind names this module registered with ctx.supervisor.registry (checked at startup). */
  actorKinds?: readonly string[];
  /** Tools this module offers to sessions. */
  tools?: Omit<ToolContribution, 'owner'>;
  /** Top-level config keys (sections of config.toml) this module owns; two modules may not share one. */
  configKeys?: readonly string[];
  /** Capabilities (and host features) this module builds; anything not declared reports NotCompiled. */
  capabilities?: readonly CapabilityDecl[];
  /** WebSocket endpoints this module serves beside its routes (e.g. JSON-RPC at /rpc). */
  websockets?: readonly WebSocketRoute[];
  /** Health readings (e.g. the session dimensions of GET /runtime/health): name → count of bad actors. */
  health?(): Record<string, number>;
  /** Starts the module's own listeners and recovery, before the HTTP server listens. */
  start?(): Promise<void>;
  /** Releases the module's own resources at shutdown, after every actor has stopped. */
  close?(): Promise<void>;
}

export type ModuleFactory = (ctx: ModuleContext) => ModuleUnit;

export interface ComposeOptions {
  /** The root logger (ModuleContext.log). */
  log: Logger;
  supervisor: Supervisor;
  sessionPolicy: SessionPolicy;
  realm: RealmInfo;
  config: ConfigAccess;
  env?: NodeJS.ProcessEnv;
  clock?(name: string): () => number;
  modelCatalog(): unknown;
  openapi(routes: readonly RouteDef[]): object;
  baseUrl(): string;
}

export interface ComposedModules {
  routes: RouteDef[];
  handlers: HandlerTable;
  units: ModuleUnit[];
}

/** Builds every module, registers its capabilities, tools and config keys, and joins routes and handlers. */
export function composeModules(factories: readonly ModuleFactory[], opts: ComposeOptions): ComposedModules {
  const { supervisor } = opts;
  const routes: RouteDef[] = [];
  const handlers: HandlerTable = {};
  const units: ModuleUnit[] = [];
  let sessions: SessionHost | undefined;
  let openapi: object | undefined;
  const ctx: ModuleContext = {
    supervisor,
    sessions: () => (sessions ??= new SessionHost(supervisor, opts.sessionPolicy)),
    realm: opts.realm,
    config: opts.config,
    env: opts.env ?? process.env,
    log: opts.log,
    clock: (name) => opts.clock?.(name) ?? Date.now,
    modelCatalog: opts.modelCatalog,
    routes: () => routes,
    openapi: () => (openapi ??= opts.openapi(routes)),
    baseUrl: opts.baseUrl,
    health: () => Object.assign({}, ...units.map((u) => u.health?.() ?? {})) as Record<string, number>,
  };
  const configOwners = new Map<string, string>();
  for (const factory of factories) {
    const unit = factory(ctx);
    if (units.some((u) => u.name === unit.name)) throw new Error(`module registered twice: ${unit.name}`);
    units.push(unit);
    routes.push(...(unit.routes ?? []));
    for (const [id, handler] of Object.entries(unit.handlers ?? {})) {
      if (Object.hasOwn(handlers, id)) throw new Error(`handler ${id} registered by two modules`);
      handlers[id] = handler;
    }
    for (const decl of unit.capabilities ?? []) supervisor.capabilities.declare(decl, unit.name);
    if (unit.tools) supervisor.tools.add({ owner: unit.name, ...unit.tools });
    for (const key of unit.configKeys ?? []) {
      const owner = configOwners.get(key);
      if (owner) throw new Error(`config key ${key} claimed by both ${owner} and ${unit.name}`);
      configOwners.set(key, unit.name);
    }
    for (const kind of unit.actorKinds ?? []) {
      if (!supervisor.registry.kinds().includes(kind))
        throw new Error(`module ${unit.name} names actor kind ${kind}, which it did not register`);
    }
    if (unit.close) supervisor.onClose(unit.close);
  }
  return { routes, handlers, units };
}
