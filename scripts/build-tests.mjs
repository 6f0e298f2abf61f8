#!/usr/bin/env node
// scripts/build-tests.mjs: compiles the test suite once per run (`npm test` calls it through scripts/test.sh).
// Loading the app through tsx costs every test process about two CPU-seconds more than loading compiled
// JavaScript, and the suite starts a few hundred processes (a file each, plus the servers, CLIs and MCP
// servers the tests spawn). esbuild bundles each test file and each child entry into .test-build/ at the
// same relative path (.ts → .js), every npm package left external and shared code in chunks.
//
// Each source file keeps its own location: `import.meta.url` in it is replaced by the URL of the .ts file it
// came from, so fixtures, the repo root and sibling scripts are found exactly as under tsx. Children started
// by the tests find their compiled entry through test/helpers/child-entry.ts (WARREN_TEST_BUILD names this
// folder). Type checking stays with `npm run typecheck`; this only transpiles.
//
// Usage: node scripts/build-tests.mjs [--outdir .test-build/<name>] file.test.ts ...   (scripts/test.sh finds
// the files and passes them). Each run builds into its own folder, so two runs at once never remove each other's.
import { readFile, rm, writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { BASE_OPTIONS, externals } from './bundle-externals.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const { values, positionals } = parseArgs({
  options: { outdir: { type: 'string', default: '.test-build/default' } },
  allowPositionals: true,
});
if (!values.outdir.startsWith('.test-build/') || values.outdir.includes('..')) {
  process.stderr.write(`build-tests: --outdir must be a folder under .test-build/, got ${values.outdir}\n`);
  process.exit(2);
}
const outdir = join(root, values.outdir);

/** Programs the tests start as child processes (test/helpers/child-entry.ts maps them to their build). */
const CHILD_ENTRIES = [
  'main.ts',
  'test/helpers/clock-server.ts',
  'test/helpers/bindings-server.ts',
  'test/helpers/store-child.ts',
  'test/helpers/mcp-stdio-server.ts',
];

/**
 * Worker threads the app starts from a file beside its own module: the module's import.meta.url is the URL
 * of its build (not of its source), so that the thread runs the compiled entry built here (listed among the
 * entries) instead of registering tsx and compiling the TypeScript again (about 2.8 CPU-seconds in every
 * process that opens a sqlite store). Module → the entry its thread loads.
 */
const THREAD_ENTRIES = { 'storage/sqlite-writer-client.ts': 'storage/sqlite-writer.ts' };

/** Gives every source file its own import.meta.url (a bundle would otherwise give them all the bundle's). */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
      const source = relative(root, args.path);
      const at = source in THREAD_ENTRIES ? join(outdir, source.replace(/\.ts$/, '.js')) : args.path;
      const url = JSON.stringify(pathToFileURL(at).href);
      return { contents: text.replaceAll('import.meta.url', url), loader: 'ts' };
    });
  },
};

const started = performance.now();
const tests = positionals.map((f) => relative(root, join(process.cwd(), f)));
if (!tests.length) {
  process.stderr.write('build-tests: name the test files to build (scripts/test.sh lists them)\n');
  process.exit(2);
}
await rm(outdir, { recursive: true, force: true });
const entries = [...new Set([...tests, ...CHILD_ENTRIES, ...Object.values(THREAD_ENTRIES)])];
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(entries.map((f) => [f.replace(/\.ts$/, ''), f])),
  ...BASE_OPTIONS,
  outdir,
  chunkNames: '_chunks/[name]-[hash]',
  sourcesContent: false,
  plugins: [externals, ownUrl],
});

/**
 * Test files share processes: a process costs about a CPU-second to start and import the app, more than many
 * files' tests take. The files of each unit-test folder run in one process (`test/<dir>/_shared-process`);
 * integration files run three to a process, in the order given (`test/integration/<first>+2`), except the
 * long ones (FIRST), which keep their own. Files sharing a process run one after another; none of them sets
 * environment variables or process handlers, and module state a test changes (SSE defaults) it restores.
 * The processes' PostgreSQL users share that process's one server (test/helpers/postgres.ts).
 */
const OWN_PROCESS = new Set([
  // sets UWS_USE_FALLBACK before uWebSockets.js is first loaded: it must be the first to load it
  'test/http/create-server.test.ts',
]);
const PER_INTEGRATION_PROCESS = 3;

/**
 * Started first, longest first, so that no long file starts last and leaves a core idle at the end
 * (measured on a 2-core machine; a file not named here keeps its place in the given order).
 */
const FIRST = [
  'test/integration/events-backpressure.test.ts',
  'test/integration/durability-kill.test.ts',
  'test/integration/realm-cluster-sqlite.test.ts',
  'test/integration/realm-cluster-lmdb.test.ts',
  'test/integration/realm-cluster-postgres.test.ts',
  'test/integration/full-disk.test.ts',
  'test/integration/schedules-kill.test.ts',
  'test/integration/work-bindings-kill.test.ts',
  'test/integration/viewer-browser.test.ts',
  'test/integration/cluster-mobs.test.ts',
  'test/integration/client-package.test.ts',
];

const js = (f) => join(values.outdir, f.replace(/\.ts$/, '.js'));
/** Group name → its files; a file alone in its group runs as itself. */
const groups = new Map();
const own = [];
let integration = [];
const flush = () => {
  if (integration.length) groups.set(`${integration[0].replace(/\.test\.ts$/, '')}+${integration.length - 1}`, integration);
  integration = [];
};
for (const f of tests) {
  if (OWN_PROCESS.has(f) || FIRST.includes(f) || !f.startsWith('test/')) own.push(f);
  else if (!f.startsWith('test/integration/')) {
    const name = `${dirname(f)}/_shared-process`;
    groups.set(name, [...(groups.get(name) ?? []), f]);
  } else {
    integration.push(f);
    if (integration.length === PER_INTEGRATION_PROCESS) flush();
  }
}
flush();
const runList = [];
for (const [name, files] of groups) {
  if (files.length === 1) {
    own.push(files[0]);
    continue;
  }
  const entry = join(values.outdir, `${name}.js`);
  const lines = files.map((f) => `import './${basename(f).replace(/\.ts$/, '.js')}';`);
  await writeFile(join(root, entry), `// Test files sharing one process (scripts/build-tests.mjs).\n${lines.join('\n')}\n`);
  runList.push(entry);
}
runList.push(...own.map(js));
const rank = (f) => {
  const i = FIRST.findIndex((name) => f.endsWith(name.replace(/\.ts$/, '.js')));
  return i < 0 ? FIRST.length : i;
};
runList.sort((a, b) => rank(a) - rank(b));
// The files to run, one per line, in order (scripts/test.sh reads it).
await writeFile(join(outdir, 'run-list.txt'), runList.join('\n') + '\n');
process.stderr.write(
  `test build: ${entries.length} entries in ${Math.round(performance.now() - started)} ms; ${runList.length} test processes\n`,
);
