// test/helpers/child-entry.ts: how a test starts one of the repo's programs (main.ts, a helper server) as a
// child process. Under `npm test` the suite is compiled once (scripts/build-tests.mjs, folder named by
// WARREN_TEST_BUILD) and the child runs its compiled entry on plain node; run directly through tsx, it runs
// the .ts source through tsx as before.
import { existsSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** Where the test build holds the compiled form of the source file `abs`, when a build is in use. */
function compiledPath(abs: string): string | undefined {
  const build = process.env.WARREN_TEST_BUILD;
  return build && abs.endsWith('.ts') ? join(REPO, build, relative(REPO, abs).replace(/\.ts$/, '.js')) : undefined;
}

/** Node arguments that run `source` (absolute, or relative to the repo root): the script comes last. */
export function nodeEntry(source: string): string[] {
  const abs = isAbsolute(source) ? source : join(REPO, source);
  const compiled = compiledPath(abs);
  if (compiled && existsSync(compiled)) return ['--enable-source-maps', compiled];
  // An absolute loader URL: some children (MCP stdio servers) run in another working directory.
  return ['--import', import.meta.resolve('tsx'), abs];
}

/** True in the process that was started to run `moduleUrl` (its source or its compiled entry). */
export function isEntry(moduleUrl: string): boolean {
  const argv1 = process.argv[1];
  if (!argv1) return false;
  const source = fileURLToPath(moduleUrl);
  return argv1 === source || argv1 === compiledPath(source);
}
