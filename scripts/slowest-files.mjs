// scripts/slowest-files.mjs: a node:test reporter (used by scripts/test.sh beside the spec reporter) that prints,
// once the run ends, the 10 test files that took longest: the sum of each file's top-level test durations (time
// inside its tests; a file's process start and module imports are not counted), plus the run's wall time.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const started = Date.now();

export default async function* slowestFiles(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const ms = event.data.details?.duration_ms ?? 0;
      perFile.set(event.data.file, (perFile.get(event.data.file) ?? 0) + ms);
    }
  }
  const cwd = process.cwd() + '/';
  const top = [...perFile].sort((a, b) => b[1] - a[1]).slice(0, 10);
  const wall = (Date.now() - started) / 1000;
  yield `\nslowest test files (time inside their tests; ${perFile.size} files, wall ${wall.toFixed(1)} s):\n`;
  for (const [file, ms] of top) yield `${(ms / 1000).toFixed(1).padStart(8)} s  ${file.startsWith(cwd) ? file.slice(cwd.length) : file}\n`;
  yield* cpuReport(cwd);
}

/** The files whose processes (and the children they started) used most CPU, from WARREN_TEST_CPU_DIR. */
function* cpuReport(cwd) {
  const dir = process.env.WARREN_TEST_CPU_DIR;
  if (!dir) return;
  let rows;
  try {
    rows = readdirSync(dir).map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')));
  } catch {
    return;
  }
  if (!rows.length) return;
  const total = rows.reduce((sum, r) => sum + r.self_s + r.children_s, 0);
  const self = rows.reduce((sum, r) => sum + r.self_s, 0);
  yield `\nmost CPU (test process + the children it started; ${rows.length} processes, ${total.toFixed(0)} CPU-s, ${self.toFixed(0)} in the test processes):\n`;
  const top = rows.sort((a, b) => b.self_s + b.children_s - (a.self_s + a.children_s)).slice(0, 10);
  for (const r of top) {
    const name = (r.file.startsWith(cwd) ? r.file.slice(cwd.length) : r.file).replace(/^\.test-build\/[^/]+\/(.*)\.js$/, '$1.ts');
    const wall = r.wall_s === undefined ? '' : `, wall ${r.wall_s.toFixed(1)} s`;
    yield `${(r.self_s + r.children_s).toFixed(1).padStart(8)} s  ${name} (children ${r.children_s.toFixed(1)} s${wall})\n`;
  }
}
