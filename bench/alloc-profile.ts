// bench/alloc-profile.ts: reads a sampled allocation profile (.heapprofile, written by bench/server.ts with
// WARREN_BENCH_ALLOC_PROFILE=1 beside its .cpuprofile; garbage included) and prints the bytes allocated by
// each function (self), by module, and by Warren function inclusive of its callees.
//   npx tsx bench/alloc-profile.ts <file.heapprofile> [top]
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';

interface Node {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: Node[];
}

const [file, topArg] = process.argv.slice(2);
if (!file) {
  process.stderr.write('usage: npx tsx bench/alloc-profile.ts <file.heapprofile> [top]\n');
  process.exit(1);
}
const top = Number(topArg ?? 30);
const root = (JSON.parse(readFileSync(file, 'utf8')) as { head: Node }).head;
const repo = fileURLToPath(new URL('..', import.meta.url));

const where = (url: string): string => {
  if (!url) return '(native)';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = path.lastIndexOf('node_modules/');
  if (nm >= 0) return path.slice(nm + 'node_modules/'.length);
  return path.startsWith(repo) ? relative(repo, path) : path;
};
const moduleOf = (url: string): string => {
  const w = where(url);
  if (w.startsWith('node:') || w === '(native)') return 'node internals';
  if (url.includes('node_modules/')) return w.startsWith('@') ? w.split('/').slice(0, 2).join('/') : w.split('/')[0];
  return w;
};

const self = new Map<string, number>();
const byModule = new Map<string, number>();
const inclusive = new Map<string, number>();
let total = 0;
const add = (m: Map<string, number>, k: string, v: number): void => void m.set(k, (m.get(k) ?? 0) + v);

/** Returns the subtree's bytes; counts each Warren function once per stack for the inclusive figure. */
function walk(n: Node, onStack: Set<string>): number {
  const f = n.callFrame;
  const key = `${f.functionName || '(anonymous)'}  ${where(f.url)}:${f.lineNumber + 1}`;
  total += n.selfSize;
  add(self, key, n.selfSize);
  add(byModule, moduleOf(f.url), n.selfSize);
  const own = !f.url.includes('node_modules/') && where(f.url) !== f.url && f.url !== '';
  const fresh = own && !onStack.has(key);
  if (fresh) onStack.add(key);
  let sum = n.selfSize;
  for (const c of n.children) sum += walk(c, onStack);
  if (fresh) {
    onStack.delete(key);
    add(inclusive, key, sum);
  }
  return sum;
}
walk(root, new Set());

const print = (title: string, m: Map<string, number>): void => {
  process.stdout.write(`\n${title}:\n`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    process.stdout.write(`${(v / 2 ** 20).toFixed(1).padStart(9)} MiB ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}\n`);
  }
};
process.stdout.write(`sampled allocations: ${(total / 2 ** 20).toFixed(1)} MiB\n`);
print('self', self);
print('by module', byModule);
print('Warren inclusive', inclusive);
