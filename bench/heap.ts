// bench/heap.ts: what a resident session is made of. Reads two V8 heap snapshots of the bench server
// (before and after N sessions became resident) and lists the per-session growth by object kind:
// constructor name for objects, function name for closures, node type for the rest.
// bench/scenarios/memory.ts uses it; standalone: npx tsx bench/heap.ts <before> <after> <sessions>
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export interface HeapGrowth {
  kind: string;
  /** Objects of this kind added per session. */
  countPerSession: number;
  /** Self bytes added per session. */
  bytesPerSession: number;
}

async function tally(path: string): Promise<Map<string, { count: number; size: number }>> {
  const s = JSON.parse(await readFile(path, 'utf8')) as Snapshot;
  const f = s.snapshot.meta.node_fields;
  const types = s.snapshot.meta.node_types[0];
  const stride = f.length;
  const iType = f.indexOf('type');
  const iName = f.indexOf('name');
  const iSize = f.indexOf('self_size');
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < s.nodes.length; i += stride) {
    const type = types[s.nodes[i + iType]];
    const name = s.strings[s.nodes[i + iName]];
    const kind = type === 'object' ? name : type === 'closure' ? `closure ${name || '(anonymous)'}` : `(${type})`;
    const t = out.get(kind) ?? { count: 0, size: 0 };
    t.count++;
    t.size += s.nodes[i + iSize];
    out.set(kind, t);
  }
  return out;
}

/** Per-session growth between two snapshots, largest first (kinds that grew by >= 0.5 object/session or 16 B/session). */
export async function heapGrowth(
  before: string,
  after: string,
  sessions: number,
  top = 25,
): Promise<{ total: number; kinds: HeapGrowth[] }> {
  const a = await tally(before);
  const b = await tally(after);
  const kinds: HeapGrowth[] = [];
  let total = 0;
  for (const [kind, t] of b) {
    const o = a.get(kind) ?? { count: 0, size: 0 };
    const bytes = (t.size - o.size) / sessions;
    total += bytes;
    const count = (t.count - o.count) / sessions;
    if (count >= 0.5 || bytes >= 16) kinds.push({ kind, countPerSession: count, bytesPerSession: bytes });
  }
  kinds.sort((x, y) => y.bytesPerSession - x.bytesPerSession);
  return { total, kinds: kinds.slice(0, top) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [before, after, n] = process.argv.slice(2);
  if (!before || !after || !n) {
    process.stderr.write('usage: tsx bench/heap.ts <before.heapsnapshot> <after.heapsnapshot> <sessions>\n');
    process.exit(2);
  }
  const g = await heapGrowth(before, after, Number(n), 40);
  process.stdout.write(`total ${g.total.toFixed(0)} B/session\n`);
  for (const k of g.kinds)
    process.stdout.write(`${k.bytesPerSession.toFixed(0).padStart(7)} B ${k.countPerSession.toFixed(2).padStart(7)} ×  ${k.kind}\n`);
}
