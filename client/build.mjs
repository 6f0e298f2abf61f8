#!/usr/bin/env node
// client/build.mjs: builds the publishable @warren/client package into client/dist/ (run by
// `npm run build` in client/ and by `npm pack`'s prepack). esbuild bundles each entry point to plain
// ESM JavaScript (the client has no run-time dependencies: it imports only types from Warren's
// contracts); tsc emits the declarations, Warren's contracts included, with import specifiers rewritten
// to .js so any TypeScript project resolves them. Uses the esbuild and tsc of the repo it lives in.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..');
const dist = path.join(here, 'dist');
const started = performance.now();
rmSync(dist, { recursive: true, force: true });

const ENTRIES = ['client', 'errors', 'sse', 'types'];
await build({
  absWorkingDir: here,
  entryPoints: Object.fromEntries(ENTRIES.map((e) => [e, `src/${e}.ts`])),
  outdir: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  chunkNames: 'chunk-[hash]',
  legalComments: 'none',
  logLevel: 'warning',
});

const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');
const types = path.join(dist, 'types');
const run = spawnSync(
  process.execPath,
  [
    tsc,
    '--ignoreConfig',
    '--declaration',
    '--emitDeclarationOnly',
    '--allowImportingTsExtensions',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2023',
    '--strict',
    '--skipLibCheck',
    '--types',
    'node',
    '--rootDir',
    repo,
    '--outDir',
    types,
    ...ENTRIES.map((e) => path.join(here, 'src', `${e}.ts`)),
  ],
  { cwd: repo, encoding: 'utf8' },
);
if (run.status !== 0) {
  process.stderr.write(`@warren/client build: tsc failed\n${run.stdout}${run.stderr}`);
  process.exit(1);
}

// Declarations keep the sources' `./x.ts` specifiers; published, they must name the .js twins.
function rewrite(dir) {
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) rewrite(file);
    else if (name.endsWith('.d.ts')) {
      const text = readFileSync(file, 'utf8');
      writeFileSync(file, text.replace(/(from\s+|import\()(['"])(\.{1,2}\/[^'"]+)\.ts\2/g, '$1$2$3.js$2'));
    }
  }
}
rewrite(types);
process.stderr.write(`@warren/client build: client/dist/ in ${Math.round(performance.now() - started)} ms\n`);
