// bench/build-server.ts: the benchmarks measure what `npm start` runs: compiled JavaScript, not the sources
// through tsx. tsx transpiles with esbuild's keepNames, which wraps every named function and arrow in a
// call that defines its `name` property each time the closure is created: a property array per closure
// (about 200 bytes) and a defineProperty call, on every turn's many closures. The production build
// (scripts/build.mjs) does not keep names, so neither does this one. Built once per bench process into
// `<repo>/.bench-build-<pid>/` (one folder below the package root, where the bundle finds README.md, ui/
// and skills/, as dist/ does), with the production build's options; removed at exit.
// WARREN_BENCH_FROM_SOURCE=1 runs the sources through tsx instead (bench/compare.ts sets it unless
// --built: a base checkout older than this file always runs from source, and both sides must run alike).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type BuildOptions } from 'esbuild';

const REPO = fileURLToPath(new URL('..', import.meta.url));

let built: Promise<string> | undefined;

/** True when the bench servers run from source (WARREN_BENCH_FROM_SOURCE=1). */
export function fromSource(): boolean {
  return process.env.WARREN_BENCH_FROM_SOURCE === '1';
}

/** The compiled entry of bench/server.ts or bench/floor-server.ts (built on first use). */
export async function builtEntry(name: 'server' | 'floor-server'): Promise<string> {
  built ??= buildOnce();
  return join(await built, `${name}.js`);
}

async function buildOnce(): Promise<string> {
  const outdir = join(REPO, `.bench-build-${process.pid}`);
  process.once('exit', () => rmSync(outdir, { recursive: true, force: true }));
  // The production build's options (externals, minified, undici's deferred brand check): what npm start runs.
  const { PRODUCTION_OPTIONS } = (await import(join(REPO, 'scripts', 'bundle-externals.mjs'))) as { PRODUCTION_OPTIONS: BuildOptions };
  await build({
    ...PRODUCTION_OPTIONS,
    absWorkingDir: REPO,
    entryPoints: { server: 'bench/server.ts', 'floor-server': 'bench/floor-server.ts', 'sqlite-writer': 'storage/sqlite-writer.ts' },
    outdir,
  });
  return outdir;
}
