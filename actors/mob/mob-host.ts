// actors/mob/mob-host.ts: the mob runtime of one Warren process. Registers the `mob` and `mob_member`
// actor kinds, and holds the commands every surface calls (JSON-RPC, REST, agent tools, schedules):
// create and destroy mobs; spawn, retire, cancel and respawn members; clean up retired helpers.
// Turns on members (kickoffs, dispatched prompts, waiting for kickoffs) are in member-turns.ts; wiring
// (edges, route installs) in mob-wiring.ts. Structural events go to the durable ledger (mob-ledger.ts);
// member turn events go to the live agent tap (mob-agent-events.ts). Flows live in flow-runner.ts,
// helpers in mob-helpers.ts.
import { randomUUID } from 'node:crypto';
import { Compile } from 'typebox/compile';
import { MobDefinition, type MobRecord, type MemberRecord, type MemberSpec, type StructuralKind } from '../../contracts/mob.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { ContentInput } from '../../contracts/transcript.ts';
import { mobMachine } from '../../machines/mob-machine.ts';
import { memberMachine } from '../../machines/mob-member-machine.ts';
import type { KindTable } from '../actor-registry.ts';
import type { TurnReply } from '../session/session-commands.ts';
import type { Supervisor } from '../supervisor.ts';
import { AgentEvents } from './mob-agent-events.ts';
import { MemberTurns } from './member-turns.ts';
import { MEMBER_KIND, MOB_KIND, MOB_NS, MobActor, type MemberRuntime } from './mob-actor.ts';
import type { MobLedger, NewMobEvent } from './mob-ledger.ts';
import type { MemberSessions } from './member-sessions.ts';
import { isInstalled, MobWiring, peersOf, setInstalled, uninstallAll, unwireAll } from './mob-wiring.ts';
import { MOB_KIND as MOB_RECORD, readRecord, readRecords } from '../../storage/record-kinds.ts';

const checkDefinition = Compile(MobDefinition);

export interface MobHostDeps {
  supervisor: Supervisor;
  sessions: MemberSessions;
  ledger: MobLedger;
  now(): number;
}

function bad(message: string, details?: unknown): ServiceError {
  return new ServiceError('BAD_REQUEST', message, details);
}

function mobNotFound(mobId: string): ServiceError {
  return new ServiceError('NOT_FOUND', `mob not found: ${mobId}`, { mob_id: mobId });
}

/** What a mutation expects to find (docs/mobs.md "Fences"). */
export interface Fence {
  expected_revision?: number;
  expected_generation?: number;
}

/** Retired helpers kept in a mob record's `retired_helpers` index (their status and history stay readable). */
const RETIRED_HELPERS_KEPT = 64;

export interface CreateMob {
  mob_id?: string;
  labels?: Record<string, string>;
  definition: MobDefinition;
}

export class MobHost {
  readonly table: KindTable<MobActor>;
  readonly memberTable: KindTable<MemberRuntime>;
  readonly agentEvents = new AgentEvents();
  /** Edges between members and their routes (wire, unwire, route installs). */
  readonly wiring = new MobWiring(this);
  /** Kickoffs and dispatched prompts on members' sessions. */
  readonly turns = new MemberTurns(this);
  /** Called when a mob is destroyed (the flow runner cancels its runs). */
  onDestroy: (mobId: string) => Promise<void> = async () => {};
  /** Called when this node took a mob over from a cluster node that died (the flow runner resumes its runs). */
  onTakenOver: (mobId: string) => Promise<void> = async () => {};
  /** True for a mob whose flow runs were parked at shutdown (on a cluster its lease is kept to expire). */
  parkedRuns: (mobId: string) => boolean = () => false;
  /** Called once at shutdown, before any mob or session stops (the flow runner parks its runs). */
  onShutdown: () => Promise<void> = async () => {};
  /** Set at shutdown: turns ended by the shutdown change no member state (they resume after restart). */
  closing = false;

  constructor(private readonly deps: MobHostDeps) {
    const { registry } = deps.supervisor;
    const policy = { idleEvictMs: 30 * 60_000, maxResident: 10_000 };
    this.table = registry.register<MobActor>({
      kind: MOB_KIND,
      machine: mobMachine,
      policy,
      hydrate: (id) => this.hydrate(id),
      notFound: mobNotFound,
      takenOver: (id) => this.onTakenOver(id),
      // A survivor takes the mob over once the lease runs out and resumes the parked runs.
      keepLease: (a) => this.parkedRuns(a.id),
      busy: (a) => a.inFlight > 0 || a.machine.getSnapshot().context.activeRuns > 0,
      quiesce: async () => {
        if (this.closing) return;
        this.closing = true;
        await this.onShutdown();
      },
      stop: async (a) => {
        for (const m of a.members.values()) this.memberTable.forget(m.id);
        await a.stop();
      },
      describe: (a) => a.facts(),
    });
    this.memberTable = registry.register<MemberRuntime>({
      kind: MEMBER_KIND,
      machine: memberMachine,
      policy,
      hydrate: async () => undefined,
      busy: () => true, // members live and leave with their mob
      stop: async () => {},
      describe: (m) => m.facts(),
    });
  }

  get sessions(): MemberSessions {
    return this.deps.sessions;
  }

  now(): number {
    return this.deps.now();
  }

  // ---- lookup ---------------------------------------------------------------------------------------

  /** The live mob (hydrated on first use); 404 NOT_FOUND when unknown. */
  async get(mobId: string): Promise<MobActor> {
    const mob = await this.table.get(mobId);
    mob.lastUsedMs = this.deps.now();
    return mob;
  }

  /** The mob, refusing a destroyed one (400). */
  async live(mobId: string): Promise<MobActor> {
    const mob = await this.get(mobId);
    if (mob.state === 'destroyed' || mob.state === 'destroying') throw bad(`mob ${mobId} is ${mob.state}`, { mob_id: mobId });
    return mob;
  }

  member(mob: MobActor, identity: string): MemberRuntime {
    const m = mob.members.get(identity);
    if (!m) throw bad(`no member ${identity} in mob ${mob.id}`, { mob_id: mob.id, agent_identity: identity });
    return m;
  }

  /**
   * Refuses a mutation whose fence no longer matches: 409 STALE_FENCE. Synchronous, so a caller that runs
   * the mutation right after it (no await between) changes exactly the mob it checked.
   */
  fence(mob: MobActor, fence: Fence, identity?: string): void {
    if (fence.expected_revision !== undefined && fence.expected_revision !== mob.revision) {
      throw new ServiceError('STALE_FENCE', `mob ${mob.id} is at revision ${mob.revision}, not ${fence.expected_revision}`, {
        mob_id: mob.id,
        fence: 'revision',
        expected: fence.expected_revision,
        current: mob.revision,
      });
    }
    if (fence.expected_generation !== undefined && identity !== undefined) {
      const m = this.member(mob, identity);
      if (m.record.generation !== fence.expected_generation) {
        throw new ServiceError(
          'STALE_FENCE',
          `member ${identity} of mob ${mob.id} is at generation ${m.record.generation}, not ${fence.expected_generation}`,
          {
            mob_id: mob.id,
            agent_identity: identity,
            fence: 'generation',
            expected: fence.expected_generation,
            current: m.record.generation,
          },
        );
      }
    }
  }

  async list(): Promise<MobRecord[]> {
    const rows = await readRecords<MobRecord>(this.deps.supervisor.deps.store, MOB_RECORD);
    return rows.map((r) => r.value).map((r) => this.table.peek(r.mob_id)?.record ?? r);
  }

  private async hydrate(id: string): Promise<MobActor | undefined> {
    const raw = await readRecord<MobRecord>(this.deps.supervisor.deps.store, MOB_RECORD, id);
    if (raw === undefined) return undefined;
    const mob = new MobActor(raw, this.deps.supervisor.deps.store, () => this.deps.now(), this.deps.supervisor.deps.observer);
    for (const rec of Object.values(raw.members)) {
      const hasSession = rec.session_id !== null && (await this.deps.sessions.exists(rec.session_id));
      this.memberTable.adopt(mob.attach(rec, hasSession));
    }
    // Retired helpers still in `members` (cleanup debt, or retired before a crash) are cleaned up again.
    for (const rec of Object.values(raw.members)) {
      if (rec.helper && rec.state === 'retired')
        void Promise.resolve()
          .then(() => this.cleanupHelper(mob, rec.agent_identity))
          .catch(() => undefined);
    }
    // Routes whose install never finished before the restart are tried again.
    if (raw.state === 'running')
      this.wiring.installRoutes(
        mob,
        raw.edges.filter(([a, b]) => !isInstalled(mob.record, a, b)),
      );
    return mob;
  }

  // ---- events ---------------------------------------------------------------------------------------

  emit(mob: MobActor, kind: StructuralKind, fields: Omit<NewMobEvent, 'mob_id' | 'kind' | 'mob_labels'> = {}): Promise<unknown> {
    return this.deps.ledger.append({ mob_id: mob.id, kind, mob_labels: mob.record.labels, ...fields });
  }

  // ---- mob lifecycle --------------------------------------------------------------------------------

  async create(req: CreateMob): Promise<MobActor> {
    if (!checkDefinition.Check(req.definition)) throw bad('definition does not match MobDefinition');
    const def = req.definition;
    const ids = (def.members ?? []).map((m) => m.agent_identity);
    if (new Set(ids).size !== ids.length) throw bad('member agent identities must be unique');
    for (const f of def.flows ?? []) {
      for (const s of f.steps)
        if (!ids.includes(s.member)) throw bad(`flow ${f.flow_id} step ${s.step_id} names unknown member ${s.member}`);
    }
    if (new Set((def.flows ?? []).map((f) => f.flow_id)).size !== (def.flows ?? []).length) throw bad('flow ids must be unique');
    for (const w of def.wiring ?? [])
      if (!ids.includes(w.a) || !ids.includes(w.b) || w.a === w.b) throw bad(`wiring ${w.a}-${w.b} names unknown members`);
    const mobId = req.mob_id ?? randomUUID();
    const existing = this.table.peek(mobId) ?? (await this.deps.supervisor.deps.store.getRecord(MOB_NS, mobId));
    if (existing) throw new ServiceError('CONFLICT', `mob ${mobId} already exists`, { mob_id: mobId });
    const now = this.deps.now();
    const record: MobRecord = {
      v: 1,
      mob_id: mobId,
      state: 'running',
      labels: req.labels ?? {},
      definition: def,
      members: {},
      edges: [],
      created_at_ms: now,
      updated_at_ms: now,
    };
    const { store, observer } = this.deps.supervisor.deps;
    const mob = this.table.adopt(new MobActor(record, store, () => this.deps.now(), observer));
    await mob.persist(now);
    await this.emit(mob, 'mob_created', { data: { labels: record.labels, members: ids, flows: (def.flows ?? []).map((f) => f.flow_id) } });
    for (const spec of def.members ?? []) await this.spawn(mob, spec, false);
    mob.send({ type: 'mob.started' });
    if (def.wiring?.length) await this.wiring.wire(mob, def.wiring);
    await mob.persist(this.deps.now());
    return mob;
  }

  async destroy(mobId: string, fence: Fence = {}): Promise<MobActor> {
    const mob = await this.live(mobId);
    this.fence(mob, fence);
    mob.bump();
    mob.send({ type: 'destroy.requested' });
    await mob.persist(this.deps.now());
    await this.onDestroy(mobId);
    for (const m of mob.members.values()) {
      if (m.state === 'retired') continue;
      this.turns.stop(m);
      m.send({ type: 'member.retire' });
      mob.send({ type: 'member.left' });
    }
    mob.send({ type: 'destroy.done' });
    await mob.persist(this.deps.now());
    await this.emit(mob, 'mob_destroyed', { data: {} });
    return mob;
  }

  // ---- members --------------------------------------------------------------------------------------

  /** Adds a member and starts its kickoff (not awaited unless `wait`). */
  async spawn(
    mob: MobActor,
    spec: MemberSpec,
    wait: boolean,
    opts: { helper?: boolean; prompt?: string; injected?: ContentInput[] } = {},
  ): Promise<{ member: MemberRuntime; kickoff: Promise<TurnReply> }> {
    const prior = mob.members.get(spec.agent_identity);
    if (prior && prior.state !== 'retired')
      throw new ServiceError('CONFLICT', `member ${spec.agent_identity} already exists in mob ${mob.id}`, {
        agent_identity: spec.agent_identity,
      });
    const pruned = mob.record.retired_helpers?.find((r) => r.agent_identity === spec.agent_identity);
    if (pruned) mob.record.retired_helpers = mob.record.retired_helpers!.filter((r) => r !== pruned);
    const rec: MemberRecord = {
      agent_identity: spec.agent_identity,
      role: spec.role ?? 'member',
      state: 'spawning',
      session_id: null,
      generation: prior ? prior.record.generation + 1 : pruned ? pruned.generation + 1 : 1,
      helper: opts.helper === true,
      spec,
      kickoff: 'pending',
      spawned_at_ms: this.deps.now(),
    };
    mob.record.members[spec.agent_identity] = rec;
    mob.bump();
    const m = mob.attach(rec, 'fresh');
    this.memberTable.adopt(m);
    mob.send({ type: 'member.joined' });
    const kickoff = this.turns.kickoff(mob, m, opts.prompt, opts.injected);
    await mob.persist(this.deps.now());
    await this.emit(mob, opts.helper ? (opts.injected ? 'helper_forked' : 'helper_spawned') : 'member_spawned', {
      agent_identity: spec.agent_identity,
      data: { role: rec.role, session_id: rec.session_id, generation: rec.generation },
    });
    if (wait) await kickoff.catch(() => undefined);
    return { member: m, kickoff };
  }

  async cancel(mob: MobActor, identity: string): Promise<void> {
    const m = this.member(mob, identity);
    if (m.state === 'retired') throw bad(`member ${identity} is retired`);
    this.turns.stop(m);
    if (m.send({ type: 'member.cancel' })) {
      mob.bump();
      await mob.persist(this.deps.now());
      await this.emit(mob, 'member_cancelled', { agent_identity: identity, data: { session_id: m.record.session_id } });
    }
  }

  /**
   * Retires a member: its mob work stops (and its session's turn is interrupted unless `interrupt` is
   * false: a helper whose result is captured leaves other callers' turns alone), it is unwired and its
   * peers told. `emit: false` leaves the retirement event to the caller (a helper's, after its cleanup).
   */
  async retire(mob: MobActor, identity: string, opts: { interrupt?: boolean; emit?: boolean } = {}): Promise<void> {
    const m = this.member(mob, identity);
    if (m.state === 'retired') return;
    this.turns.stop(m, opts.interrupt !== false);
    m.send({ type: 'member.retire' });
    mob.send({ type: 'member.left' });
    mob.bump();
    uninstallAll(mob.record, identity);
    const peers = unwireAll(mob.record, identity);
    await mob.persist(this.deps.now());
    for (const p of peers) await this.wiring.notify(mob, p, identity, 'mob.peer_retired');
    if (opts.emit !== false)
      await this.emit(mob, m.record.helper ? 'helper_retired' : 'member_retired', {
        agent_identity: identity,
        data: { session_id: m.record.session_id, unwired: peers },
      });
  }

  /**
   * A retired helper's cleanup: its session is archived, then the helper leaves `members` for the bounded
   * `retired_helpers` index and `helper_retired` is emitted. When work another caller started is on its
   * session, the session is left open: the debt is recorded on the member (`cleanup_debt`), returned,
   * and paid once that session is idle (or at the next start). Answers the debt, or undefined.
   */
  async cleanupHelper(mob: MobActor, identity: string): Promise<string | undefined> {
    const m = mob.members.get(identity);
    if (!m || !m.record.helper || m.state !== 'retired' || this.closing) return undefined;
    const sid = m.record.session_id;
    const closed = sid ? await this.deps.sessions.close(sid) : { closed: true as const };
    if (!closed.closed) {
      m.record.cleanup_debt = closed.reason;
      await mob.persist(this.deps.now());
      if (!m.cleanupScheduled && sid) {
        m.cleanupScheduled = true;
        void this.deps.sessions
          .whenIdle(sid)
          .then(async () => {
            m.cleanupScheduled = false;
            if (this.closing) return;
            const live = await this.get(mob.id);
            await this.cleanupHelper(live, identity);
          })
          .catch(() => undefined);
      }
      return closed.reason;
    }
    if (mob.members.get(identity) !== m) return undefined; // cleaned up meanwhile
    const paid = m.record.cleanup_debt !== undefined;
    delete mob.record.members[identity];
    mob.members.delete(identity);
    this.memberTable.forget(m.id);
    m.machine.stop();
    const index = (mob.record.retired_helpers ?? []).filter((r) => r.agent_identity !== identity);
    index.push({
      agent_identity: identity,
      session_id: sid,
      generation: m.record.generation,
      role: m.record.role,
      retired_at_ms: this.deps.now(),
      kickoff: m.record.kickoff,
    });
    mob.record.retired_helpers = index.slice(-RETIRED_HELPERS_KEPT);
    mob.bump();
    await mob.persist(this.deps.now());
    await this.emit(mob, 'helper_retired', {
      agent_identity: identity,
      data: { session_id: sid, archived: true, ...(paid ? { cleanup_debt_paid: true } : {}) },
    });
    return undefined;
  }

  /** A member's record, or the entry of a retired helper pruned from `members` (status and history). */
  memberRecord(mob: MobActor, identity: string): MemberRecord {
    const live = mob.members.get(identity);
    if (live) return live.record;
    const r = mob.record.retired_helpers?.find((x) => x.agent_identity === identity);
    if (!r) return this.member(mob, identity).record; // throws: no such member
    return {
      agent_identity: r.agent_identity,
      role: r.role,
      state: 'retired',
      session_id: r.session_id,
      generation: r.generation,
      helper: true,
      spec: { agent_identity: r.agent_identity },
      kickoff: r.kickoff ?? 'completed',
      spawned_at_ms: r.retired_at_ms,
    };
  }

  /** Respawn: a fresh session (generation + 1), its kickoff awaited, then its wiring restored. */
  async respawn(
    mob: MobActor,
    identity: string,
    initialMessage?: string,
  ): Promise<{ status: 'completed' | 'topology_restore_failed'; receipt: Record<string, unknown>; failed_peer_ids?: string[] }> {
    const m = this.member(mob, identity);
    const previous = m.record.session_id;
    mob.bump();
    // Its session changes: its routes are outstanding until its peers are told again.
    uninstallAll(mob.record, identity);
    this.turns.stop(m);
    await m.lane;
    if (!m.send({ type: 'member.respawn' })) throw bad(`member ${identity} cannot be respawned while ${m.state}`, { state: m.state });
    const kickoff = this.turns.kickoff(mob, m, initialMessage);
    await mob.persist(this.deps.now());
    await kickoff;
    const failed: string[] = [];
    for (const peer of peersOf(mob.record, identity)) {
      if (!(await this.wiring.notifyPair(mob, identity, peer, 'mob.peer_added'))) failed.push(peer);
      else setInstalled(mob.record, identity, peer, true);
    }
    await mob.persist(this.deps.now());
    const receipt = {
      agent_identity: identity,
      generation: m.record.generation,
      session_id: m.record.session_id,
      previous_session_id: previous,
    };
    await this.emit(mob, 'member_respawned', { agent_identity: identity, data: { ...receipt, failed_peer_ids: failed } });
    return failed.length ? { status: 'topology_restore_failed', receipt, failed_peer_ids: failed } : { status: 'completed', receipt };
  }
}
