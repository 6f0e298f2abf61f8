// scripts/coverage-report.mjs on real V8 coverage: a tiny "repo" (a production file with one function called
// and one not, a test-side file, a production file nothing imports) bundled by esbuild like the test build
// (linked source map, no sourcesContent), run by real node processes with NODE_V8_COVERAGE, then reported.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdir, writeFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';
import { REPO } from '../helpers/child-entry.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REPORT = join(REPO, 'scripts/coverage-report.mjs');

// Lines 1-4 run when `used` is called; lines 5-8 only when `unused` is.
const HALF = `export function used(n: number): number {
  const a = n + 1;
  return a * 2;
}
export function unused(n: number): number {
  const b = n - 1;
  return b * 3;
}
`;
// (Lines of its own, so the import-graph test does not read them as this file's imports.)
const ENTRY = [
  "import { used, unused } from '../tools/half.ts';",
  "import { helper } from './helper.ts';",
  'const n = helper(Number(process.argv[2] ?? 1));',
  "process.stdout.write(String(process.argv[3] === 'both' ? used(n) + unused(n) : used(n)));",
  '',
].join('\n');
const HELPER = `export function helper(n: number): number {
  return n;
}
export function neverCalled(): number {
  return 0;
}
`;
const NEVER = `export function never(x: number): number {
  if (x > 1) return x;
  return -x;
}
export type OnlyAType = { a: number };
`;

async function fixture(t: { after(fn: () => Promise<void>): void }): Promise<{ root: string; run(...args: string[]): void }> {
  const dir = await tmpDir('warren-coverage-report-');
  t.after(dir.cleanup);
  const root = dir.path;
  await mkdir(join(root, 'tools'));
  await mkdir(join(root, 'test'));
  await mkdir(join(root, 'v8'));
  await writeFile(join(root, 'tools/half.ts'), HALF);
  await writeFile(join(root, 'tools/never.ts'), NEVER);
  await writeFile(join(root, 'tools/types-only.ts'), 'export interface Shape { a: number }\n');
  await writeFile(join(root, 'test/helper.ts'), HELPER);
  await writeFile(join(root, 'test/entry.ts'), ENTRY);
  await build({
    absWorkingDir: root,
    entryPoints: { 'test/entry': 'test/entry.ts' },
    outdir: join(root, '.build'),
    bundle: true,
    format: 'esm',
    platform: 'node',
    sourcemap: 'linked',
    sourcesContent: false,
    logLevel: 'silent',
  });
  const run = (...args: string[]): void => {
    const res = spawnSync(process.execPath, [join(root, '.build/test/entry.js'), ...args], {
      env: { PATH: process.env.PATH, NODE_V8_COVERAGE: join(root, 'v8') },
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
  };
  return { root, run };
}

function report(root: string, ...args: string[]): { code: number | null; out: string; err: string } {
  const res = spawnSync(process.execPath, [REPORT, join(root, 'v8'), '--root', root, ...args], {
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
  });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

/** The `hit / lines` figures of a row of the table. */
function row(out: string, name: string): { hit: number; lines: number } {
  const m = new RegExp(`(\\d+) / (\\d+)\\s+${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}\\b`).exec(out);
  assert.ok(m, `no row for ${name} in:\n${out}`);
  return { hit: Number(m[1]), lines: Number(m[2]) };
}

function notRun(out: string, path: string): number[] {
  const m = new RegExp(`${path} lines not run: (.*)`).exec(out);
  assert.ok(m, `no uncovered-lines list for ${path} in:\n${out}`);
  return m[1] === 'none' ? [] : m[1].split(' ').map(Number);
}

describe('scripts/coverage-report.mjs', () => {
  it('maps V8 ranges of a bundle back to the .ts lines: the uncalled function is the uncovered half', async (t) => {
    const { root, run } = await fixture(t);
    run('1');
    const { code, out, err } = report(root, '--show', 'tools/half.ts');
    assert.equal(code, 0, err);
    const missed = notRun(out, 'tools/half.ts');
    assert.ok(missed.includes(6) && missed.includes(7), `the body of unused() did not run: ${missed}`);
    assert.ok(
      missed.every((l) => l >= 5 && l <= 8),
      `only unused() (lines 5-8) is uncovered: ${missed}`,
    );
    const half = row(out, 'tools/half.ts');
    assert.equal(half.lines - half.hit, missed.length);
    assert.ok(half.hit >= 2 && half.hit < half.lines, JSON.stringify(half));
    assert.doesNotMatch(out, /test\/helper\.ts|test\/entry\.ts/, 'test code is not counted');
    assert.match(out, /a subset of the tests: no floor applied/);
  });

  it('merges the processes: a second run that calls the other function covers the file', async (t) => {
    const { root, run } = await fixture(t);
    run('1');
    run('2', 'both');
    const { code, out, err } = report(root, '--show', 'tools/half.ts');
    assert.equal(code, 0, err);
    assert.deepEqual(notRun(out, 'tools/half.ts'), []);
    const half = row(out, 'tools/half.ts');
    assert.equal(half.hit, half.lines);
    assert.match(out, /2 V8 coverage files/);
  });

  it('maps through the source maps the coverage files carry, once the build is gone', async (t) => {
    // The report parses a file's source-map-cache only while one of its bundles is not mapped yet: the
    // first file's cache maps the bundle, the second file's ranges are merged without its cache.
    const { root, run } = await fixture(t);
    run('1');
    run('2', 'both');
    await rm(join(root, '.build'), { recursive: true });
    const { code, out, err } = report(root, '--show', 'tools/half.ts');
    assert.equal(code, 0, err);
    assert.deepEqual(notRun(out, 'tools/half.ts'), []);
    assert.match(out, /2 V8 coverage files/);
  });

  it('exits 1 under the floor, 0 at or over it, and skips a partly written coverage file', async (t) => {
    const { root, run } = await fixture(t);
    run('1');
    await writeFile(join(root, 'v8/coverage-999-1-0.json'), '{"result": [');
    const under = report(root, '--min', '99');
    assert.equal(under.code, 1, under.out);
    assert.match(under.err, /under the floor of 99%/);
    const over = report(root, '--min', '10');
    assert.equal(over.code, 0, over.err);
    assert.match(over.out, /floor 10%: ok/);
    assert.match(over.out, /1 V8 coverage files/, 'the partial file is skipped');
  });

  it('with --all, a production file no process loaded counts at 0% and a types-only file not at all', async (t) => {
    const { root, run } = await fixture(t);
    run('1');
    const { out } = report(root, '--all', '--min', '0');
    const never = row(out, 'tools/never.ts');
    assert.equal(never.hit, 0);
    assert.ok(never.lines >= 3, JSON.stringify(never));
    assert.match(out, /tools\/never\.ts {2}\(not loaded by any test\)/);
    assert.doesNotMatch(out, /types-only/);
    const total = row(out, 'total');
    const half = row(out, 'tools/half.ts');
    assert.deepEqual(total, { hit: half.hit, lines: half.lines + never.lines });
  });

  it('says so when no production code ran (exit 0 for a subset, under the floor with --all), and refuses bad options', async (t) => {
    const { root } = await fixture(t);
    assert.deepEqual(await readdir(join(root, 'v8')), []);
    const empty = report(root);
    assert.equal(empty.code, 0, empty.err);
    assert.match(empty.out, /no production code ran in these tests \(0 V8 coverage files/);
    const all = report(root, '--all');
    assert.equal(all.code, 1, all.out);
    assert.match(all.out, /0\.0%\s+0 \/ \d+\s+total/);
    assert.match(all.err, /under the floor of \d+%/);
    const bad = report(root, '--min', 'lots');
    assert.equal(bad.code, 2);
    assert.match(bad.err, /floor must be a percentage/);
    const unknown = report(root, '--nope');
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /Unknown option '--nope'/);
  });
});
