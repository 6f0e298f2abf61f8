// test/integration/auth-cli.test.ts: `warren auth list|store|test|status|logout` as real child processes
// (main.ts) against a running server; the secret of `store` goes through stdin only.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAuthArgs } from '../../config/auth-cli.ts';
import { FlagError } from '../../config/flags.ts';
import { call, startApp } from '../helpers/app.ts';
import { nodeEntry } from '../helpers/child-entry.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TIMEOUT = { timeout: 30_000 };
const SECRET = 'sk-cli-secret-42';

function warren(args: string[], stdin = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), 'auth', ...args], { cwd: REPO, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => {
    stdout += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

describe('warren auth (CLI)', () => {
  it('stores a secret read from stdin, then lists, tests, reports and logs out the binding', TIMEOUT, async (t) => {
    const app = await startApp(t);
    const common = ['--url', app.url, '--realm', 'test-realm'];
    const stored = await warren(['store', ...common, '--binding', 'main', '--provider', 'openai'], `${SECRET}\n`);
    assert.equal(stored.code, 0, stored.stderr);
    assert.equal(JSON.parse(stored.stdout).stored, true);
    assert.ok(!stored.stdout.includes(SECRET));
    const listed = await warren(['list', ...common]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.deepEqual(JSON.parse(listed.stdout).bindings, [{ id: 'main', backend_profile: 'openai', auth_profile: 'main' }]);
    const tested = await warren(['test', ...common, '--binding', 'main']);
    assert.equal(tested.code, 0);
    assert.equal(JSON.parse(tested.stdout).has_credential, true);
    const status = await warren(['status', ...common, '--binding', 'main']);
    assert.equal(JSON.parse(status.stdout).state, 'valid');
    const out = await warren(['logout', ...common, '--binding', 'main']);
    assert.equal(JSON.parse(out.stdout).cleared, true);
    assert.equal((await call(app.url, 'GET', '/auth/bindings/main/status?realm_id=test-realm')).body.state, 'released');
    const failed = await warren(['test', ...common, '--binding', 'ghost']);
    assert.equal(failed.code, 1);
    assert.equal(JSON.parse(failed.stdout).state, 'error');
    assert.match(failed.stderr, /HTTP 422/);
  });

  it('refuses a secret on the command line and an empty stdin', TIMEOUT, async () => {
    const argv = await warren(['store', '--realm', 'r', '--binding', 'b', '--provider', 'openai', '--secret', SECRET]);
    assert.equal(argv.code, 1);
    assert.match(argv.stderr, /stdin/);
    const empty = await warren(['store', '--url', 'http://127.0.0.1:1', '--realm', 'r', '--binding', 'b', '--provider', 'openai'], '');
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no secret/);
  });

  it('parses options (pure)', () => {
    assert.deepEqual(parseAuthArgs(['status', '--realm=r', '--binding', 'b', '--profile', 'p'], { WARREN_URL: 'http://h:1/' }), {
      sub: 'status',
      url: 'http://h:1',
      realm: 'r',
      binding: 'b',
      profile: 'p',
      method: 'api_key',
    });
    assert.throws(() => parseAuthArgs(['status', '--realm', 'r']), FlagError);
    assert.throws(() => parseAuthArgs(['store', '--realm', 'r', '--binding', 'b']), /--provider/);
    assert.throws(() => parseAuthArgs(['store', '--realm', 'r', '--binding', 'b', '--provider', 'x', '--method', 'oauth']), /--method/);
    assert.throws(() => parseAuthArgs(['rotate']), /list, store/);
  });
});
