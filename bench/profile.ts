// bench/profile.ts: reads a V8 .cpuprofile (from the bench server's IPC-controlled profiler, or from
// node --cpu-prof) and ranks functions by self time and by inclusive time, and self time by module.
// bench/run.ts uses it for the hot-spot section of the report; it also runs standalone:
//   npx tsx bench/profile.ts <file.cpuprofile> [top=25]
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface HotSpot {
  fn: string;
  where: string;
  ms: number;
  pct: number;
}

export interface ProfileSummary {
  /** Sampled time, idle excluded (ms). */
  busyMs: number;
  idleMs: number;
  /** Samples under the bench's own profiler control (bench/server.ts), left out of every ranking. */
  excludedMs: number;
  topSelf: HotSpot[];
  /** Inclusive time of functions in Warren's own files. */
  topWarrenTotal: HotSpot[];
  byModule: HotSpot[];
}

const REPO_URL = new URL('..', import.meta.url).href;

/** Where a frame lives: a repo-relative file, a node_modules package, node internals, or a V8 pseudo-frame. */
function locate(cf: CallFrame): { where: string; module: string; warren: boolean } {
  const url = cf.url;
  if (!url)
    return {
      where: cf.functionName.startsWith('(') ? '' : '(native)',
      module: cf.functionName.startsWith('(') ? cf.functionName : '(native)',
      warren: false,
    };
  if (url.startsWith('node:')) return { where: url, module: 'node internals', warren: false };
  const nm = url.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 14).split('/');
    const pkg = rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
    return { where: `${pkg}/${rest.slice(rest[0].startsWith('@') ? 2 : 1).join('/')}:${cf.lineNumber + 1}`, module: pkg, warren: false };
  }
  if (url.startsWith(REPO_URL)) {
    const rel = url.slice(REPO_URL.length);
    // tsx-transformed sources report line 0 for every function: the file name is what is known.
    return { where: cf.lineNumber > 0 ? `${rel}:${cf.lineNumber + 1}` : rel, module: rel, warren: !rel.startsWith('bench/') };
  }
  return { where: url, module: url, warren: false };
}

/** Summarises a profile: top `top` entries of each ranking. */
export function summarizeProfile(p: CpuProfile, top = 25): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const self = new Map<string, { fn: string; where: string; us: number }>();
  const total = new Map<string, { fn: string; where: string; us: number }>();
  const modules = new Map<string, number>();
  let idleUs = 0;
  let busyUs = 0;
  let excludedUs = 0;
  const benchControl = (id: number): boolean => {
    for (let x: number | undefined = id; x !== undefined; x = parent.get(x)) {
      if (byId.get(x)!.callFrame.url.endsWith('/bench/server.ts')) return true;
    }
    return false;
  };
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    const node = byId.get(p.samples[i]);
    if (!node) continue;
    const name = node.callFrame.functionName || '(anonymous)';
    if (name === '(idle)') {
      idleUs += dt;
      continue;
    }
    if (benchControl(node.id)) {
      excludedUs += dt;
      continue;
    }
    busyUs += dt;
    const loc = locate(node.callFrame);
    if (loc.where === '(native)') {
      // A native frame says little by itself: name the JS function that called it.
      const caller = byId.get(parent.get(node.id) ?? -1);
      if (caller) {
        const at = locate(caller.callFrame);
        loc.where = `native, called by ${caller.callFrame.functionName || '(anonymous)'} (${at.where})`;
        loc.module = `${at.module} (native)`;
      }
    }
    const key = `${name}@${loc.where}`;
    const s = self.get(key) ?? { fn: name, where: loc.where, us: 0 };
    s.us += dt;
    self.set(key, s);
    modules.set(loc.module, (modules.get(loc.module) ?? 0) + dt);
    // Inclusive time of Warren frames on this sample's stack (each function once per sample).
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const f = byId.get(id)!;
      const l = locate(f.callFrame);
      if (!l.warren) continue;
      const k = `${f.callFrame.functionName || '(anonymous)'}@${l.where}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const t = total.get(k) ?? { fn: f.callFrame.functionName || '(anonymous)', where: l.where, us: 0 };
      t.us += dt;
      total.set(k, t);
    }
  }
  const rank = (entries: Iterable<{ fn: string; where: string; us: number }>): HotSpot[] =>
    [...entries]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((e) => ({ fn: e.fn, where: e.where, ms: e.us / 1000, pct: busyUs ? (100 * e.us) / busyUs : 0 }));
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    excludedMs: excludedUs / 1000,
    topSelf: rank(self.values()),
    topWarrenTotal: rank(total.values()),
    byModule: rank([...modules].map(([m, us]) => ({ fn: m, where: '', us }))),
  };
}

export async function readProfile(path: string): Promise<CpuProfile> {
  return JSON.parse(await readFile(path, 'utf8')) as CpuProfile;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, n] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: tsx bench/profile.ts <file.cpuprofile> [top]\n');
    process.exit(2);
  }
  const s = summarizeProfile(await readProfile(file), Number(n ?? 25));
  const line = (h: HotSpot) => `${h.ms.toFixed(1).padStart(9)} ms ${h.pct.toFixed(1).padStart(5)}%  ${h.fn}  ${h.where}`;
  process.stdout.write(`busy ${s.busyMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms\n\nself time:\n${s.topSelf.map(line).join('\n')}\n`);
  process.stdout.write(`\nby module:\n${s.byModule.map(line).join('\n')}\n\nWarren inclusive:\n${s.topWarrenTotal.map(line).join('\n')}\n`);
}
