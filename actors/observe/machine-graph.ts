// actors/observe/machine-graph.ts: serializes an XState machine's own definition (its state nodes and
// transitions) into the flat MachineGraph the actor viewer lays out with elkjs. Nothing is hand-drawn:
// a change to a machine file changes the chart.
import type { AnyStateMachine } from 'xstate';
import type { MachineGraph } from '../../contracts/routes-observe.ts';

/** The parts of an XState StateNode this module reads. */
interface NodeLike {
  id: string;
  key: string;
  type: string;
  initial?: { target?: ReadonlyArray<{ id: string }> };
  states: Record<string, NodeLike>;
  transitions: Map<string, ReadonlyArray<{ target?: ReadonlyArray<{ id: string }>; guard?: unknown; actions: readonly unknown[] }>>;
}

function nameOf(x: unknown): string {
  if (typeof x === 'string') return x;
  if (typeof x === 'function') return x.name || 'inline';
  if (x && typeof x === 'object' && 'type' in x && typeof (x as { type: unknown }).type === 'string') return (x as { type: string }).type;
  return 'inline';
}

/** The machine of `kind` as states (with parents) and transitions (with guards and actions). */
export function machineGraph(kind: string, machine: AnyStateMachine): MachineGraph {
  const graph: MachineGraph = { kind, machine_id: machine.id, states: [], transitions: [] };
  if (typeof machine.version === 'string') graph.version = machine.version;
  const walk = (node: NodeLike, parent: string | null): void => {
    const state: MachineGraph['states'][number] = { id: node.id, key: node.key, parent, type: node.type };
    const initial = node.initial?.target?.[0]?.id;
    if (initial) state.initial = initial;
    graph.states.push(state);
    for (const [event, defs] of node.transitions) {
      for (const def of defs) {
        const t: MachineGraph['transitions'][number] = {
          source: node.id,
          event,
          targets: (def.target ?? []).map((n) => n.id),
          actions: def.actions.map(nameOf),
        };
        if (def.guard !== undefined) t.guard = nameOf(def.guard);
        graph.transitions.push(t);
      }
    }
    for (const child of Object.values(node.states)) walk(child, node.id);
  };
  walk(machine.root as unknown as NodeLike, null);
  return graph;
}

/** 'idle' → 'idle'; {running: 'calling_model'} → 'running.calling_model' (first branch of parallel states). */
export function statePath(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const [key, sub] = Object.entries(value as Record<string, unknown>)[0] ?? [];
    if (key === undefined) return '';
    const rest = statePath(sub);
    return rest ? `${key}.${rest}` : key;
  }
  return '';
}
