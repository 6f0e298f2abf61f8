// test/integration/sessions-cli.test.ts: `warren sessions list|show|history` and `warren chat`, spawned
// as real child processes (main.ts) against a real test server with a scripted provider: tables and
// --json, a bearer key from $WARREN_API_KEY, a REPL whose reply streams from the SSE events, continuing
// a session, and SIGINT during a gated turn interrupting it instead of exiting.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { call, startApp } from '../helpers/app.ts';
import { gatedAt } from '../helpers/gates.ts';
import { nodeEntry } from '../helpers/child-entry.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const WAIT_MS = 30_000;

interface Cli {
  child: ChildProcessWithoutNullStreams;
  out(): string;
  err(): string;
  /** Resolves when stdout+stderr (or stdout alone) match `re`; fails naming `what` after a deadline or if the child exits. */
  until(re: RegExp, what: string, stdoutOnly?: boolean): Promise<void>;
  exit: Promise<number | null>;
}

function spawnCli(t: TestContext, args: string[], env: Record<string, string> = {}): Cli {
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), ...args], {
    cwd: REPO,
    env: { ...process.env, WARREN_URL: '', WARREN_API_KEY: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let out = '';
  let err = '';
  const waiters: Array<() => void> = [];
  const poke = (): void => waiters.forEach((w) => w());
  child.stdout.on('data', (b: Buffer) => ((out += b.toString()), poke()));
  child.stderr.on('data', (b: Buffer) => ((err += b.toString()), poke()));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => (resolve(code), poke())));
  const until = (re: RegExp, what: string, stdoutOnly = false): Promise<void> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`timed out after ${WAIT_MS} ms waiting for ${what}\nstdout: ${out}\nstderr: ${err}`)),
        WAIT_MS,
      );
      const check = (): void => {
        if (re.test(stdoutOnly ? out : out + err)) {
          clearTimeout(timer);
          resolve();
        } else if (child.exitCode !== null) {
          clearTimeout(timer);
          reject(new Error(`warren exited (${child.exitCode}) before ${what}\nstdout: ${out}\nstderr: ${err}`));
        }
      };
      waiters.push(check);
      check();
    });
  return { child, out: () => out, err: () => err, until, exit };
}

async function run(
  t: TestContext,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const cli = spawnCli(t, args, env);
  cli.child.stdin.end();
  const code = await cli.exit;
  return { code, out: cli.out(), err: cli.err() };
}

describe('warren sessions (cli)', () => {
  it('lists, shows and reads the history of sessions as tables or JSON', { timeout: SLOW_TEST_MS }, async (t) => {
    const app = await startApp(t, [{ text: 'first answer' }, { text: 'second answer' }]);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hello there', labels: { team: 'cli' } });
    assert.equal(created.status, 200);
    const id = created.body.session_id as string;
    await call(app.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'again' });

    const list = await run(t, ['sessions', 'list', '--url', app.url]);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /^SESSION\s+ACTIVE\s+MESSAGES\s+TOKENS\s+UPDATED\s+LABELS\n/);
    assert.match(list.out, new RegExp(`^${id}\\s+(yes|no)\\s+4\\s+\\d+\\s+\\d{4}-\\d\\d-\\d\\dT\\S+Z\\s+team=cli$`, 'm'));

    const json = await run(t, ['sessions', 'list', '--json'], { WARREN_URL: app.url });
    assert.equal(json.code, 0, json.err);
    assert.deepEqual(
      (JSON.parse(json.out) as { sessions: Array<{ session_id: string }> }).sessions.map((s) => s.session_id),
      [id],
    );

    const show = await run(t, ['sessions', 'show', id, '--url', app.url]);
    assert.equal(show.code, 0, show.err);
    assert.match(show.out, new RegExp(`^session\\s+${id}$`, 'm'));
    assert.match(show.out, /^messages\s+4$/m);
    assert.match(show.out, /^labels\s+team=cli$/m);

    const history = await run(t, ['sessions', 'history', id, '--url', app.url]);
    assert.equal(history.code, 0, history.err);
    assert.match(
      history.out,
      /^\[0\] user: hello there\n\[1\] assistant: first answer\n\[2\] user: again\n\[3\] assistant: second answer\n-- 4 of 4 messages\n$/,
    );
    const page = await run(t, ['sessions', 'history', id, '--url', app.url, '--offset', '1', '--limit', '1']);
    assert.match(page.out, /^\[1\] assistant: first answer\n-- 1 of 4 messages \(more: --offset 2\)\n$/);

    const missing = await run(t, ['sessions', 'show', '00000000-0000-4000-8000-000000000000', '--url', app.url]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /404 SESSION_NOT_FOUND/);
    const bad = await run(t, ['sessions', 'frobnicate', '--url', app.url]);
    assert.equal(bad.code, 2);
    assert.match(bad.err, /unknown subcommand 'frobnicate'/);
    const down = await run(t, ['sessions', 'list', '--url', 'http://127.0.0.1:1']);
    assert.equal(down.code, 1);
    assert.match(down.err, /cannot reach http:\/\/127\.0\.0\.1:1/);
  });
});

describe('warren chat (cli)', () => {
  it('streams each reply from the event stream, continues the session, and exits on end of input', async (t) => {
    const app = await startApp(t, [{ chunks: ['Hel', 'lo ', 'you'] }, { chunks: ['second ', 'reply'] }]);
    const chat = spawnCli(t, ['chat', '--url', app.url, '--provider', 'scripted']);
    chat.child.stdin.write('hi\n');
    await chat.until(/Hello you\n/, 'the first streamed reply');
    const id = /\[session ([0-9a-f-]{36})\]/.exec(chat.err())?.[1];
    assert.ok(id, `the new session id is printed: ${chat.err()}`);
    chat.child.stdin.write('more\n');
    await chat.until(/second reply\n/, 'the second streamed reply');
    chat.child.stdin.end();
    assert.equal(await chat.exit, 0, chat.err());
    const history = await call(app.url, 'GET', `/sessions/${id}/history`);
    assert.equal(history.body.message_count, 4, 'both turns ran on one session');
    assert.equal(app.provider.requests[0]?.model !== undefined, true);
  });

  it('interrupts a running turn on SIGINT and keeps the prompt; SIGINT at the idle prompt exits', async (t) => {
    const gate = gatedAt(1, 'never shown');
    const app = await startApp(t, gate.script);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'first' });
    const id = created.body.session_id as string;
    const chat = spawnCli(t, ['chat', id, '--url', app.url]);
    chat.child.stdin.write('wait for it\n');
    await gate.entered.promise;
    chat.child.kill('SIGINT');
    await chat.until(/\[interrupted\]/, 'the turn to end as interrupted');
    assert.equal(chat.child.exitCode, null, 'still running after interrupting a turn');
    await chat.until(/^you> \nyou> $/, 'the prompt after the interrupt', true);
    chat.child.kill('SIGINT');
    assert.equal(await chat.exit, 0, chat.err());
    assert.doesNotMatch(chat.out(), /never shown/);
  });
});
