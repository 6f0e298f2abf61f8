// scripts/per-test-timeout.mjs: preloaded by scripts/test.sh (`--import`) into every test process. Node 20's
// --test-timeout bounds each test *file* as a whole, not each test, so this gives every `it`/`test` declared
// without its own `timeout` a per-test budget of WARREN_TEST_TIMEOUT_MS (default 60 s): a test that hangs fails
// on its own, named, within a minute, while its file's other tests still run and report. Suites (`describe`)
// are not given one; a test that needs longer (a kill -9 campaign) states its own { timeout }.
import { createRequire, syncBuiltinESMExports } from 'node:module';

const require = createRequire(import.meta.url);
const nodeTest = require('node:test');
const perTestMs = Number(process.env.WARREN_TEST_TIMEOUT_MS ?? 60_000);

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
