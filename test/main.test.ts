// test/main.test.ts: the `warren` command's exit codes and messages (main.ts), run as a real process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { nodeEntry } from './helpers/child-entry.ts';

const repo = fileURLToPath(new URL('..', import.meta.url));

interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runWarren(args: string[]): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeEntry('main.ts'), ...args], { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const OPTIONS = [
  '--realm',
  '--isolated',
  '--instance',
  '--realm-backend',
  '--state-root',
  '--context-root',
  '--user-config-root',
  '--expose-paths',
  '--host',
  '--port',
  '--http-transport',
  '--log-level',
  '--log-format',
  '--default-realm',
];

const COMMANDS = [
  'serve',
  'sessions',
  'chat',
  'auth',
  'keys',
  'workgraph',
  'mob',
  'bench',
  'replay',
  'fork',
  'rerun',
  'export',
  'import',
  'doctor',
];

describe('warren command', () => {
  it('exits 1 with a one-line reason for an unknown option', async () => {
    const result = await runWarren(['serve', '--bogus']);
    assert.equal(result.code, 1);
    assert.equal(result.stderr, "warren: unknown option '--bogus'\n");
    assert.equal(result.stdout, '');
  });

  it('exits 1 for a bad port', async () => {
    const result = await runWarren(['serve', '--port', 'abc']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^warren: --port must be an integer from 0 to 65535 \(got 'abc'\)\n$/);
  });

  it('prints help listing every option and exits 0', async () => {
    for (const args of [['--help'], ['serve', '--help']]) {
      const result = await runWarren(args);
      assert.equal(result.code, 0);
      assert.equal(result.stderr, '');
      assert.match(result.stdout, /^Usage: warren <command> \[options\]/);
      for (const option of OPTIONS) assert.ok(result.stdout.includes(option), `${option} missing from --help`);
      // Every command main.ts dispatches has its own one-line entry.
      for (const command of COMMANDS)
        assert.match(result.stdout, new RegExp(`^  ${command}\\b.* \\S`, 'm'), `${command} missing from --help`);
    }
  });

  it('prints the package version for --version and -V', async () => {
    const { version } = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const result = await runWarren([flag]);
      assert.equal(result.code, 0, result.stderr);
      assert.equal(result.stdout, `warren ${version}\n`);
    }
  });
});
