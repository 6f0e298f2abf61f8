#!/usr/bin/env node
// scripts/build.mjs: the production build (`npm run build`, and `prepare`, which `npm ci` runs). esbuild
// bundles main.ts (and the sqlite writer thread's entry) into ESM files directly under dist/, with every
// npm package left external (native modules load from node_modules as usual) and each dynamic import its
// own chunk, so `warren serve` loads compiled JavaScript without tsx. Files read at runtime (README.md,
// ui/, skills/) are found from the package root (contracts/package-root.ts), so nothing is copied.
// Type checking stays with `npm run typecheck`; this only transpiles.
// Whitespace and syntax are minified: V8 keeps every loaded module's source text in the heap for as long as
// the process lives, and a file with one non-ASCII character in a comment is kept as two bytes per
// character; minified, the server's start-up chunks hold about 2.4 MB of one-byte source instead of about
// 6 MB (docs/performance.md). Identifiers keep their names (stack traces and logged error types stay
// readable without the source maps); `node --enable-source-maps dist/main.js` maps traces to the .ts files.
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';
import { PRODUCTION_OPTIONS } from './bundle-externals.mjs';

// --outdir <name>: another folder directly under the package root (the tests build into their own, so
// they never race the real dist/). It must be one level deep: the bundle finds README.md, ui/ and skills/
// at '../' from its own files.
const { values } = parseArgs({ options: { outdir: { type: 'string', default: 'dist' } } });
if (!/^[A-Za-z0-9._-]+$/.test(values.outdir) || values.outdir.startsWith('..')) {
  process.stderr.write(`warren build: --outdir must be one folder name under the package root, got ${values.outdir}\n`);
  process.exit(2);
}
const root = fileURLToPath(new URL('../', import.meta.url));
const outdir = fileURLToPath(new URL(`../${values.outdir}/`, import.meta.url));
const started = performance.now();
rmSync(outdir, { recursive: true, force: true });
await build({
  ...PRODUCTION_OPTIONS,
  absWorkingDir: root,
  entryPoints: { main: 'main.ts', 'sqlite-writer': 'storage/sqlite-writer.ts' },
  outdir,
});
process.stderr.write(`warren build: ${values.outdir}/ in ${Math.round(performance.now() - started)} ms\n`);
