// @warren/client as a user gets it: `npm pack` in client/ builds the package, a fresh project installs
// the tarball (offline: typebox, its only dependency, is packed from this repo's node_modules), the
// README's typed-client example type-checks there against the published declarations, and runs against
// the real server through the installed package, printing what its typed events carry.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startApp } from '../helpers/app.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const repo = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const tsc = path.join(path.dirname(require.resolve('typescript/package.json')), 'bin', 'tsc');

/**
 * The children's environment: V8 coverage off (WARREN_TEST_COVERAGE=1 sets NODE_V8_COVERAGE), since none of
 * them runs code the coverage report counts (npm, tsc, and the installed package, which sits under
 * node_modules), and writing it costs each of them CPU and the report a file to parse. Set empty, not left
 * out: Node passes its own NODE_V8_COVERAGE on to a child whose env lacks the variable.
 */
const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_V8_COVERAGE: '' };

/** Runs a command to its end (bounded), answering its exit code and output. */
function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = childEnv, timeoutMs = 90_000) {
  return new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${cmd} ${args.join(' ')} did not finish within ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

/** The ```ts blocks of the README's typed-client section. */
async function readmeExamples(): Promise<string[]> {
  const readme = await readFile(path.join(repo, 'README.md'), 'utf8');
  const start = readme.indexOf('## Typed client');
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]);
}

describe('@warren/client package', () => {
  it('packs, installs into a fresh project, type-checks the README example and runs it', { timeout: 240_000 }, async (t) => {
    const dir = await tmpDir('warren-client-pkg-');
    t.after(() => dir.cleanup());
    const packs = path.join(dir.path, 'packs');
    const project = path.join(dir.path, 'project');
    await run('mkdir', ['-p', packs, project], dir.path);

    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const packed = await run(npm, ['pack', '--pack-destination', packs], path.join(repo, 'client'));
    assert.equal(packed.code, 0, packed.out);
    const typebox = await run(npm, ['pack', path.join(repo, 'node_modules', 'typebox'), '--pack-destination', packs], dir.path);
    assert.equal(typebox.code, 0, typebox.out);
    const tarballs = (await readdir(packs)).filter((f) => f.endsWith('.tgz')).map((f) => path.join(packs, f));
    assert.equal(tarballs.length, 2, tarballs.join());

    await writeFile(path.join(project, 'package.json'), JSON.stringify({ name: 'fresh', version: '1.0.0', type: 'module', private: true }));
    const installed = await run(npm, ['install', '--offline', '--no-audit', '--no-fund', ...tarballs], project);
    assert.equal(installed.code, 0, installed.out);

    const examples = await readmeExamples();
    assert.ok(examples.length >= 1, 'the README shows a typed-client example');
    for (const [i, code] of examples.entries()) await writeFile(path.join(project, `example-${i}.ts`), code);
    await writeFile(
      path.join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'es2023',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          strict: true,
          noEmit: true,
          types: ['node'],
          typeRoots: [path.join(repo, 'node_modules', '@types')],
        },
        include: ['*.ts'],
      }),
    );
    const checked = await run(process.execPath, [tsc, '-p', project], project);
    assert.equal(checked.code, 0, `the README example does not compile against the package:\n${checked.out}`);

    // The example itself, transpiled by esbuild (types checked above), against a real server.
    const { transform } = await import('esbuild');
    const js = (await transform(examples[0], { loader: 'ts', format: 'esm', target: 'node20' })).code;
    await writeFile(path.join(project, 'example.mjs'), js);
    const app = await startApp(t, [{ text: 'hello back' }, { text: 'second answer' }]);
    const ran = await run(process.execPath, ['example.mjs'], project, { ...childEnv, WARREN_URL: app.url });
    assert.equal(ran.code, 0, ran.out);
    assert.match(ran.out, /messages/);
  });
});
