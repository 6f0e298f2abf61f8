// test/architecture/file-size.test.ts: STYLE.md's "small modules": no production source file is over
// 500 lines. Production is every TypeScript or JavaScript source in the repo except tests (test/), the
// benchmarks (bench/), installed packages (node_modules/), build output (dist/) and dot-folders (.git,
// .test-build, .warren-state, …). A file that grows past the limit is split along a seam, not allowed.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MAX_LINES = 500;
const SKIPPED = new Set(['test', 'bench', 'node_modules', 'dist']);

function productionFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIPPED.has(entry.name) || entry.name.startsWith('.')) continue;
    const full = join(dir, entry.name);
    if (entry.isDirectory()) productionFiles(full, out);
    else if (/\.[cm]?[jt]s$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(relative(ROOT, full).split(sep).join('/'));
  }
  return out;
}

/** Lines as `wc -l` counts them, plus a last line without its newline. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

describe('file size', () => {
  it('counts lines as wc -l does, a last line without a newline included', () => {
    assert.equal(lineCount(''), 0);
    assert.equal(lineCount('a'), 1);
    assert.equal(lineCount('a\n'), 1);
    assert.equal(lineCount('a\nb'), 2);
    assert.equal(lineCount('a\n\nb\n'), 3);
  });

  const files = productionFiles(ROOT);

  it('walks every production area, and no test, bench or build file', () => {
    for (const sample of [
      'app.ts',
      'main.ts',
      'actors/mob/mob-host.ts',
      'http/router.ts',
      'ui/viewer.js',
      'storage/store.ts',
      'contracts/errors.ts',
    ]) {
      if (!files.includes(sample)) assert.fail(`${sample} is not walked (${files.length} files)`);
    }
    const areas = new Set(files.map((f) => f.split('/')[0]));
    for (const area of ['actors', 'http', 'storage', 'contracts', 'machines', 'providers', 'tools', 'config', 'cli', 'client'])
      assert.ok(areas.has(area), `no file of ${area}/ is walked`);
    assert.deepEqual(
      files.filter((f) => /^(test|bench)\/|(^|\/)(node_modules|dist)\//.test(f)),
      [],
    );
  });

  it(`no production source file is over ${MAX_LINES} lines`, () => {
    const over = files
      .map((file) => ({ file, lines: lineCount(readFileSync(join(ROOT, file), 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .map((f) => `${f.file}: ${f.lines} lines`);
    assert.deepEqual(over, [], `split these along a seam (STYLE.md, no file over ${MAX_LINES} lines):\n${over.join('\n')}`);
  });
});
