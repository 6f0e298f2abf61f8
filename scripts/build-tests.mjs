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
import { readFile, rm } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { externals } from './bundle-externals.mjs';

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

/** Gives every source file its own import.meta.url (a bundle would otherwise give them all the bundle's). */
const ownUrl = {
  name: 'own-import-meta-url',
  setup(b) {
    b.onLoad({ filter: /\.ts$/ }, async (args) => {
      if (args.path.includes('/node_modules/')) return undefined;
      const text = await readFile(args.path, 'utf8');
      if (!text.includes('import.meta.url')) return { contents: text, loader: 'ts' };
      const url = JSON.stringify(pathToFileURL(args.path).href);
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
const entries = [...new Set([...tests, ...CHILD_ENTRIES])];
await build({
  absWorkingDir: root,
  entryPoints: Object.fromEntries(entries.map((f) => [f.replace(/\.ts$/, ''), f])),
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  chunkNames: '_chunks/[name]-[hash]',
  sourcemap: 'linked',
  sourcesContent: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [externals, ownUrl],
});
process.stderr.write(`test build: ${entries.length} entries in ${Math.round(performance.now() - started)} ms\n`);
