// actors/mob/flow-runner.ts: mob flows. A flow is an ordered list of steps declared in the mob's
// definition; each step is a prompt dispatched to a member (`{{input}}` becomes the previous step's
// output, or the activation's `input` for the first step). A run is a Store record (`mob.runs`, keyed
// `<mob_id>/<run_id>`) written after every step, so a restart resumes a pending or running run from the
// step after the last one that completed (a step whose turn was in flight at the crash is dispatched
// again). This is the port other subsystems drive (work execution bindings, schedules):
//   startFlowRun({ mobId, flowId, runId, activation })  idempotent by runId
//   getFlowRun(mobId, runId)                            pending | running | completed | failed | canceled
//   cancelFlowRun(mobId, runId)
//   onTerminal(listener)                                every terminal outcome, once per run
import type { FlowDef, FlowRunPort, FlowRunRecord } from '../../contracts/mob.ts';
import { ServiceError } from '../../contracts/errors.ts';
import type { Store } from '../../storage/store.ts';
import type { MobHost } from './mob-host.ts';
import { FLOW_RUN_KIND, namespaceOf, readRecord, readRecords, readValidRecords } from '../../storage/record-kinds.ts';

export const RUNS_NS = namespaceOf(FLOW_RUN_KIND);
const TERMINAL = new Set(['completed', 'failed', 'canceled']);

export interface StartFlowRun {
  mobId: string;
  flowId: string;
  runId: string;
  /** Opaque to the mob runtime; `input` (a string), when present, feeds the first step's `{{input}}`. */
  activation?: unknown;
  runLabels?: Record<string, string>;
}

export type FlowRunListener = (run: FlowRunRecord) => void;

function inputOf(activation: unknown): string {
  if (activation && typeof activation === 'object' && 'input' in activation) {
    const input = (activation as { input: unknown }).input;
    return typeof input === 'string' ? input : JSON.stringify(input);
  }
  return '';
}

export function isTerminal(status: string): boolean {
  return TERMINAL.has(status);
}

export class FlowRunner implements FlowRunPort {
  private readonly listeners = new Set<FlowRunListener>();
  private readonly live = new Map<string, { run: FlowRunRecord; abort: AbortController; done: Promise<void> }>();

  constructor(
    private readonly host: MobHost,
    private readonly store: Store,
  ) {
    host.onDestroy = (mobId) => this.cancelAll(mobId);
    host.onShutdown = () => this.shutdown();
    host.onTakenOver = (mobId) => this.recover(mobId);
    host.parkedRuns = (mobId) => this.parked.has(mobId);
  }

  private closing = false;
  /** Mobs whose runs were in progress when shutdown parked them. */
  private readonly parked = new Set<string>();

  /** Shutdown: live runs stop where they are, their records left pending or running for recover(). */
  async shutdown(): Promise<void> {
    this.closing = true;
    for (const e of this.live.values()) {
      this.parked.add(e.run.mob_id);
      e.abort.abort();
    }
    await this.settled();
  }

  /** Starts (or, for a known runId, returns) a run. 400 for an unknown flow; 409 when runId names another flow. */
  async startFlowRun(req: StartFlowRun): Promise<FlowRunRecord> {
    const key = `${req.mobId}/${req.runId}`;
    const known = this.live.get(key)?.run ?? (await this.read(key));
    if (known) {
      if (known.flow_id !== req.flowId)
        throw new ServiceError('CONFLICT', `run ${req.runId} belongs to flow ${known.flow_id}`, {
          run_id: req.runId,
          flow_id: known.flow_id,
        });
      return known;
    }
    const mob = await this.host.live(req.mobId);
    const flow = this.flowOf(mob.record.definition.flows ?? [], req.flowId, req.mobId);
    const now = this.host.now();
    const run: FlowRunRecord = {
      v: 1,
      mob_id: req.mobId,
      flow_id: flow.flow_id,
      run_id: req.runId,
      status: 'pending',
      activation: req.activation ?? null,
      run_labels: req.runLabels ?? {},
      next_step: 0,
      outputs: [],
      created_at_ms: now,
      updated_at_ms: now,
    };
    await this.save(run);
    await this.host.emit(mob, 'flow_started', {
      run_id: run.run_id,
      run_labels: run.run_labels,
      data: { flow_id: flow.flow_id, steps: flow.steps.length },
    });
    this.launch(run, flow);
    return run;
  }

  async getFlowRun(mobId: string, runId: string): Promise<FlowRunRecord | undefined> {
    const key = `${mobId}/${runId}`;
    return this.live.get(key)?.run ?? this.read(key);
  }

  async listRuns(mobId: string): Promise<FlowRunRecord[]> {
    const rows = await readRecords<FlowRunRecord>(this.store, FLOW_RUN_KIND);
    return rows
      .map((r) => r.value)
      .filter((v) => v.mob_id === mobId)
      .map((r) => this.live.get(`${mobId}/${r.run_id}`)?.run ?? r);
  }

  async cancelFlowRun(mobId: string, runId: string): Promise<FlowRunRecord | undefined> {
    const entry = this.live.get(`${mobId}/${runId}`);
    if (!entry) return this.getFlowRun(mobId, runId);
    entry.abort.abort();
    await entry.done;
    return entry.run;
  }

  onTerminal(listener: FlowRunListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when no run is in progress (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.live.size > 0) await Promise.all([...this.live.values()].map((e) => e.done));
  }

  /**
   * Resumes every run that was pending or running when the process stopped (or, given `mobId`, that mob's
   * runs, once this node took the mob over from a cluster node that died).
   */
  async recover(mobId?: string): Promise<void> {
    // A corrupt run is logged as refused and left out: it must not stop the others' recovery.
    for (const { value } of await readValidRecords<FlowRunRecord>(this.store, FLOW_RUN_KIND)) {
      if (isTerminal(value.status)) continue;
      if ((mobId !== undefined && value.mob_id !== mobId) || this.live.has(`${value.mob_id}/${value.run_id}`)) continue;
      try {
        const mob = await this.host.live(value.mob_id);
        // A recovery of the whole realm and one of a taken-over mob may overlap: a run launches once.
        if (this.live.has(`${value.mob_id}/${value.run_id}`)) continue;
        this.launch(value, this.flowOf(mob.record.definition.flows ?? [], value.flow_id, value.mob_id));
      } catch (err) {
        // The mob is hosted by another node of the cluster (its lease is live there): the run is that node's.
        if (err instanceof ServiceError && err.code === 'SERVICE_UNAVAILABLE') continue;
        await this.finish(value, 'failed', undefined, `not resumable: ${(err as Error).message}`);
      }
    }
  }

  private flowOf(flows: readonly FlowDef[], flowId: string, mobId: string): FlowDef {
    const flow = flows.find((f) => f.flow_id === flowId);
    if (!flow) throw new ServiceError('BAD_REQUEST', `mob ${mobId} has no flow ${flowId}`, { mob_id: mobId, flow_id: flowId });
    return flow;
  }

  private launch(run: FlowRunRecord, flow: FlowDef): void {
    const abort = new AbortController();
    const key = `${run.mob_id}/${run.run_id}`;
    const done = this.execute(run, flow, abort.signal)
      .catch(() => undefined)
      .finally(() => this.live.delete(key));
    this.live.set(key, { run, abort, done });
  }

  private async execute(run: FlowRunRecord, flow: FlowDef, signal: AbortSignal): Promise<void> {
    const mob = await this.host.get(run.mob_id);
    mob.send({ type: 'flow.started' });
    try {
      run.status = 'running';
      await this.save(run);
      let input = run.outputs.at(-1)?.output ?? inputOf(run.activation);
      for (let i = run.next_step; i < flow.steps.length; i++) {
        if (signal.aborted) return this.closing ? undefined : await this.finish(run, 'canceled');
        const step = flow.steps[i];
        const ids = { run_id: run.run_id, step_id: step.step_id, agent_identity: step.member, run_labels: run.run_labels };
        await this.host.emit(mob, 'step_dispatched', { ...ids, data: { index: i, flow_id: flow.flow_id } });
        const prompt = step.prompt.includes('{{input}}')
          ? step.prompt.split('{{input}}').join(input)
          : input
            ? `${step.prompt}\n\n${input}`
            : step.prompt;
        let output: string;
        try {
          const reply = await Promise.race([
            this.host.turns.dispatch(mob, step.member, prompt, { runId: run.run_id, stepId: step.step_id, signal }),
            new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('canceled')), { once: true })),
          ]);
          output = reply.text;
        } catch (err) {
          if (signal.aborted) return this.closing ? undefined : await this.finish(run, 'canceled');
          const message = err instanceof Error ? err.message : String(err);
          await this.host.emit(mob, 'step_failed', { ...ids, data: { error: message } });
          await this.host.emit(mob, 'supervisor_escalation', { ...ids, data: { reason: 'step_failed', error: message } });
          return await this.finish(run, 'failed', undefined, message);
        }
        run.outputs.push({ step_id: step.step_id, agent_identity: step.member, output });
        run.next_step = i + 1;
        await this.save(run);
        await this.host.emit(mob, 'step_completed', { ...ids, data: { index: i, output_bytes: Buffer.byteLength(output) } });
        input = output;
      }
      await this.finish(run, 'completed', input);
    } finally {
      mob.send({ type: 'flow.ended' });
    }
  }

  private async finish(run: FlowRunRecord, status: 'completed' | 'failed' | 'canceled', output?: string, error?: string): Promise<void> {
    run.status = status;
    if (output !== undefined) run.output = output;
    if (error !== undefined) run.error = error;
    await this.save(run);
    const mob = await this.host.get(run.mob_id);
    const kind = status === 'completed' ? 'flow_completed' : status === 'failed' ? 'flow_failed' : 'flow_canceled';
    await this.host.emit(mob, kind, {
      run_id: run.run_id,
      run_labels: run.run_labels,
      data: { flow_id: run.flow_id, ...(error ? { error } : {}) },
    });
    for (const l of this.listeners) {
      try {
        l(structuredClone(run));
      } catch {
        // a listener's fault is its own
      }
    }
  }

  private async cancelAll(mobId: string): Promise<void> {
    await Promise.all([...this.live.values()].filter((e) => e.run.mob_id === mobId).map((e) => this.cancelFlowRun(mobId, e.run.run_id)));
  }

  private async read(key: string): Promise<FlowRunRecord | undefined> {
    return readRecord<FlowRunRecord>(this.store, FLOW_RUN_KIND, key);
  }

  private async save(run: FlowRunRecord): Promise<void> {
    run.updated_at_ms = this.host.now();
    await this.store.commit([{ op: 'putRecord', ns: RUNS_NS, key: `${run.mob_id}/${run.run_id}`, value: structuredClone(run) }]);
  }
}
