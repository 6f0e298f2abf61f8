// scripts/per-test-timeout.mjs: preloaded by scripts/test.sh (`--import`) into every test process. Node 20's
// --test-timeout bounds each test *file* as a whole, not each test, so this gives every `it`/`test` declared
// without its own `timeout` a per-test budget of WARREN_TEST_TIMEOUT_MS (default 30 s): a test that hangs fails
// on its own, named, within half a minute, while its file's other tests still run and report. Suites (`describe`)
// are not given one; a test that needs longer (a kill -9 campaign) states its own { timeout }.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const nodeTest = require('node:test');
const perTestMs = Number(process.env.WARREN_TEST_TIMEOUT_MS ?? 30_000);

function withTimeout(fn) {
  const wrapped = function (name, options, body) {
    if (typeof name === 'function' || (typeof name === 'object' && name !== null)) [name, options, body] = [undefined, name, options];
    if (typeof options === 'function') [options, body] = [undefined, options];
    const opts = { ...(options ?? {}) };
    if (opts.timeout === undefined) opts.timeout = perTestMs;
    return name === undefined ? fn.call(this, opts, body) : fn.call(this, name, opts, body);
  };
  for (const key of ['skip', 'todo', 'only']) if (typeof fn[key] === 'function') wrapped[key] = fn[key];
  return wrapped;
}

if (Number.isFinite(perTestMs) && perTestMs > 0) {
  nodeTest.it = withTimeout(nodeTest.it);
  nodeTest.test = withTimeout(nodeTest.test);
  syncBuiltinESMExports();
}

// CPU accounting (scripts/test.sh sets WARREN_TEST_CPU_DIR): at exit each test process writes the CPU time
// it used and the CPU time of the children it waited for (servers, CLIs, browsers), read from
// /proc/self/stat, and its wall time; scripts/slowest-files.mjs prints the files that cost most.
const cpuDir = process.env.WARREN_TEST_CPU_DIR;
if (cpuDir && process.env.NODE_TEST_CONTEXT && process.argv[1]) {
  const { readFileSync, writeFileSync } = await import('node:fs');
  process.once('exit', () => {
    try {
      const stat = readFileSync('/proc/self/stat', 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // After the command: state is field 3, so utime..cstime (fields 14-17) are f[11..14], in 1/100 s.
      const [utime, stime, cutime, cstime] = f.slice(11, 15).map(Number);
      const line = {
        file: process.argv[1],
        self_s: (utime + stime) / 100,
        children_s: (cutime + cstime) / 100,
        // How long the process lived, start-up included: the measured order of scripts/build-tests.mjs FIRST.
        wall_s: Math.round(process.uptime() * 10) / 10,
      };
      writeFileSync(`${cpuDir}/${process.pid}.json`, JSON.stringify(line));
    } catch {
      // not Linux, or the directory is gone: no accounting
    }
  });
}
