// test/integration/start-banner.test.ts: what a start says and how it logs, as real child processes.
// - `npm start`: the command of package.json's "start" script (its built dist/main.js swapped for
//   main.ts, compiled under `npm test`) serves the named realm `local`, which a second start opens again with its
//   sessions; `-- --realm other` overrides it. Its 'ready' line names the realm, backend, files, viewer and a
//   first turn that works without a key.
// - `--log-format pretty`: readable lines on stdout and the banner on stderr; without a terminal the log is
//   JSON lines in which no object repeats a key.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { call } from '../helpers/app.ts';
import { nodeEntry, REPO } from '../helpers/child-entry.ts';
import { repeatedKeys } from '../helpers/json-keys.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { poll, within } from '../helpers/wait.ts';

/** The server start takes seconds on a loaded 2-core machine. */
const START_MS = 45_000;
const TIMEOUT = { timeout: 180_000 };

interface Child {
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Runs main.ts (compiled under `npm test`) with `args` in the repo with provider keys removed from the environment. */
function run(t: TestContext, args: string[]): Child {
  const env = { ...process.env };
  for (const k of Object.keys(env)) if (k.endsWith('_API_KEY') || k === 'WARREN_DATABASE_URL') delete env[k];
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return {
    stdout: () => out,
    stderr: () => err,
    stop: () => {
      child.kill('SIGTERM');
      return within('the server to exit after SIGTERM', exited);
    },
  };
}

/** The arguments `npm start` passes to main: package.json's "start" script after `node dist/main.js`. */
async function npmStartArgs(): Promise<string[]> {
  const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const [node, entry, ...rest] = pkg.scripts.start.trim().split(/\s+/);
  assert.equal(`${node} ${entry}`, 'node dist/main.js', `the start script runs the build: ${pkg.scripts.start}`);
  return rest;
}

type Line = Record<string, unknown>;
const jsonLines = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Line);

/** Waits for the JSON 'ready' line (after 'listening'). */
function ready(child: Child): Promise<Line> {
  return poll('the ready line', () => jsonLines(child.stdout()).find((l) => l.msg === 'ready'), {
    timeoutMs: START_MS,
    detail: () => child.stderr() || child.stdout(),
  });
}

describe('npm start', () => {
  it('serves the named realm local, says where it lives and how to run a first turn, and finds its sessions again', TIMEOUT, async (t) => {
    const dir = await tmpDir('warren-start-');
    t.after(() => dir.cleanup());
    const args = [...(await npmStartArgs()), '--state-root', dir.path, '--port', '0'];
    assert.equal(args[0], 'serve');

    const first = run(t, [...args]);
    const line = await ready(first);
    const url = line.url as string;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.deepEqual(
      { ...line, time: undefined, first_turn: undefined },
      {
        level: 30,
        time: undefined,
        service: 'warren',
        msg: 'ready',
        url,
        viewer: `${url}/ui`,
        realm: 'local',
        realm_kind: 'named',
        backend: 'lmdb',
        realm_dir: join(dir.path, 'local'),
        inbound_auth: 'off',
        first_turn: undefined,
      },
    );
    assert.ok((await stat(join(dir.path, 'local', 'realm_manifest.json'))).isFile(), 'the realm lives where the line says');
    assert.equal((await fetch(line.viewer as string)).status, 200, 'the viewer answers');

    // The first turn as printed: curl POST <url>/sessions with a JSON body on the scripted provider.
    const firstTurn = line.first_turn as string;
    const m = /^curl -s (\S+) -H 'content-type: application\/json' -d '(.*)'$/.exec(firstTurn);
    assert.ok(m, firstTurn);
    assert.equal(m[1], `${url}/sessions`);
    const body = JSON.parse(m[2] ?? '') as Record<string, unknown>;
    assert.deepEqual(body, { prompt: 'hello', provider: 'scripted' });
    const turn = await call(url, 'POST', '/sessions', body);
    assert.equal(turn.status, 200, JSON.stringify(turn.body));
    assert.equal(turn.body.text, 'echo: hello');
    assert.equal(await first.stop(), 0);

    // The same command again: the same realm, the session still there.
    const second = run(t, [...args]);
    const again = await ready(second);
    assert.equal(again.realm, 'local');
    const listed = await call(again.url as string, 'GET', '/sessions');
    const ids = (listed.body.sessions as Array<{ session_id: string }>).map((s) => s.session_id);
    assert.ok(ids.includes(turn.body.session_id as string), `session kept across restarts: ${JSON.stringify(ids)}`);
    assert.equal(await second.stop(), 0);

    // `npm start -- --realm other` names another realm.
    const other = run(t, [...args, '--realm', 'other']);
    const otherLine = await ready(other);
    assert.equal(otherLine.realm, 'other');
    assert.equal(otherLine.realm_dir, join(dir.path, 'other'));
    assert.equal(await other.stop(), 0);
  });
});

describe('log formats', () => {
  it('--log-format pretty prints readable lines and the banner on stderr', TIMEOUT, async (t) => {
    const dir = await tmpDir('warren-pretty-');
    t.after(() => dir.cleanup());
    const child = run(t, ['serve', '--realm', 'shown', '--state-root', dir.path, '--port', '0', '--log-format', 'pretty']);
    const url = await poll('the pretty listening line', () => /^\S+ INFO {2}listening url=(\S+) realm=shown /m.exec(child.stdout())?.[1], {
      timeoutMs: START_MS,
      detail: () => child.stderr() || child.stdout(),
    });
    const banner = await poll('the banner', () => (child.stderr().includes('curl') ? child.stderr() : undefined));
    assert.equal((await call(url, 'POST', '/sessions', { prompt: 'hi', provider: 'scripted' })).status, 200);
    assert.equal(await child.stop(), 0);

    const lines = child.stdout().trimEnd().split('\n');
    for (const l of lines) assert.match(l, /^\d{2}:\d{2}:\d{2}\.\d{3} (TRACE|DEBUG|INFO |WARN |ERROR|FATAL) \S/, `a readable line: ${l}`);
    assert.ok(
      lines.some((l) => / INFO {2}\[http\] /.test(l)),
      'component lines name their component',
    );
    assert.ok(
      lines.some((l) => / INFO {2}shutting down signal=SIGTERM$/.test(l)),
      lines.join('\n'),
    );
    assert.equal(banner.split('\n')[0], `Warren ${(await packageVersion()) as string} listening on ${url}`);
    assert.match(banner, /^ {2}realm {5}shown \(named/m);
    assert.match(banner, /^ {2}backend {3}lmdb /m);
    assert.ok(banner.includes(`  files     ${join(dir.path, 'shown')}\n`), banner);
    assert.ok(banner.includes(`  viewer    ${url}/ui\n`), banner);
    assert.ok(
      banner.includes(`curl -s ${url}/sessions -H 'content-type: application/json' -d '{"prompt":"hello","provider":"scripted"}'\n`),
      banner,
    );
    assert.doesNotMatch(banner, /inbound API keys are on/, 'keys are off on loopback');
  });

  it('without a terminal the log is JSON lines, and no object in them repeats a key', TIMEOUT, async (t) => {
    const dir = await tmpDir('warren-json-');
    t.after(() => dir.cleanup());
    const child = run(t, ['serve', '--state-root', dir.path, '--port', '0', '--log-level', 'debug']);
    const line = await ready(child);
    assert.equal(line.realm_kind, 'isolated', 'a bare serve opens a new isolated realm');
    assert.match(line.realm as string, /^realm-[0-9a-f]{24}$/);
    const url = line.url as string;
    assert.equal((await call(url, 'POST', '/sessions', { prompt: 'hi', provider: 'scripted' })).status, 200);
    assert.equal(await child.stop(), 0);
    assert.equal(child.stderr(), '', 'nothing on stderr: the banner is the ready line');
    const raw = child.stdout().trimEnd().split('\n');
    assert.ok(raw.length > 5, `a working server logged: ${raw.length} lines`);
    assert.ok(
      raw.some((l) => l.includes('"component":')),
      'component lines are among them',
    );
    for (const l of raw) {
      assert.doesNotThrow(() => JSON.parse(l), `a JSON line: ${l}`);
      assert.deepEqual(repeatedKeys(l), [], l);
    }
  });
});

async function packageVersion(): Promise<unknown> {
  return (JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { version: unknown }).version;
}
