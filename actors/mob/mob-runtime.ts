// actors/mob/mob-runtime.ts: the mob runtime as one object the surfaces hold (JSON-RPC, REST, agent
// tools, schedules): the host (mobs and members), the flow runner, the structural ledger, the operator
// scope gate and the start-up stages (MobStarted, ModulesStarted, EventsMerged, RuntimeReady).
import { randomUUID } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { LIFECYCLE_STAGES, type LifecycleStage, type MemberRecord, type MobScope } from '../../contracts/mob.ts';
import { RPC_PARAMS, type RpcMethod, type RpcParams } from '../../contracts/mob-rpc.ts';
import { ServiceError } from '../../contracts/errors.ts';
import { hostIdentity } from '../../contracts/routes-system.ts';
import type { SessionHost } from '../session/session-host.ts';
import type { Supervisor } from '../supervisor.ts';
import type { ToolSource } from '../tool-contributions.ts';
import type { SessionSettings } from '../../contracts/records.ts';
import type { Tool } from '../../tools/tool.ts';
import { mobToolsFor } from './mob-tool-port.ts';
import { mergeEvents, moduleEnvelope, normalizeModuleLines, NormalizationError } from './envelope.ts';
import { FlowRunner } from './flow-runner.ts';
import { memberSessions } from './member-sessions.ts';
import type { MobActor } from './mob-actor.ts';
import { forkHelper, spawnHelper } from './mob-helpers.ts';
import { MobHost } from './mob-host.ts';
import { MobLedger, type MobEventFilter } from './mob-ledger.ts';
import { hostCapabilities, MobPlacement, type PlacementDeps } from './mob-placement.ts';
import { ScopeGate, type Caller } from './mob-scopes.ts';
import { peersOf } from './mob-wiring.ts';

const checks = Object.fromEntries(Object.entries(RPC_PARAMS).map(([k, s]) => [k, Compile(s)])) as Record<
  RpcMethod,
  ReturnType<typeof Compile>
>;

/** The scope each method needs (grant administration checks AdminGrants itself). */
const METHOD_SCOPE: Record<RpcMethod, MobScope | null> = {
  'mob/create': 'MobLifecycle',
  'mob/destroy': 'MobLifecycle',
  'mob/get': 'MobRead',
  'mob/list': 'MobRead',
  'mob/spawn_member': 'MemberLifecycle',
  'mob/retire_member': 'MemberLifecycle',
  'mob/cancel_member': 'MemberLifecycle',
  'mob/respawn_member': 'MemberLifecycle',
  'mob/wire_members': 'MemberWire',
  'mob/unwire_members': 'MemberWire',
  'mob/send_message': 'FlowControl',
  'mob/start_flow': 'FlowControl',
  'mob/flow_status': 'MobRead',
  'mob/cancel_flow': 'FlowControl',
  'mob/spawn_helper': 'HelperControl',
  'mob/fork_helper': 'HelperControl',
  'mob/grants/set': null,
  'mob/grants/revoke': null,
  'mob/grants/list': null,
  'mob/runtime_status': 'MobRead',
  'toolkit/mob_events/query': 'MobRead',
  'toolkit/mob_events/subscribe': 'MobRead',
  'toolkit/mob_events/normalize': 'MobRead',
};

export function isRpcMethod(name: string): name is RpcMethod {
  return Object.hasOwn(RPC_PARAMS, name);
}

export interface MobRuntimeOptions {
  supervisor: Supervisor;
  sessions: SessionHost;
  /** The clock of grant expiry and event timestamps (injectable: AppOptions.clocks.mob). */
  now(): number;
  baseUrl(): string;
  /** Structural events the ledger keeps (`[mob] event_retention`). */
  eventRetention?: number;
  /** Where members live (GET /mob/{id}/hosts): this host's id, capabilities, and the cluster when there is one. */
  placement?: Partial<Omit<PlacementDeps, 'baseUrl' | 'now'>>;
}

export class MobRuntime implements ToolSource {
  readonly ledger: MobLedger;
  readonly host: MobHost;
  readonly flows: FlowRunner;
  readonly scopes: ScopeGate;
  readonly placement: MobPlacement;
  readonly stages: LifecycleStage[] = [];
  /** Open event streams (mob SSE, toolkit stream): each ends with `done` at shutdown. */
  readonly streams = new Set<{ close(): void }>();

  constructor(private readonly opts: MobRuntimeOptions) {
    const store = opts.supervisor.deps.store;
    this.ledger = new MobLedger(store, opts.now, opts.eventRetention);
    this.host = new MobHost({ supervisor: opts.supervisor, sessions: memberSessions(opts.sessions), ledger: this.ledger, now: opts.now });
    this.flows = new FlowRunner(this.host, store);
    this.scopes = new ScopeGate(store, opts.now, opts.supervisor.deps.cluster !== undefined);
    const sup = opts.supervisor;
    this.placement = new MobPlacement(this.host, {
      hostId: () => hostIdentity({ realmId: sup.deps.realmId }).host_id,
      capabilities: () => hostCapabilities(sup),
      ...opts.placement,
      baseUrl: opts.baseUrl,
      now: opts.now,
    });
  }

  /** Loads grants and the ledger (projecting what was never projected), then resumes interrupted flow runs. */
  async start(): Promise<void> {
    await this.scopes.open();
    this.stage('MobStarted');
    this.stage('ModulesStarted');
    await this.ledger.open();
    this.stage('EventsMerged');
    await this.flows.recover();
    this.stage('RuntimeReady');
  }

  private stage(s: LifecycleStage): void {
    if (LIFECYCLE_STAGES[this.stages.length] !== s) throw new Error(`mob lifecycle stage ${s} out of order`);
    this.stages.push(s);
  }

  async close(): Promise<void> {
    for (const s of [...this.streams]) s.close();
    await this.ledger.flushed();
  }

  /** The mob tools of a member session, bound to its mob and identity. */
  toolsFor(_sessionId: string, settings: SessionSettings): Tool[] {
    const m = settings.mob_member;
    return m ? mobToolsFor(this, m.mob_id, m.agent_identity) : [];
  }

  memberSnapshot(mob: MobActor, rec: MemberRecord) {
    return {
      mob_id: mob.id,
      agent_identity: rec.agent_identity,
      role: rec.role,
      state: rec.state,
      kickoff: rec.kickoff,
      session_id: rec.session_id,
      generation: rec.generation,
      helper: rec.helper,
      wired_to: peersOf(mob.record, rec.agent_identity),
      ...(rec.last_error ? { last_error: rec.last_error } : {}),
      ...(rec.cleanup_debt ? { cleanup_debt: rec.cleanup_debt } : {}),
    };
  }

  mobView(mob: MobActor) {
    const r = mob.record;
    return {
      mob_id: r.mob_id,
      state: mob.state,
      revision: mob.revision,
      labels: r.labels,
      created_at_ms: r.created_at_ms,
      updated_at_ms: r.updated_at_ms,
      members: Object.values(r.members).map((m) => this.memberSnapshot(mob, m)),
      edges: r.edges.map(([a, b]) => ({ a, b })),
      flows: (r.definition.flows ?? []).map((f) => f.flow_id),
      retired_helpers: (r.retired_helpers ?? []).map((h) => h.agent_identity),
    };
  }

  /** Checks params and scope, then runs the method. Throws ServiceError (BAD_REQUEST for bad params). */
  async call(method: RpcMethod, params: unknown, caller: Caller): Promise<unknown> {
    const p = params ?? {};
    if (!checks[method].Check(p))
      throw new ServiceError('BAD_REQUEST', `invalid params for ${method}`, {
        errors: [...checks[method].Errors(p)].slice(0, 5).map((e) => e.message),
      });
    const scope = METHOD_SCOPE[method];
    await this.scopes.fresh(caller);
    if (method === 'mob/grants/list' || method === 'mob/grants/revoke') await this.scopes.reload();
    if (scope) this.scopes.require(caller, scope);
    return this.run(method, p as never, caller);
  }

  private async run<M extends RpcMethod>(method: M, p: RpcParams<M>, caller: Caller): Promise<unknown> {
    const { host } = this;
    const a = p as Record<string, never>;
    switch (method) {
      case 'mob/create': {
        const q = p as RpcParams<'mob/create'>;
        return this.mobView(
          await host.create({
            ...(q.mob_id ? { mob_id: q.mob_id } : {}),
            ...(q.labels ? { labels: q.labels } : {}),
            definition: q.definition ?? {},
          }),
        );
      }
      case 'mob/destroy':
        return this.mobView(await host.destroy(a.mob_id, p as RpcParams<'mob/destroy'>));
      case 'mob/get':
        return this.mobView(await host.get(a.mob_id));
      case 'mob/list':
        return {
          mobs: (await host.list()).map((r) => ({
            mob_id: r.mob_id,
            state: r.state,
            labels: r.labels,
            members: Object.keys(r.members).length,
          })),
        };
      case 'mob/spawn_member': {
        const q = p as RpcParams<'mob/spawn_member'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q);
        const { member } = await host.spawn(mob, q.member, q.wait === true);
        return this.memberSnapshot(mob, member.record);
      }
      case 'mob/retire_member': {
        const q = p as RpcParams<'mob/retire_member'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q, q.agent_identity);
        await host.retire(mob, q.agent_identity);
        return { retired: true, revision: mob.revision };
      }
      case 'mob/cancel_member': {
        const q = p as RpcParams<'mob/cancel_member'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q, q.agent_identity);
        await host.cancel(mob, q.agent_identity);
        return { cancelled: true, revision: mob.revision };
      }
      case 'mob/respawn_member': {
        const q = p as RpcParams<'mob/respawn_member'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q, q.agent_identity);
        return { ...(await host.respawn(mob, q.agent_identity, q.initial_message)), revision: mob.revision };
      }
      case 'mob/wire_members': {
        const q = p as RpcParams<'mob/wire_members'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q);
        return { ...(await host.wiring.wire(mob, q.edges)), revision: mob.revision };
      }
      case 'mob/unwire_members': {
        const q = p as RpcParams<'mob/unwire_members'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q);
        return { unwired: await host.wiring.unwire(mob, q.a, q.b), revision: mob.revision };
      }
      case 'mob/send_message': {
        const q = p as RpcParams<'mob/send_message'>;
        const mob = await host.live(q.mob_id);
        host.fence(mob, q, q.agent_identity);
        const reply = await host.turns.dispatch(mob, q.agent_identity, q.prompt);
        return { session_id: reply.sessionId, text: reply.text, turns: reply.turns, tool_calls: reply.toolCalls, usage: reply.usage };
      }
      case 'mob/start_flow': {
        const q = p as RpcParams<'mob/start_flow'>;
        return this.flows.startFlowRun({
          mobId: q.mob_id,
          flowId: q.flow_id,
          runId: q.run_id ?? randomUUID(),
          activation: q.activation,
          ...(q.run_labels ? { runLabels: q.run_labels } : {}),
        });
      }
      case 'mob/flow_status':
        return this.runOrThrow(a.mob_id, a.run_id, await this.flows.getFlowRun(a.mob_id, a.run_id));
      case 'mob/cancel_flow':
        return this.runOrThrow(a.mob_id, a.run_id, await this.flows.cancelFlowRun(a.mob_id, a.run_id));
      case 'mob/spawn_helper': {
        const { mob_id, ...req } = p as RpcParams<'mob/spawn_helper'>;
        return spawnHelper(host, mob_id, req);
      }
      case 'mob/fork_helper': {
        const { mob_id, ...req } = p as RpcParams<'mob/fork_helper'>;
        return forkHelper(host, mob_id, req);
      }
      case 'mob/grants/set': {
        const q = p as RpcParams<'mob/grants/set'>;
        const grant = await this.scopes.grant(caller, q.principal, q.scopes, q.expires_at_ms);
        await this.ledger.append({
          mob_id: '*',
          kind: 'scope_granted',
          data: {
            principal: q.principal,
            scopes: grant.scopes,
            ...(q.expires_at_ms !== undefined ? { expires_at_ms: q.expires_at_ms } : {}),
          },
        });
        return grant;
      }
      case 'mob/grants/revoke': {
        const revoked = await this.scopes.revoke(caller, a.principal);
        if (revoked) await this.ledger.append({ mob_id: '*', kind: 'scope_revoked', data: { principal: a.principal } });
        return { revoked };
      }
      case 'mob/grants/list':
        return { grants: this.scopes.list(caller) };
      case 'mob/runtime_status':
        return {
          stages: this.stages,
          head_cursor: this.ledger.headCursor,
          projected_cursor: this.ledger.projected,
          floor_cursor: this.ledger.floorCursor,
        };
      case 'toolkit/mob_events/query': {
        const q = p as RpcParams<'toolkit/mob_events/query'>;
        const limit = q.limit ?? 100;
        const after = await this.ledger.resolveCursor(q.after_cursor);
        const events = await this.ledger.range(after, limit, (q.filter ?? {}) as MobEventFilter);
        const next = events.at(-1)?.cursor ?? after;
        return {
          events,
          next_cursor: next,
          head_cursor: this.ledger.headCursor,
          floor_cursor: this.ledger.floorCursor,
          complete: events.length < limit,
        };
      }
      case 'toolkit/mob_events/subscribe': {
        const q = p as RpcParams<'toolkit/mob_events/subscribe'>;
        const filter = (q.filter ?? {}) as MobEventFilter;
        const after = await this.ledger.resolveCursor(q.after_cursor);
        const events = await this.ledger.range(after, 1000, filter);
        const cursor = events.at(-1)?.cursor ?? after;
        const qs = new URLSearchParams({ after_cursor: String(cursor) });
        if (filter.mob_id) qs.set('mob_id', filter.mob_id);
        if (filter.kinds?.length) qs.set('kinds', filter.kinds.join(','));
        if (filter.agent_identity) qs.set('agent_identity', filter.agent_identity);
        if (filter.run_id) qs.set('run_id', filter.run_id);
        return {
          snapshot: { events, cursor },
          handshake: {
            protocol: 'sse',
            resume_parameter: 'after_cursor',
            last_event_id: 'cursor',
            head_cursor: this.ledger.headCursor,
            floor_cursor: this.ledger.floorCursor,
          },
          sse_url: `${this.opts.baseUrl()}/toolkit/mob_events/stream?${qs}`,
        };
      }
      case 'toolkit/mob_events/normalize': {
        try {
          return { events: normalizeModuleLines((p as RpcParams<'toolkit/mob_events/normalize'>).lines) };
        } catch (err) {
          if (err instanceof NormalizationError) throw new ServiceError('BAD_REQUEST', err.message, { line: err.line, reason: err.reason });
          throw err;
        }
      }
      default:
        throw new ServiceError('BAD_REQUEST', `unknown method ${String(method)}`);
    }
  }

  private runOrThrow(mobId: string, runId: string, run: unknown): unknown {
    if (run === undefined) throw new ServiceError('NOT_FOUND', `no run ${runId} in mob ${mobId}`, { mob_id: mobId, run_id: runId });
    return run;
  }

  /** The mob SSE replay: recent member agent events merged with the mob's structural events after `after`. */
  async replay(mobId: string, after: number, member?: string) {
    const filter: MobEventFilter = { mob_id: mobId, ...(member ? { agent_identity: member } : {}) };
    const structural = await this.ledger.range(after, 10_000, filter);
    const agent = this.host.agentEvents.recent(mobId).filter((e) => !member || (e.event as { agent_id?: string }).agent_id === member);
    return { merged: mergeEvents(agent, structural.map(moduleEnvelope)), structural };
  }
}
