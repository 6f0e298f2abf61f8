// actors/work-bindings/binding-host.ts: the work execution bindings of one Warren process. Registers
// the `work_binding` actor kind (records in `work.bindings`, validated on read; each item's append-only
// retry chain in `work.binding_chains`; idempotency keys in `work.binding_keys`), launches bindings in
// the SPEC's order, watches their runs (FlowRunner.onTerminal) and applies the crash-recovery rules when
// a binding is hydrated after a restart. Commands run in the binding's mailbox (serialized).
//
// Launch order: binding commit → delivery begin → deterministic pending-run persistence → realization
// claim → run start (FlowRunner.startFlowRun, idempotent by the run id derived from the binding id).
// Recovery: begun without its run stays begun, uncertain (only `abandon` ends it); realizing without
// its run is quarantined; with the run present both reattach as running.
// Run-lost rule: a completed run's evidence is written only by the process that saw the run complete
// (onTerminal). A binding that finds its run already completed when it recovers (the completion was
// seen by no process that could commit its evidence) checks the item: the identical evidence present →
// it goes on to closure; otherwise → run_lost, never a closure. Failed and canceled runs found at
// recovery still write their evidence (they never close anything).
import { ServiceError } from '../../contracts/errors.ts';
import type { FlowRunRecord } from '../../contracts/mob.ts';
import type { PublicBinding, WorkBindingRecord } from '../../contracts/work-binding.ts';
import { workBindingMachine, type BindingEvent } from '../../machines/work-binding-machine.ts';
import type { KindTable } from '../actor-registry.ts';
import type { Supervisor } from '../supervisor.ts';
import { isTerminal as isRunTerminal } from '../mob/flow-runner.ts';
import { BINDING_KIND, BindingActor, bindingIdOfRun, publicView } from './binding-actor.ts';
import { evidenceFor, evidenceState, noteExecution, projectEvidence, requestClosure } from './binding-projection.ts';
import { launchBinding, type LaunchDeps } from './binding-launch.ts';
import type { bindingPorts } from './ports.ts';
import type { AbandonArgs, BindingListArgs, FlowLaunchArgs } from '../../contracts/work-binding.ts';
import { readRecord, readRecords, readValidRecord, readValidRecords, WORK_BINDING_KIND } from '../../storage/record-kinds.ts';

type Ports = NonNullable<ReturnType<typeof bindingPorts>>;

/**
 * Test-only fault hook phases (WARREN_TEST_BINDING_HALT_AT): the actor stops for good right after committing
 * one (`evidence`: after the evidence write, before the binding records it).
 */
export type HaltPhase = 'begun' | 'realizing' | 'running' | 'projecting' | 'evidence';

export interface BindingHostDeps {
  supervisor: Supervisor;
  ports: Ports;
  now(): number;
  /** Test-only: read once at start from WARREN_TEST_BINDING_HALT_AT. */
  haltAt?: HaltPhase;
}

export class BindingHost {
  readonly table: KindTable<BindingActor>;
  /** Runs whose terminal outcome this process observed live (their evidence is this process's to write). */
  private readonly observedLive = new Set<string>();
  private launches: Promise<unknown> = Promise.resolve();

  constructor(private readonly deps: BindingHostDeps) {
    const { registry } = deps.supervisor;
    this.table = registry.register<BindingActor>({
      kind: BINDING_KIND,
      machine: workBindingMachine,
      serialized: true,
      policy: { idleEvictMs: 10 * 60_000, maxResident: 10_000 },
      hydrate: (id) => this.hydrate(id),
      notFound: (id) => new ServiceError('NOT_FOUND', `work binding not found: ${id}`, { binding_id: id }),
      // Taken over from a cluster node that died: the recovery rules run here, as after a restart.
      takenOver: async (id) => {
        await this.with(id, async () => undefined);
      },
      // At shutdown on a cluster a live binding keeps its lease to expire: a survivor takes it over.
      keepLease: (a) => !a.terminal,
      busy: (a) => a.working > 0 || ['launch', 'realizing', 'running', 'projecting', 'closing'].includes(a.phase),
      stop: async () => {},
      describe: (a) => ({
        state: a.phase,
        sinceMs: a.phaseSinceMs(this.now()),
        labels: { item_id: a.record.work_ref.item_id, namespace: a.record.work_ref.namespace, mob_id: a.record.target.mob_id },
      }),
    });
    deps.ports.mobs.flows.onTerminal((run) => this.onRunTerminal(run));
  }

  get store() {
    return this.deps.supervisor.deps.store;
  }

  get log() {
    return this.deps.supervisor.deps.log;
  }

  get ports(): Ports {
    return this.deps.ports;
  }

  now(): number {
    return this.deps.now();
  }

  private async hydrate(id: string): Promise<BindingActor | undefined> {
    const raw = await readRecord<WorkBindingRecord>(this.store, WORK_BINDING_KIND, id);
    if (raw === undefined) return undefined;
    return new BindingActor(raw, this.store, this.now(), false);
  }

  /**
   * Runs `fn` in the binding's mailbox, after the recovery rules ran for it. On a cluster a binding that is
   * terminal afterwards leaves this node at once (its lease released), so a retry launched on any node can
   * supersede it.
   */
  async with<T>(id: string, fn: (a: BindingActor) => Promise<T>): Promise<T> {
    return this.table.deliver(id, async (a) => {
      a.working++;
      try {
        a.lastUsedMs = this.now();
        if (!a.recovered) {
          a.recovered = true;
          await this.recover(a);
        }
        return await fn(a);
      } finally {
        a.working--;
        if (a.working === 0 && a.terminal && this.clustered) this.table.forget(id);
      }
    });
  }

  private get clustered(): boolean {
    return this.deps.supervisor.registry.ownership !== null;
  }

  /** On a cluster: gives up the lease of a binding this node wrote without hosting it (a superseded head). */
  async leave(id: string): Promise<void> {
    if (!this.table.peek(id)) await this.deps.supervisor.registry.ownership?.release(BINDING_KIND, id);
  }

  /** Recovers every non-terminal binding (at start, after the mob runtime resumed its runs). */
  async recoverAll(): Promise<void> {
    // A corrupt binding is logged as refused and left alone: it must not stop the others' recovery.
    for (const { key, value } of await readValidRecords<WorkBindingRecord>(this.store, WORK_BINDING_KIND)) {
      if (publicView(value).terminal) continue;
      await this.with(key, async () => undefined).catch((err: unknown) => {
        // Hosted by another live cluster node: its recovery is that node's.
        if (err instanceof ServiceError && err.code === 'SERVICE_UNAVAILABLE') return;
        this.log.error({ err, binding_id: key }, 'work binding recovery failed');
      });
    }
  }

  // ---- commands -------------------------------------------------------------------------------------

  /**
   * Launches (or replays) a binding. Launches run one at a time in this process; across processes sharing
   * the realm the binding commit itself checks the idempotency key, the chain head and the item's namespace
   * head it read (binding-launch.ts), so two nodes never both extend one chain (a launch is a handful of
   * commits; the run itself goes on after it returns).
   */
  async launch(args: FlowLaunchArgs): Promise<PublicBinding> {
    const run = this.launches.catch(() => undefined).then(() => launchBinding(this.launchDeps(), args));
    this.launches = run;
    return run;
  }

  private launchDeps(): LaunchDeps {
    return { host: this, ports: this.deps.ports, store: this.store, now: () => this.now(), realmId: this.deps.ports.workgraph.realmId };
  }

  /** Commits one transition (refusal: 409), records it on the item, and honours the test-only halt hook. */
  async advance(a: BindingActor, event: BindingEvent, haltAfter?: HaltPhase): Promise<void> {
    await a.must(event, this.now());
    await noteExecution(this.ports.workgraph, a.record, 'execution_transitioned').catch((err: unknown) =>
      this.log.warn({ err, binding_id: a.id }, 'execution event not recorded'),
    );
    if (haltAfter !== undefined && haltAfter === this.deps.haltAt) await this.halt(a, haltAfter);
  }

  private async halt(a: BindingActor, phase: HaltPhase): Promise<never> {
    this.log.warn({ binding_id: a.id, phase }, 'work binding halted (test-only fault hook WARREN_TEST_BINDING_HALT_AT)');
    process.send?.({ binding_halted: phase, binding_id: a.id });
    return new Promise<never>(() => {});
  }

  async get(id: string): Promise<PublicBinding> {
    const resident = this.table.peek(id);
    if (resident) return resident.view();
    // A terminal binding has no recovery rules left to run: read as stored, without hosting it here.
    // (A corrupt record is logged here and refused below, when the table hydrates it.)
    const stored = await readValidRecord<WorkBindingRecord>(this.store, WORK_BINDING_KIND, id);
    const valid = stored !== undefined;
    if (valid && publicView(stored).terminal) return publicView(stored);
    try {
      return (await this.table.get(id)).view();
    } catch (err) {
      // Hosted by another live cluster node: answered from the database, as that node last committed it.
      if (valid && err instanceof ServiceError && err.code === 'SERVICE_UNAVAILABLE') return publicView(stored);
      throw err;
    }
  }

  async list(q: BindingListArgs): Promise<PublicBinding[]> {
    const out: PublicBinding[] = [];
    for (const { value } of await readRecords<WorkBindingRecord>(this.store, WORK_BINDING_KIND)) {
      const rec = this.table.peek(value.binding_id)?.record ?? value;
      if (q.namespace !== undefined && rec.work_ref.namespace !== q.namespace) continue;
      if (q.item_id !== undefined && rec.work_ref.item_id !== q.item_id) continue;
      if (q.machine_state !== undefined && rec.machine.value !== q.machine_state) continue;
      out.push(publicView(rec));
    }
    out.sort((x, y) => x.created_at.localeCompare(y.created_at) || x.binding_id.localeCompare(y.binding_id));
    return out.slice(0, q.limit ?? 1000);
  }

  /** Re-applies the rules to a binding: a running binding whose run ended is settled; otherwise its state. */
  reconcile(id: string): Promise<PublicBinding> {
    return this.with(id, async (a) => {
      if (a.phase === 'running' || a.phase === 'projecting' || a.phase === 'closing') await this.reattach(a);
      return a.view();
    });
  }

  /** Abandons an uncertain launch: binding-revision compare-and-set, and only while the deterministic run is absent. */
  abandon(args: AbandonArgs): Promise<PublicBinding> {
    return this.with(args.binding_id, async (a) => {
      const runPresent = (await this.ports.mobs.flows.getFlowRun(a.record.target.mob_id, a.record.target.run_id)) !== undefined;
      await this.advance(a, { type: 'abandon', expectedRevision: args.expected_binding_revision, runPresent });
      return a.view();
    });
  }

  // ---- runs ending, recovery --------------------------------------------------------------------------

  private onRunTerminal(run: FlowRunRecord): void {
    const id = bindingIdOfRun(run.run_id);
    if (!id) return;
    this.observedLive.add(run.run_id);
    this.with(id, async (a) => {
      if (a.record.target.mob_id === run.mob_id) await this.reattach(a);
    }).catch((err: unknown) => {
      if (!(err instanceof ServiceError && err.code === 'NOT_FOUND')) this.log.error({ err, binding_id: id }, 'work binding settle failed');
    });
  }

  /** The recovery rules, once per hydrated actor. */
  private async recover(a: BindingActor): Promise<void> {
    if (a.terminal) return;
    const { mob_id, run_id } = a.record.target;
    if (a.phase === 'launch' || a.phase === 'begun' || a.phase === 'realizing') {
      const runPresent = (await this.ports.mobs.flows.getFlowRun(mob_id, run_id)) !== undefined;
      // Already found uncertain (this actor was evicted and hydrated again): nothing new, the revision stays.
      if (a.phase === 'begun' && a.context.uncertain && !runPresent) return;
      await this.advance(a, { type: 'recover', runPresent });
      this.log.info({ binding_id: a.id, machine_state: a.phase }, 'work binding recovered');
    }
    if (a.phase === 'running' || a.phase === 'projecting' || a.phase === 'closing') await this.reattach(a);
  }

  /** Follows a running binding's run to its end: evidence, then (completed runs only) the closure request. */
  private async reattach(a: BindingActor): Promise<void> {
    const { mob_id, run_id } = a.record.target;
    if (a.phase === 'running') {
      const run = await this.ports.mobs.flows.getFlowRun(mob_id, run_id);
      if (!run) return this.advance(a, { type: 'run.missing' });
      if (!isRunTerminal(run.status)) return; // onTerminal brings it back here
      const status = run.status as 'completed' | 'failed' | 'canceled';
      await this.advance(a, { type: 'run.ended', status, ...(run.error ? { reason: run.error } : {}) }, 'projecting');
    }
    if (a.phase === 'projecting') await this.project(a);
    if (a.phase === 'closing') {
      const closed = await requestClosure(this.ports.workgraph, a.record);
      await this.advance(a, closed.ok ? { type: 'closure.done' } : { type: 'closure.refused', reason: closed.reason });
    }
  }

  private async project(a: BindingActor): Promise<void> {
    const run = await this.ports.mobs.flows.getFlowRun(a.record.target.mob_id, a.record.target.run_id);
    if (!run || !isRunTerminal(run.status)) return this.advance(a, { type: 'evidence.missing' });
    const evidence = evidenceFor(a.record, run);
    if (run.status === 'completed' && !this.observedLive.has(run.run_id)) {
      // The run-lost rule (file header): only evidence already committed lets a completed run go on.
      const state = await evidenceState(this.ports.workgraph, a.record, evidence).catch(() => 'absent' as const);
      if (state !== 'identical') return this.advance(a, { type: 'evidence.missing' });
      a.record = { ...a.record, evidence_id: evidence.id };
      return this.advance(a, { type: 'evidence.committed' });
    }
    const wrote = await projectEvidence(this.ports.workgraph, a.record, evidence);
    if (wrote.ok && this.deps.haltAt === 'evidence') await this.halt(a, 'evidence');
    if (wrote.ok) a.record = { ...a.record, evidence_id: evidence.id };
    await this.advance(a, wrote.ok ? { type: 'evidence.committed' } : { type: 'evidence.refused', reason: wrote.reason });
  }
}
