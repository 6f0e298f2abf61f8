// test/integration/mob-cli.test.ts: `warren mob <method>` against a real server: results as JSON on
// stdout, exit 45 on scope denial, 46 when the host does not answer, 1 on other errors; and the real
// `main.ts mob` entry as a child process.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runMobCli } from '../../cli/mob-command.ts';
import { startApp } from '../helpers/app.ts';
import { nodeEntry } from '../helpers/child-entry.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

describe('warren mob (cli)', () => {
  it('calls JSON-RPC methods and maps denials and outages onto exit codes', async (t) => {
    const app = await startApp(t);
    const created = await runMobCli(['mob/create', '{"mob_id":"c"}', '--url', app.url]);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(JSON.parse(created.stdout).mob_id, 'c');
    const denied = await runMobCli(['mob/list', '--url', app.url, '--principal', 'mallory']);
    assert.equal(denied.code, 45);
    assert.match(denied.stderr, /ScopeDenied/);
    const missing = await runMobCli(['mob/get', '{"mob_id":"zz"}', '--url', app.url]);
    assert.equal(missing.code, 1);
    assert.equal((await runMobCli(['mob/list', 'not json', '--url', app.url])).code, 1);
    assert.equal((await runMobCli(['mob/list', '--url', 'http://127.0.0.1:1'])).code, 46);

    const child = spawn(process.execPath, [...nodeEntry('main.ts'), 'mob', 'mob/list'], {
      cwd: REPO,
      env: { ...process.env, WARREN_URL: app.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b: Buffer) => (out += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    assert.equal(code, 0);
    assert.deepEqual(
      JSON.parse(out).mobs.map((m: { mob_id: string }) => m.mob_id),
      ['c'],
    );
  });
});
