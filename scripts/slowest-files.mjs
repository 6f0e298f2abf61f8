// scripts/slowest-files.mjs: a node:test reporter (used by scripts/test.sh beside the spec reporter) that prints,
// once the run ends, the 10 test files that took longest: the sum of each file's top-level test durations (time
// inside its tests; a file's process start and module imports are not counted), plus the run's wall time.
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
}
