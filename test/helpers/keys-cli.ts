// test/helpers/keys-cli.ts: an inbound API key made by the real `warren keys create` (a child process on a
// test app's realm store), for tests that run with `[rest] auth = "required"`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import type { TestApp } from './app.ts';
import { nodeEntry, REPO } from './child-entry.ts';
import { within } from './wait.ts';

/** Creates a key named `name` with `scopes` (comma-separated) on `app`'s realm; answers its token. */
export async function createKey(app: TestApp, name: string, scopes: string): Promise<string> {
  const args = ['keys', 'create', '--realm', 'test-realm', '--state-root', app.stateRoot, '--name', name, '--scopes', scopes, '--json'];
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const code = await within(
    `warren keys create ${name}`,
    new Promise<number | null>((resolve) => child.on('close', resolve)),
    60_000,
  ).finally(() => child.kill('SIGKILL'));
  assert.equal(code, 0, stderr);
  return (JSON.parse(stdout) as { token: string }).token;
}
