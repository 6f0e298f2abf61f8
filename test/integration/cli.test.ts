// test/integration/cli.test.ts: `warren serve` as a real child process (main.ts): it logs a JSON
// 'listening' line, serves real HTTP, exits 0 on SIGTERM, creates a sqlite realm when asked, and
// creates an opaque `realm-…` realm when --realm is omitted (SPEC.md "What the service does").
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { uwsSkip } from '../helpers/absent.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { nodeEntry } from '../helpers/child-entry.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const UWS_SKIP = uwsSkip();
/** A server start takes seconds on a loaded 2-core machine; a hung child must still fail its test, not the run. */
const TIMEOUT = { timeout: 60_000 };

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

interface Spawned {
  child: ChildProcess;
  /** Resolves with the 'listening' log line; rejects when the child exits first. */
  listening: Promise<LogLine>;
  /** Every stdout line so far (pino JSON). */
  lines: LogLine[];
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

type Running = Omit<Spawned, 'listening'> & { listening: LogLine & { url: string } };

/** Spawns `node --import tsx main.ts serve <args>`; the child is killed after the test if still alive. */
function spawnWarren(t: TestContext, args: string[]): Spawned {
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), 'serve', ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal }));
  });
  const lines: LogLine[] = [];
  const listening = new Promise<LogLine>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        return reject(new Error(`stdout line is not JSON: ${text}`));
      }
      lines.push(line);
      if (line.msg === 'listening') resolve(line);
    });
    exit.then(({ code }) => reject(new Error(`warren exited (${code}) before listening: ${stderr}`))).catch(reject);
  });
  listening.catch(() => {}); // callers that expect an early exit never await it
  return { child, listening, lines, exit, stderr: () => stderr };
}

async function startWarren(t: TestContext, args: string[]): Promise<Running> {
  const run = spawnWarren(t, args);
  const listening = await run.listening;
  assert.equal(typeof listening.url, 'string', 'the listening line carries url');
  return { ...run, listening: listening as LogLine & { url: string } };
}

async function stateRoot(t: TestContext): Promise<string> {
  const dir = await tmpDir('warren-cli-');
  t.after(() => dir.cleanup());
  return dir.path;
}

describe('warren serve (cli)', () => {
  for (const transport of ['auto', 'uws', 'node'] as const) {
    const skip = transport === 'uws' ? (UWS_SKIP ?? false) : false;
    it(`serves real HTTP with --http-transport ${transport} and exits 0 on SIGTERM`, { ...TIMEOUT, skip }, async (t) => {
      const root = await stateRoot(t);
      const args = ['--port', '0', '--state-root', root, '--realm', 'cli-realm', '--log-level', 'info'];
      if (transport !== 'auto') args.push('--http-transport', transport);
      const run = await startWarren(t, args);
      const { url } = run.listening;
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
      assert.equal(run.listening.realm, 'cli-realm');
      assert.equal(run.listening.backend, 'lmdb');
      assert.equal(run.listening.transport, transport === 'auto' ? 'node' : transport);
      const health = await fetch(`${url}/health`);
      assert.equal(health.status, 200);
      assert.equal(await health.text(), 'ok');
      const config = (await (await fetch(`${url}/config`)).json()) as { realm_id: string };
      assert.equal(config.realm_id, 'cli-realm');

      run.child.kill('SIGTERM');
      assert.deepEqual(await run.exit, { code: 0, signal: null });
      assert.equal(run.stderr(), '');
      const msgs = run.lines.map((l) => l.msg);
      assert.ok(msgs.includes('shutting down') && msgs.includes('stopped'), JSON.stringify(msgs));
      await assert.rejects(fetch(`${url}/health`), TypeError, 'the port is closed after exit');
    });
  }

  it('creates a sqlite realm with --realm-backend sqlite: the manifest pins it and the store is one SQLite file', TIMEOUT, async (t) => {
    const root = await stateRoot(t);
    const run = await startWarren(t, [
      '--port',
      '0',
      '--state-root',
      root,
      '--realm',
      'sq',
      '--realm-backend',
      'sqlite',
      '--http-transport',
      'node',
    ]);
    assert.equal(run.listening.backend, 'sqlite');
    const manifest = JSON.parse(await readFile(join(root, 'sq', 'realm_manifest.json'), 'utf8')) as { backend: string };
    assert.equal(manifest.backend, 'sqlite');
    assert.ok((await readdir(join(root, 'sq', 'store'))).includes('warren.sqlite'));
    run.child.kill('SIGTERM');
    assert.deepEqual(await run.exit, { code: 0, signal: null });
  });

  it('creates a new opaque realm-… directory under the state root when --realm is omitted', TIMEOUT, async (t) => {
    const root = await stateRoot(t);
    const run = await startWarren(t, ['--port', '0', '--state-root', root, '--log-level', 'info', '--http-transport', 'node']);
    const entries = await readdir(root);
    assert.equal(entries.length, 1, JSON.stringify(entries));
    const [realm] = entries;
    assert.match(realm, /^realm-[0-9a-f]{24}$/);
    assert.equal(run.listening.realm, realm);
    for (const file of ['realm_manifest.json', 'config.toml', 'config_state.json']) {
      assert.ok((await stat(join(root, realm, file))).isFile(), `${file} missing`);
    }
    const config = (await (await fetch(`${run.listening.url}/config`)).json()) as { realm_id: string };
    assert.equal(config.realm_id, realm);
    run.child.kill('SIGTERM');
    assert.equal((await run.exit).code, 0);
  });
});
