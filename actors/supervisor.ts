// actors/supervisor.ts: the runtime root every module unit shares. It holds the one actor registry (every
// kind's live actors), the capability registry, the in-flight request ids and the
// tool contributions (actors/tool-contributions.ts), plus the dependencies actors are built with. app.ts makes one; module units register into it.
import type { OutboundGuard } from './net/outbound-guard.ts';
import type { Logger } from 'pino';
import type { ClusterReport } from '../contracts/cluster.ts';
import type { Config } from '../contracts/config.ts';
import type { AuthBinding } from '../contracts/auth.ts';
import type { ProviderName } from '../contracts/session.ts';
import type { Provider, ProviderCredential } from '../providers/provider.ts';
import type { Store } from '../storage/store.ts';
import type { TurnFeatureService } from './turn-features/run-features.ts';
import { ActorRegistry } from './actor-registry.ts';
import { CapabilityRegistry } from './capability-registry.ts';
import { RequestRegistry } from './request-registry.ts';
import { ToolContributions } from './tool-contributions.ts';
import type { RuntimeObserver } from './runtime-observer.ts';
import type { LedgerOutbox } from './session/session-writer.ts';
import type { SkillResolver } from './skills/turn-skills.ts';
import type { MobTargetPort } from '../contracts/schedule.ts';
import type { FlowRunPort } from '../contracts/mob.ts';
import type { Compactor } from './compaction.ts';
import type { FollowUpPort } from './busy/busy-port.ts';
import type { LedgerTails } from './cluster/ledger-tail.ts';
import type { OwnerCalls } from './cluster/owner-calls.ts';
import type { TurnRecorderPort } from './replay/recorder.ts';
import type { SessionMcpPort } from './mcp-live.ts';

/** Picks the provider adapter for a model (and optional provider name, and binding credential). */
interface ProviderResolver {
  resolve(
    model?: string | null,
    provider?: string | null,
    credential?: ProviderCredential,
  ): { provider: Provider; name: ProviderName; model: string };
}

/** Turn-time credentials from realm auth bindings (actors/auth/auth-service.ts). */
interface CredentialResolver {
  /** Validates a selector before anything is created; answers the binding's provider. */
  checkSelector(ref: AuthBinding): Promise<{ provider: string; defaultModel?: string }>;
  /** The selector's (or the realm default binding's) credential; undefined means the environment key. */
  credentialFor(ref: AuthBinding | undefined, provider: string, model: string): Promise<ProviderCredential | undefined>;
}

/** The realm store as the runtime holds it: http/ names its type through here (it reaches storage only through actors/). */
export type RealmStore = Store;

/** What every actor kind may be built with. */
export interface RuntimeDeps {
  store: Store;
  log: Logger;
  realmId: string;
  contextRoot: string;
  providers: ProviderResolver;
  /** Set by the auth module (http/modules/auth-module.ts); absent, turns use the environment keys. */
  credentials?: CredentialResolver;
  /** Set by the turn-features module: structured output, budgets and hooks of each run. */
  turnFeatures?: TurnFeatureService;
  /** Set by the webhooks module: outbox ops committed with the ledger entries they report. */
  ledgerOutbox?: LedgerOutbox;
  /** Set by the skills module (http/modules/skills-module.ts); absent, turn skill refs answer 501. */
  skills?: SkillResolver;
  /** Set by the context module (http/modules/context-module.ts); absent, nothing compacts. */
  compactor?: Compactor;
  /** Set by the replay module (http/modules/replay-module.ts): records each turn's model calls and tool results. */
  recorder?: TurnRecorderPort;
  /** Set by the MCP module: what a replay or a fork needs of a session's live MCP servers (actors/mcp-live.ts). */
  sessionMcp?: SessionMcpPort;
  /** Set by the extensions module: busy policies (steering and follow-ups, actors/busy). */
  followUps?: FollowUpPort;
  /** Set by the mob module (http/modules/mob-module.ts): schedules deliver mob targets through it. */
  mobTargets?: MobTargetPort;
  /** Set by the mob module: mob flow runs for other subsystems (work execution bindings). */
  mobFlows?: FlowRunPort;
  /** Outbound connections for requests (webhooks, MCP url servers, OAuth): checked after DNS (actors/net/outbound-guard.ts). */
  outbound?: OutboundGuard;
  config(): Config;
  now(): number;
  /**
   * On a cluster node (postgres realm): node, peers and database state for host_info and health, and
   * (read-only) where a session's lease says it lives (the mob hosts route reads it).
   */
  cluster?: {
    report(): ClusterReport;
    route?(sessionId: string): Promise<{ local: true } | { local: false; nodeId: string; url: string }>;
    /** The rev of this node's lease on a resource while it holds it well within its term, else undefined. */
    leaseRev?(kind: string, id: string): number | undefined;
  };
  /** On a cluster node: event streams of sessions hosted elsewhere, tailed from the shared ledger. */
  ledgerTails?: LedgerTails;
  /** On a cluster node: calls run on the node serving a session (comms deliveries, MCP session tools). */
  ownerCalls?: OwnerCalls;
  /** Observation hooks (metrics, traces, the viewer's inspector); absent when nothing observes. */
  observer?: RuntimeObserver;
}

export class Supervisor {
  readonly registry: ActorRegistry;
  readonly capabilities: CapabilityRegistry;
  readonly requests = new RequestRegistry();
  /** The tools module units add to agents (actors/tool-contributions.ts). */
  readonly tools: ToolContributions;
  /** Closed after every actor kind (modules' own resources). */
  private readonly closers: Array<() => Promise<void>> = [];

  constructor(readonly deps: RuntimeDeps) {
    this.registry = new ActorRegistry({ now: deps.now, log: deps.log });
    this.capabilities = new CapabilityRegistry(() => deps.config());
    this.tools = new ToolContributions((id) => this.capabilities.status(id) === 'Available');
  }

  /** Runs `close` at shutdown, after every actor has stopped (newest first). */
  onClose(close: () => Promise<void>): void {
    this.closers.unshift(close);
  }

  /** Stops every actor kind (interrupting work and flushing writes), then the modules' own resources. */
  async close(): Promise<void> {
    await this.registry.close();
    for (const close of this.closers) await close();
  }
}
