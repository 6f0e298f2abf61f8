// test/integration/doctor.test.ts: `warren doctor` as a real child process (main.ts): one line per check,
// exit 0 with warnings only, exit 1 when a check fails (a state root that is a file, a port held by another
// program, an unreachable PostgreSQL of a postgres realm, a broken config.toml), --json, the providers a
// turn could use, and a port held by a running Warren reported as a warning.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { maySkip } from '../helpers/absent.ts';
import { nodeEntry, REPO } from '../helpers/child-entry.ts';
import { startApp } from '../helpers/app.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { within } from '../helpers/wait.ts';

const TIMEOUT = { timeout: 60_000 };
const CHECKS = ['node', 'lmdb', 'better-sqlite3', 'uWebSockets.js', 'state root', 'disk space', 'realm', 'providers', 'postgres', 'port'];

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `warren doctor <args>` (main.ts, compiled under `npm test`) with no provider key or database URL unless `env` adds one. */
function doctor(args: string[], env: Record<string, string> = {}): Promise<Run> {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.endsWith('_API_KEY') || k === 'WARREN_DATABASE_URL') delete base[k];
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), 'doctor', ...args], {
    cwd: REPO,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const done = new Promise<Run>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
  return within('warren doctor to finish', done, 45_000).finally(() => child.kill('SIGKILL'));
}

/** The report's check lines by name: [status, detail]. */
function lines(out: string): Map<string, [string, string]> {
  const map = new Map<string, [string, string]>();
  for (const line of out.split('\n')) {
    const m = /^(ok {2}|warn|FAIL) {2}(.+?) {2,}(.*)$/.exec(line);
    if (m) map.set(m[2]?.trim() ?? '', [m[1]?.trim() ?? '', m[3] ?? '']);
  }
  return map;
}

async function root(t: TestContext): Promise<string> {
  const dir = await tmpDir('warren-doctor-');
  t.after(() => dir.cleanup());
  return dir.path;
}

describe('warren doctor', () => {
  it('prints one line per check and exits 0 when nothing fails; a missing provider key is a warning', TIMEOUT, async (t) => {
    const dir = await root(t);
    const run = await doctor(['--state-root', join(dir, 'not-yet'), '--port', '0']);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal(run.stderr, '');
    const report = lines(run.stdout);
    assert.deepEqual([...report.keys()], CHECKS, run.stdout);
    assert.equal(run.stdout.split('\n')[0], `warren doctor: realm local under ${join(dir, 'not-yet')}`);
    assert.deepEqual(report.get('node')?.[0], 'ok');
    assert.match(report.get('node')?.[1] ?? '', new RegExp(`^v${process.versions.node.replace(/\./g, '\\.')} \\(engines\\.node >=`));
    for (const mod of ['lmdb', 'better-sqlite3']) assert.equal(report.get(mod)?.[0], 'ok', `${mod}: ${report.get(mod)?.[1]}`);
    assert.deepEqual(report.get('state root'), [
      'ok',
      `${join(dir, 'not-yet')} does not exist yet; the first start creates it (in ${dir}, writable)`,
    ]);
    assert.equal(report.get('disk space')?.[0] === 'fail', false);
    assert.match(report.get('realm')?.[1] ?? '', /^local does not exist yet/);
    assert.equal(report.get('providers')?.[0], 'warn');
    assert.match(report.get('providers')?.[1] ?? '', /none configured: set ANTHROPIC_API_KEY.*"provider":"scripted"/);
    assert.deepEqual(report.get('postgres'), ['ok', 'not used (no postgres realm, no WARREN_DATABASE_URL)']);
    assert.deepEqual(report.get('port'), ['ok', '127.0.0.1:0: port 0 picks a free port at start']);
    assert.match(run.stdout, /\nno failures, 1 warning\n$/);
  });

  it('names the providers a turn could use and the default a turn without a model runs on', TIMEOUT, async (t) => {
    const dir = await root(t);
    const run = await doctor(['--state-root', dir, '--port', '0', '--json'], { OPENAI_API_KEY: 'sk-test', GOOGLE_API_KEY: 'g-test' });
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const body = JSON.parse(run.stdout) as {
      ok: boolean;
      realm: string;
      state_root: string;
      checks: Array<{ name: string; status: string; detail: string }>;
    };
    assert.equal(body.ok, true);
    assert.equal(body.realm, 'local');
    assert.equal(body.state_root, dir);
    assert.deepEqual(
      body.checks.map((c) => c.name),
      CHECKS,
    );
    const providers = body.checks.find((c) => c.name === 'providers');
    assert.equal(providers?.status, 'ok');
    assert.match(providers?.detail ?? '', /^gemini \(GOOGLE_API_KEY\), openai \(OPENAI_API_KEY\); a turn naming no model runs gemini \S+$/);
    assert.doesNotMatch(run.stdout, /sk-test|g-test/, 'key values are never printed');
  });

  it('fails (exit 1) on a state root that is a file', TIMEOUT, async (t) => {
    const dir = await root(t);
    const file = join(dir, 'a-file');
    await writeFile(file, 'x');
    const run = await doctor(['--state-root', file, '--port', '0']);
    assert.equal(run.code, 1, run.stdout);
    assert.deepEqual(lines(run.stdout).get('state root'), ['FAIL', `${file}: not a directory`]);
    assert.match(run.stdout, /\n1 failed, 1 warning\n$/);
    const below = await doctor(['--state-root', join(file, 'realms'), '--port', '0', '--json']);
    assert.equal(below.code, 1);
    const body = JSON.parse(below.stdout) as { ok: boolean; checks: Array<{ name: string; status: string; detail: string }> };
    assert.equal(body.ok, false);
    assert.deepEqual(
      body.checks.find((c) => c.name === 'state root'),
      {
        name: 'state root',
        status: 'fail',
        detail: `${join(file, 'realms')}: ${file} is not a directory`,
      },
    );
  });

  it('reads an existing realm: its backend, its [rest] port, a broken config.toml fails', TIMEOUT, async (t) => {
    const dir = await root(t);
    // A port another program holds: the realm's config names it, so doctor checks it.
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    t.after(() => holder.close());
    const busy = (holder.address() as AddressInfo).port;
    await writeRealmConfig(dir, 'team', { rest: { host: '127.0.0.1', port: busy } });
    await writeFile(
      join(dir, 'team', 'realm_manifest.json'),
      JSON.stringify({ realm_id: 'team', backend: 'sqlite', origin: 'explicit', created_at: new Date().toISOString() }),
    );
    const run = await doctor(['--state-root', dir, '--realm', 'team']);
    assert.equal(run.code, 1, run.stdout);
    const report = lines(run.stdout);
    assert.match(report.get('realm')?.[1] ?? '', new RegExp(`^team: sqlite backend, ${join(dir, 'team')} \\(mode 0\\d+\\)`));
    assert.deepEqual(report.get('port'), ['FAIL', `127.0.0.1:${busy} is in use by another program (pass --port or set [rest] port)`]);

    await writeFile(join(dir, 'team', 'config.toml'), '[rest\nport = 1\n');
    const broken = await doctor(['--state-root', dir, '--realm', 'team', '--port', '0']);
    assert.equal(broken.code, 1);
    const realm = lines(broken.stdout).get('realm');
    assert.equal(realm?.[0], 'FAIL');
    assert.ok(realm?.[1].includes(join(dir, 'team', 'config.toml')), realm?.[1]);
  });

  it('fails a postgres realm whose database does not answer, without printing its password', TIMEOUT, async (t) => {
    const dir = await root(t);
    await mkdir(join(dir, 'pg'), { recursive: true });
    await writeFile(
      join(dir, 'pg', 'realm_manifest.json'),
      JSON.stringify({ realm_id: 'pg', backend: 'postgres', origin: 'explicit', created_at: new Date().toISOString() }),
    );
    // A port nothing listens on: bound and released.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const closed = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const none = await doctor(['--state-root', dir, '--realm', 'pg', '--port', '0']);
    assert.equal(none.code, 1);
    assert.match(
      lines(none.stdout).get('postgres')?.[1] ?? '',
      /the realm is postgres, but neither WARREN_DATABASE_URL nor \[storage\] postgres_url is set/,
    );

    const run = await doctor(['--state-root', dir, '--realm', 'pg', '--port', '0'], {
      WARREN_DATABASE_URL: `postgres://warren:hunter2-secret@127.0.0.1:${closed}/warren`,
    });
    assert.equal(run.code, 1, run.stdout);
    const [status, detail] = lines(run.stdout).get('postgres') ?? [];
    assert.equal(status, 'FAIL');
    assert.match(detail ?? '', new RegExp(`^127\\.0\\.0\\.1:${closed}/warren \\(WARREN_DATABASE_URL\\) unreachable: .*ECONNREFUSED`));
    assert.doesNotMatch(run.stdout, /hunter2/);
  });

  it('reaches the PostgreSQL of a postgres realm and names its version', { timeout: 180_000 }, async (t) => {
    const pg = await testPostgres();
    if (!pg.ok) {
      // Skips where PostgreSQL cannot start here; in CI only when declared absent (test/helpers/absent.ts).
      if (maySkip('postgres')) return t.skip(`postgres: ${pg.reason}`);
      throw new Error(`postgres could not start in CI: ${pg.reason} (set WARREN_TEST_ABSENT=postgres if it is absent on purpose)`);
    }
    const dir = await root(t);
    await mkdir(join(dir, 'pg'), { recursive: true });
    await writeFile(
      join(dir, 'pg', 'realm_manifest.json'),
      JSON.stringify({ realm_id: 'pg', backend: 'postgres', origin: 'explicit', created_at: new Date().toISOString() }),
    );
    const url = await pg.server.createDatabase('doctor');
    const run = await doctor(['--state-root', dir, '--realm', 'pg', '--port', '0'], { WARREN_DATABASE_URL: url });
    assert.equal(run.code, 0, run.stdout);
    const database = new URL(url).pathname;
    assert.match(
      lines(run.stdout).get('postgres')?.[1] ?? '',
      new RegExp(`^127\\.0\\.0\\.1:${pg.server.port}${database} \\(WARREN_DATABASE_URL\\) answers: PostgreSQL \\d+`),
    );
    assert.doesNotMatch(run.stdout, new RegExp(decodeURIComponent(new URL(url).password)), 'no password in the report');
  });

  it('reports a port held by a running Warren as a warning (exit 0)', TIMEOUT, async (t) => {
    const dir = await root(t);
    const app = await startApp(t, []);
    const port = new URL(app.url).port;
    const run = await doctor(['--state-root', dir, '--port', port]);
    assert.equal(run.code, 0, run.stdout);
    assert.deepEqual(lines(run.stdout).get('port'), [
      'warn',
      `127.0.0.1:${port} is in use by a running server that answers /health (a Warren already running?)`,
    ]);
  });

  it('answers --help and refuses bad options with exit 2', TIMEOUT, async () => {
    const help = await doctor(['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /^Usage: warren doctor/);
    const bad = await doctor(['--port', 'x']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^warren doctor: --port must be an integer/);
    // The shared command-line parser's wording (config/cli-args.ts), like every other command.
    const unknown = await doctor(['--prot', '1']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^warren doctor: unknown option '--prot'/);
    const missing = await doctor(['--realm']);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^warren doctor: --realm needs a value/);
  });
});
