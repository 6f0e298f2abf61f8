#!/usr/bin/env node
// scripts/coverage-report.mjs: line coverage of the repo's production .ts files from raw V8 coverage.
//
// `WARREN_TEST_COVERAGE=1 sh scripts/test.sh` runs the tests with NODE_V8_COVERAGE=<dir> (every test process
// and every child it starts with the inherited environment writes one JSON file there) and then runs this
// script on the dir. The tests run from esbuild bundles (scripts/build-tests.mjs), so V8's block ranges are
// offsets into bundle files; each bundle's source map (Node keeps it in the coverage file's
// "source-map-cache", with the bundle's line lengths) maps them back to the .ts files.
//
// A line counts when the build emitted code for it (a source map segment points at it); it is covered when
// any of that code ran in any process (the innermost V8 range around a segment's start has a count > 0).
// Only production code counts: the folders in PRODUCTION and app.ts / main.ts, not test/, bench/ or packages.
//
// Usage: node scripts/coverage-report.mjs <v8-dir> [--all] [--min <percent>] [--files <n>] [--root <dir>]
//   --all     the run was the whole suite: production files no test loaded are listed at 0% (their lines
//             counted as esbuild would emit them) and the floor applies.
//   --min     the floor in percent (default: WARREN_COVERAGE_MIN, else DEFAULT_MIN). It applies with --all
//             or when --min is given; a run of a few files prints its figures without a floor.
//   --files   how many of the least covered files to list (default 20).
//   --root    the repository root (default: this script's parent folder).
//   --show    a file (repo-relative, repeatable) whose uncovered lines to list.
// Exit status: 0, 1 under the floor, 2 on bad usage. Tests that run no production code (a subset run of such
// files) print a line saying so and exit 0; with --all every production file then counts at 0%.
import { readFileSync, readdirSync, existsSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { TraceMap, decodedMappings } from '@jridgewell/trace-mapping';

/**
 * The floor without WARREN_COVERAGE_MIN: a few points under the whole suite's measured 95.6% (docs/testing.md
 * "Coverage"), room for the spread between runs.
 */
const DEFAULT_MIN = 92;
const PRODUCTION = ['actors', 'machines', 'http', 'storage', 'config', 'providers', 'tools', 'cli', 'contracts', 'client'];
const TOP_FILES = ['app.ts', 'main.ts'];

function fail(message) {
  process.stderr.write(`coverage-report: ${message}\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      all: { type: 'boolean', default: false },
      min: { type: 'string' },
      files: { type: 'string', default: '20' },
      root: { type: 'string' },
      show: { type: 'string', multiple: true, default: [] },
    },
    allowPositionals: true,
  });
} catch (err) {
  fail(err instanceof Error ? err.message : String(err));
}
const { values, positionals } = parsed;
if (positionals.length !== 1) fail('usage: coverage-report.mjs <v8-coverage-dir> [--all] [--min <percent>] [--files <n>] [--root <dir>]');
const v8Dir = positionals[0];
const root = values.root ?? fileURLToPath(new URL('../', import.meta.url));
const minText = values.min ?? process.env.WARREN_COVERAGE_MIN;
const min = minText === undefined || minText === '' ? DEFAULT_MIN : Number(minText);
if (!Number.isFinite(min) || min < 0 || min > 100) fail(`the floor must be a percentage from 0 to 100 (got '${minText}')`);
const floorApplies = values.all || values.min !== undefined;
const topCount = Number(values.files);
if (!Number.isInteger(topCount) || topCount < 0) fail(`--files must be a non-negative integer (got '${values.files}')`);

/** The repo-relative path of a production source file, or undefined for anything else. */
function productionPath(absPath) {
  const rel = relative(root, absPath).split(sep).join('/');
  if (rel.startsWith('../') || !rel.endsWith('.ts') || rel.endsWith('.d.ts')) return undefined;
  const [first, ...rest] = rel.split('/');
  if (rest.length === 0) return TOP_FILES.includes(first) ? rel : undefined;
  if (!PRODUCTION.includes(first) || rel.includes('/node_modules/') || rel.includes('/dist/')) return undefined;
  return rel;
}

/** Per production file: the lines with emitted code, and those of them that ran. */
const files = new Map();
function fileEntry(path) {
  let entry = files.get(path);
  if (!entry) files.set(path, (entry = { lines: new Set(), hit: new Set() }));
  return entry;
}

/**
 * One bundle's segments that point into production files, in generated-offset order, and which of them have
 * run in any process so far (merged as the coverage files are read).
 */
function bundleSegments(url, lineLengths, map) {
  const traced = new TraceMap(map, url);
  const sources = traced.resolvedSources.map((s) => (s.startsWith('file:') ? productionPath(fileURLToPath(s)) : undefined));
  if (!sources.some(Boolean)) return undefined;
  const offsets = [];
  const paths = [];
  const lines = [];
  let lineStart = 0;
  const mappings = decodedMappings(traced);
  for (let line = 0; line < mappings.length; line++) {
    for (const seg of mappings[line]) {
      if (seg.length < 4) continue;
      const path = sources[seg[1]];
      if (!path) continue;
      offsets.push(lineStart + seg[0]);
      paths.push(path);
      lines.push(seg[2] + 1);
      fileEntry(path).lines.add(seg[2] + 1);
    }
    lineStart += (lineLengths[line] ?? 0) + 1;
  }
  return { offsets: Int32Array.from(offsets), paths, lines: Int32Array.from(lines), hit: new Uint8Array(offsets.length) };
}

/** The line lengths and source map of a bundle still on disk (when a coverage file has no source-map-cache). */
function mapFromDisk(url) {
  const file = fileURLToPath(url);
  if (!existsSync(file) || !existsSync(`${file}.map`)) return undefined;
  const lineLengths = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.length);
  return { lineLengths, data: JSON.parse(readFileSync(`${file}.map`, 'utf8')) };
}

/** Marks the segments whose innermost V8 range has a count > 0 (V8's ranges nest, functions and blocks). */
function markHits(bundle, functions) {
  const ranges = functions.flatMap((f) => f.ranges).sort((a, b) => a.startOffset - b.startOffset || b.endOffset - a.endOffset);
  const stack = [];
  let next = 0;
  for (let i = 0; i < bundle.offsets.length; i++) {
    const at = bundle.offsets[i];
    while (next < ranges.length && ranges[next].startOffset <= at) {
      const r = ranges[next++];
      while (stack.length && stack[stack.length - 1].endOffset <= r.startOffset) stack.pop();
      stack.push(r);
    }
    while (stack.length && stack[stack.length - 1].endOffset <= at) stack.pop();
    if (stack.length && stack[stack.length - 1].count > 0) bundle.hit[i] = 1;
  }
}

/** Scripts whose coverage counts: the repo's own files, not Node's internals or packages. */
const ownScript = (url) => url.startsWith('file:') && !url.includes('/node_modules/');

const MAP_KEY = Buffer.from(',"source-map-cache":');
/**
 * One process's coverage file. Node writes `{"result":[...],"timestamp":...,"source-map-cache":{...}}`, and
 * the source maps are most of it (about 2.6 of a server's 4.2 MB) while each bundle's map is needed only once
 * per run: the part before the cache is parsed alone, the cache only when a script of it is not yet mapped.
 * (The key cannot occur earlier unescaped: the result holds no such key, and a quote inside a string is
 * escaped.) Anything unexpected falls back to parsing the whole file. The head is decoded as latin1, much
 * faster than UTF-8: what is read from it (script URLs, which are percent-encoded, and offsets) is ASCII.
 */
function readCoverage(path, known) {
  const raw = readFileSync(path);
  const at = raw.indexOf(MAP_KEY);
  if (at < 0) return JSON.parse(raw.toString('utf8'));
  const head = JSON.parse(`${raw.toString('latin1', 0, at)}}`);
  if (!Array.isArray(head.result)) return JSON.parse(raw.toString('utf8'));
  if (head.result.every((s) => !ownScript(s.url) || known.has(s.url))) return head;
  const end = raw.lastIndexOf('}');
  head['source-map-cache'] = JSON.parse(raw.toString('utf8', at + MAP_KEY.length, end));
  return head;
}

const bundles = new Map();
let coverageFiles = 0;
let entries;
try {
  entries = readdirSync(v8Dir).filter((f) => f.startsWith('coverage-') && f.endsWith('.json'));
} catch (err) {
  fail(`cannot read ${v8Dir}: ${err instanceof Error ? err.message : String(err)}`);
}
for (const name of entries) {
  let report;
  try {
    report = readCoverage(join(v8Dir, name), bundles);
  } catch {
    continue; // a process killed while writing (kill -9 campaigns) leaves a partial file
  }
  coverageFiles++;
  const cache = report['source-map-cache'] ?? {};
  for (const script of report.result ?? []) {
    const url = script.url;
    if (!ownScript(url)) continue;
    let bundle = bundles.get(url);
    if (bundle === undefined) {
      const source = cache[url]?.data ? cache[url] : mapFromDisk(url);
      bundle = source ? (bundleSegments(url, source.lineLengths, source.data) ?? null) : null;
      bundles.set(url, bundle);
    }
    if (bundle) markHits(bundle, script.functions);
  }
}
for (const bundle of bundles.values()) {
  if (!bundle) continue;
  bundle.hit.forEach((h, i) => {
    if (h) files.get(bundle.paths[i]).hit.add(bundle.lines[i]);
  });
}
for (const [path, entry] of files) if (entry.lines.size === 0) files.delete(path);
if (files.size === 0 && !values.all) {
  process.stdout.write(`\nline coverage: no production code ran in these tests (${coverageFiles} V8 coverage files in ${v8Dir})\n`);
  process.exit(floorApplies ? 1 : 0);
}

/** Production files no process loaded: their lines as esbuild emits them, none covered (only with --all). */
const notLoaded = [];
if (values.all) {
  const { transformSync } = await import('esbuild');
  const walk = (dir) =>
    readdirSync(dir).flatMap((name) => {
      const full = join(dir, name);
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) return [];
      return statSync(full).isDirectory() ? walk(full) : [full];
    });
  const candidates = [
    ...PRODUCTION.filter((d) => existsSync(join(root, d))).flatMap((d) => walk(join(root, d))),
    ...TOP_FILES.map((f) => join(root, f)),
  ];
  for (const abs of candidates) {
    const path = productionPath(abs);
    if (!path || files.has(path) || !existsSync(abs)) continue;
    const out = transformSync(readFileSync(abs, 'utf8'), { loader: 'ts', format: 'esm', sourcemap: 'external', sourcefile: abs });
    const lines = new Set();
    for (const segs of decodedMappings(new TraceMap(out.map, pathToFileURL(abs).href)))
      for (const s of segs) if (s.length >= 4) lines.add(s[2] + 1);
    if (lines.size === 0) continue; // types only
    files.set(path, { lines, hit: new Set() });
    notLoaded.push(path);
  }
}

const pct = (hit, lines) => (lines === 0 ? 100 : (100 * hit) / lines);
const fmt = (hit, lines) => `${pct(hit, lines).toFixed(1).padStart(5)}%  ${String(hit).padStart(6)} / ${String(lines).padEnd(6)}`;
const rows = [...files].map(([path, e]) => ({ path, lines: e.lines.size, hit: [...e.hit].filter((l) => e.lines.has(l)).length }));
const folders = new Map();
for (const r of rows) {
  const folder = r.path.includes('/') ? `${r.path.split('/')[0]}/` : r.path;
  const f = folders.get(folder) ?? { lines: 0, hit: 0, files: 0 };
  f.lines += r.lines;
  f.hit += r.hit;
  f.files++;
  folders.set(folder, f);
}
const total = rows.reduce((t, r) => ({ lines: t.lines + r.lines, hit: t.hit + r.hit }), { lines: 0, hit: 0 });
const out = [];
out.push(`\nline coverage of production code (${coverageFiles} V8 coverage files, ${rows.length} source files):`);
const lowest = rows.sort((a, b) => pct(a.hit, a.lines) - pct(b.hit, b.lines) || b.lines - a.lines).slice(0, topCount);
if (lowest.length) out.push(`  least covered files:`);
for (const r of lowest) out.push(`  ${fmt(r.hit, r.lines)}  ${r.path}${notLoaded.includes(r.path) ? '  (not loaded by any test)' : ''}`);
out.push(`  folders:`);
for (const [folder, f] of [...folders].sort((a, b) => pct(a[1].hit, a[1].lines) - pct(b[1].hit, b[1].lines))) {
  out.push(`  ${fmt(f.hit, f.lines)}  ${folder} (${f.files} files)`);
}
const totalPct = pct(total.hit, total.lines);
out.push(`  ${fmt(total.hit, total.lines)}  total`);
if (notLoaded.length) out.push(`  ${notLoaded.length} production files were not loaded by any test (counted at 0%)`);
for (const path of values.show) {
  const e = files.get(path);
  const missed = e ? [...e.lines].filter((l) => !e.hit.has(l)).sort((a, b) => a - b) : [];
  out.push(e ? `  ${path} lines not run: ${missed.join(' ') || 'none'}` : `  ${path}: no coverage (not production code, or not loaded)`);
}
if (!floorApplies) out.push(`  (a subset of the tests: no floor applied; the whole suite's floor is ${min}%)`);
process.stdout.write(`${out.join('\n')}\n`);
if (floorApplies && totalPct < min) {
  process.stderr.write(`coverage-report: line coverage ${totalPct.toFixed(1)}% is under the floor of ${min}% (WARREN_COVERAGE_MIN)\n`);
  process.exit(1);
}
if (floorApplies) process.stdout.write(`  floor ${min}%: ok\n`);
