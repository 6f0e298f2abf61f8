// actors/work-bindings/ports.ts: how the work-bindings module reaches the two runtimes it drives, the
// mob runtime (its flow runner: startFlowRun / getFlowRun / onTerminal, and the mob host for the flow
// definition) and the WorkGraph host (items, evidence, closure). Their modules publish them here
// (`provideMobRuntime`, `provideWorkGraph`, one line each); the bindings module resolves them when it
// starts. Keyed by the runtime's Supervisor, so several servers in one process never mix.
import type { Supervisor } from '../supervisor.ts';
import type { MobRuntime } from '../mob/mob-runtime.ts';
import type { WorkGraphHost } from '../workgraph/wg-host.ts';

interface Ports {
  mobs?: MobRuntime;
  workgraph?: WorkGraphHost;
}

const ports = new WeakMap<Supervisor, Ports>();

function of(runtime: Supervisor): Ports {
  let p = ports.get(runtime);
  if (!p) ports.set(runtime, (p = {}));
  return p;
}

export function provideMobRuntime(runtime: Supervisor, mobs: MobRuntime): void {
  of(runtime).mobs = mobs;
}

export function provideWorkGraph(runtime: Supervisor, workgraph: WorkGraphHost): void {
  of(runtime).workgraph = workgraph;
}

/** The two runtimes, or undefined when a module that provides one is not composed. */
export function bindingPorts(runtime: Supervisor): { mobs: MobRuntime; workgraph: WorkGraphHost } | undefined {
  const p = ports.get(runtime);
  return p?.mobs && p.workgraph ? { mobs: p.mobs, workgraph: p.workgraph } : undefined;
}
