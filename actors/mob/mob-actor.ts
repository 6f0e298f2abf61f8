// actors/mob/mob-actor.ts: one live mob: its stored record (namespace `mob`), its XState machine
// (machines/mob-machine.ts) and one live member per agent identity, each with its own member machine
// (machines/mob-member-machine.ts) and a lane that runs the member's dispatched turns one at a time.
// The record is persisted after every change, in change order; machines are restored from it at rest.
import { createActor, type Actor } from 'xstate';
import { mobMachine, type MobEvent as MobMachineEvent, type MobStateValue } from '../../machines/mob-machine.ts';
import { memberMachine, restoreMemberValue, type MemberEvent, type MemberStateValue } from '../../machines/mob-member-machine.ts';
import type { MemberRecord, MobRecord } from '../../contracts/mob.ts';
import type { Store } from '../../storage/store.ts';
import type { RuntimeObserver } from '../runtime-observer.ts';
import type { ActorFacts } from '../actor-registry.ts';
import { StateClock } from '../state-clock.ts';

export const MOB_KIND = 'mob';
export const MEMBER_KIND = 'mob_member';
export const MOB_NS = 'mob';

export class MemberRuntime {
  readonly id: string;
  lastUsedMs: number;
  readonly machine: Actor<typeof memberMachine>;
  /** Dispatched turns run one after another on this chain. */
  lane: Promise<unknown> = Promise.resolve();
  /** Aborts the member's turn in flight (cancel, retire, respawn, destroy). */
  abort: AbortController = new AbortController();
  /** Settles when the current kickoff settles. */
  kickoff: Promise<void> = Promise.resolve();
  /** A retired helper's cleanup retry is waiting for its session to go idle. */
  cleanupScheduled = false;
  /** When the member entered its current state (the viewer's time in state). */
  private readonly clock: StateClock;

  constructor(
    readonly mobId: string,
    readonly record: MemberRecord,
    hasSession: boolean | 'fresh',
    private readonly now: () => number,
    observer: RuntimeObserver | undefined,
    /** When the member's stored state was last written (a restored member has been in it at least since). */
    storedAtMs?: number,
  ) {
    this.id = `${mobId}/${record.agent_identity}`;
    this.lastUsedMs = now();
    const value = hasSession === 'fresh' ? record.state : restoreMemberValue(record.state, hasSession);
    const snapshot = memberMachine.resolveState({
      value,
      context: { agentIdentity: record.agent_identity, generation: record.generation, turns: 0, failures: 0, lastDecision: null },
    });
    this.machine = createActor(memberMachine, { snapshot, input: { agentIdentity: record.agent_identity, generation: record.generation } });
    this.clock = new StateClock(value, hasSession === 'fresh' ? this.lastUsedMs : Math.min(storedAtMs ?? this.lastUsedMs, this.lastUsedMs));
    observer?.machineCreated?.(MEMBER_KIND, this.id, this.machine);
    this.machine.start();
    this.sync();
  }

  get state(): MemberStateValue {
    return this.machine.getSnapshot().value as MemberStateValue;
  }

  /** What the viewer lists (actors/actor-registry.ts ActorFacts): state, time in it, mob and session. */
  facts(): ActorFacts {
    const { agent_identity, session_id } = this.record;
    const state = this.state;
    return {
      state,
      labels: { mob_id: this.mobId, agent_identity, ...(session_id ? { session_id } : {}) },
      sinceMs: this.clock.sinceMs(state, this.now()),
    };
  }

  /** Sends an event; true when the machine accepted it. The record follows the machine. */
  send(event: MemberEvent): boolean {
    this.machine.send(event);
    this.clock.note(this.state, this.now());
    const decision = this.machine.getSnapshot().context.lastDecision;
    this.sync();
    return decision?.verdict === 'accepted';
  }

  private sync(): void {
    const snap = this.machine.getSnapshot();
    // A kickoff interrupted by a restart: its session exists (active) or never did (failed).
    if (this.record.kickoff === 'pending' && snap.value !== 'spawning')
      this.record.kickoff = snap.value === 'failed' ? 'failed' : 'completed';
    this.record.state = snap.value as MemberStateValue;
    this.record.generation = snap.context.generation;
  }
}

export class MobActor {
  lastUsedMs: number;
  readonly machine: Actor<typeof mobMachine>;
  readonly members = new Map<string, MemberRuntime>();
  private writes: Promise<void> = Promise.resolve();
  /** Dispatched turns or helpers in flight (a busy mob is never evicted). */
  inFlight = 0;
  /** Wiring notices still being delivered (wait-kickoff waits for them: the topology is installed). */
  readonly notices = new Set<Promise<unknown>>();
  /** When the mob entered its current state (the viewer's time in state). */
  private readonly clock: StateClock;

  constructor(
    readonly record: MobRecord,
    private readonly store: Store,
    private readonly now: () => number,
    private readonly observer: RuntimeObserver | undefined,
  ) {
    this.lastUsedMs = now();
    const live = Object.values(record.members).filter((m) => m.state !== 'retired').length;
    const value: MobStateValue = record.state === 'running' ? 'running' : record.state;
    const snapshot = mobMachine.resolveState({
      value,
      context: { mobId: record.mob_id, members: live, activeRuns: 0, lastDecision: null },
    });
    this.machine = createActor(mobMachine, { snapshot, input: { mobId: record.mob_id } });
    // A mob loaded from storage has been in its state at least since its record's last write.
    this.clock = new StateClock(value, Math.min(record.updated_at_ms, this.lastUsedMs));
    observer?.machineCreated?.(MOB_KIND, record.mob_id, this.machine);
    this.machine.start();
  }

  get id(): string {
    return this.record.mob_id;
  }

  /** The fence of membership, wiring and lifecycle (contracts/mob.ts MobRecord.revision). */
  get revision(): number {
    return this.record.revision ?? 0;
  }

  /** Moves the fence on: called synchronously with the change it fences. */
  bump(): number {
    this.record.revision = this.revision + 1;
    return this.record.revision;
  }

  get state(): MobStateValue {
    return this.machine.getSnapshot().value as MobStateValue;
  }

  /** What the viewer lists: state, labels, time in state, and the member actors listed under the mob. */
  facts(): ActorFacts {
    const state = this.state;
    const members = [...this.members.values()].map((m) => ({ kind: MEMBER_KIND, id: m.id }));
    return { state, labels: this.record.labels, sinceMs: this.clock.sinceMs(state, this.now()), members };
  }

  send(event: MobMachineEvent): boolean {
    this.machine.send(event);
    const s = this.machine.getSnapshot().value as MobStateValue;
    this.clock.note(s, this.now());
    if (s === 'running' || s === 'destroying' || s === 'destroyed') this.record.state = s;
    return this.machine.getSnapshot().context.lastDecision?.verdict === 'accepted';
  }

  /** Adds the live member of a record: 'fresh' (just spawned) or restored (whether its session exists). */
  attach(rec: MemberRecord, hasSession: boolean | 'fresh'): MemberRuntime {
    const m = new MemberRuntime(this.id, rec, hasSession, this.now, this.observer, this.record.updated_at_ms);
    this.members.set(rec.agent_identity, m);
    return m;
  }

  /** Persists the record as it is now; writes land in call order. */
  persist(now: number): Promise<void> {
    this.record.updated_at_ms = now;
    const value = structuredClone(this.record);
    const next = this.writes.then(() => this.store.commit([{ op: 'putRecord', ns: MOB_NS, key: this.id, value }]));
    this.writes = next.catch(() => undefined);
    return next;
  }

  async stop(): Promise<void> {
    await this.writes;
    for (const m of this.members.values()) m.machine.stop();
    this.machine.stop();
  }
}
