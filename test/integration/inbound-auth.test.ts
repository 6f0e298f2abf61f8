// test/integration/inbound-auth.test.ts: inbound API keys on the real server. Keys are made by the real
// `warren keys` CLI (a child process opening the realm's LMDB store while the server has it open). With
// `[rest] auth = "required"`: every catalog route answers 401 without a key and 403 with a key lacking its
// scope; revoked and expired keys are 401; last use is recorded; the token appears in no response, log line
// or store file; requests cannot start stdio MCP programs or move the listener; WebSocket /rpc needs a key.
// Also: a start on 0.0.0.0 without keys exits with its one-line reason.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { routeAccess, scopeSatisfies, type InboundScope } from '../../contracts/inbound-auth.ts';
import type { HttpMethod } from '../../contracts/route.ts';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { connectRpcSocket } from '../helpers/rpc-socket.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { nodeEntry } from '../helpers/child-entry.ts';
import { filesUnder } from '../helpers/files-under.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TIMEOUT = { timeout: 120_000 };
const DUMMY_UUID = '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b';

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeEntry('main.ts'), ...args], { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const deadline = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(deadline);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function keys(app: TestApp, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const [cmd, ...rest] = args;
  return run(['keys', cmd, '--realm', 'test-realm', '--state-root', app.stateRoot, ...rest]);
}

async function createKey(app: TestApp, name: string, scopes: string, extra: string[] = []): Promise<{ id: string; token: string }> {
  const r = await keys(app, ['create', '--name', name, '--scopes', scopes, '--json', ...extra]);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { id: string; token: string };
  assert.match(out.token, /^wk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}$/);
  return out;
}

/** A pino logger writing every line (trace and up) into `lines`. */
function capturingLogger(lines: string[]): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return pino({ level: 'trace' }, sink);
}

async function startAuthed(
  t: TestContext,
  lines: string[] = [],
  config: Record<string, unknown> = {},
  now?: () => number,
): Promise<TestApp> {
  return startApp(t, [{ text: 'created' }, { text: 'again' }], {
    config: { rest: { auth: 'required' }, ...config },
    logger: capturingLogger(lines),
    ...(now ? { clocks: { 'inbound-auth': now } } : {}),
  });
}

const auth = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` });

/** Polls `probe` until it returns true, failing after `ms` with a message naming `what`. */
async function until(what: string, ms: number, probe: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await probe()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.fail(`timed out after ${ms} ms waiting for ${what}`);
}

interface Op {
  id: string;
  method: HttpMethod;
  path: string;
}

async function catalog(app: TestApp, token: string): Promise<Op[]> {
  const r = await call(app.url, 'GET', '/openapi.json', undefined, auth(token));
  assert.equal(r.status, 200);
  const ops: Op[] = [];
  for (const [path, methods] of Object.entries(r.body.paths as Record<string, Record<string, { operationId: string }>>))
    for (const [method, op] of Object.entries(methods)) ops.push({ id: op.operationId, method: method.toUpperCase() as HttpMethod, path });
  return ops;
}

const concrete = (path: string): string => path.replace(/\{([^{}]+)\}/g, (_m, n: string) => (n === 'id' ? DUMMY_UUID : `dummy-${n}`));

describe('inbound API keys', () => {
  it('every catalog route has a scope; 401 without a key, 403 without the scope, in the error envelope', TIMEOUT, async (t) => {
    const app = await startAuthed(t);
    const admin = await createKey(app, 'ops', 'admin');
    const reader = await createKey(app, 'dash', 'read');
    const worker = await createKey(app, 'ci', 'sessions');
    const ops = await catalog(app, admin.token);
    assert.ok(ops.length > 80, `catalog has ${ops.length} operations`);
    const uncovered = ops.filter((op) => routeAccess(op) === undefined).map((op) => op.id);
    assert.deepEqual(uncovered, [], 'routes without a scope in ROUTE_SCOPE_RULES');
    let refused403 = 0;
    for (const op of ops) {
      const access = routeAccess(op)!;
      const path = concrete(op.path);
      const body = op.method === 'GET' || op.method === 'DELETE' ? undefined : {};
      const anon = await call(app.url, op.method, path, body);
      if (access === 'public') {
        assert.notEqual(anon.status, 401, `${op.id} is public`);
        continue;
      }
      assert.equal(anon.status, 401, `${op.id} without a key`);
      assert.equal(anon.body.code, 'UNAUTHORIZED', op.id);
      assert.equal(typeof anon.body.error, 'string', op.id);
      assert.match(anon.headers.get('www-authenticate') ?? '', /^Bearer/);
      const wrong = await call(app.url, op.method, path, body, auth('wk_000000000000_' + 'A'.repeat(43)));
      assert.equal(wrong.status, 401, `${op.id} with an unknown key`);
      for (const [key, held] of [
        [reader, ['read']],
        [worker, ['sessions']],
      ] as Array<[{ token: string }, InboundScope[]]>) {
        if (scopeSatisfies(held, access)) continue;
        const r = await call(app.url, op.method, path, body, auth(key.token));
        assert.equal(r.status, 403, `${op.id} with a ${held[0]} key`);
        assert.equal(r.body.code, 'FORBIDDEN', op.id);
        assert.equal(r.body.details.required, access, op.id);
        refused403++;
      }
    }
    assert.ok(refused403 > 30, `${refused403} scope refusals`);
    // A key with the scope gets through to the handler.
    const health = await call(app.url, 'GET', '/health');
    assert.equal(health.status, 200);
    const sessions = await call(app.url, 'GET', '/sessions', undefined, auth(reader.token));
    assert.equal(sessions.status, 200);
    const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' }, auth(worker.token));
    assert.equal(created.status, 200, JSON.stringify(created.body));
  });

  it(
    'CLI create/list/revoke; last use recorded; revoked and expired keys are 401; the token is never echoed, logged or stored',
    TIMEOUT,
    async (t) => {
      const lines: string[] = [];
      let skew = 0;
      const app = await startAuthed(t, lines, {}, () => Date.now() + skew);
      const k = await createKey(app, 'laptop', 'sessions');
      const short = await createKey(app, 'short', 'read', ['--expires-in', '1h']);
      const seen: string[] = [];
      const r1 = await call(app.url, 'POST', '/sessions', { prompt: 'hi' }, auth(k.token));
      assert.equal(r1.status, 200, JSON.stringify(r1.body));
      seen.push(JSON.stringify(r1.body));
      const r2 = await call(app.url, 'GET', '/config', undefined, auth(k.token));
      assert.equal(r2.status, 200);
      seen.push(JSON.stringify(r2.body));
      const r3 = await call(app.url, 'GET', '/sessions', undefined, auth(short.token));
      assert.equal(r3.status, 200);

      const listed = await keys(app, ['list', '--json']);
      assert.equal(listed.code, 0, listed.stderr);
      const list = JSON.parse(listed.stdout).keys as Array<Record<string, unknown>>;
      const mine = list.find((x) => x.id === k.id)!;
      assert.equal(mine.name, 'laptop');
      assert.deepEqual(mine.scopes, ['sessions']);
      assert.equal(typeof mine.last_used_at_ms, 'number', 'last use recorded');
      assert.ok(!listed.stdout.includes(k.token.slice(20)), 'list shows no secret');
      assert.ok(!('hash' in mine) && !('salt' in mine));

      // Expiry: two hours later (the gate's clock moved on) the one-hour key is refused, the other is not.
      skew = 2 * 3_600_000;
      const expired = await call(app.url, 'GET', '/sessions', undefined, auth(short.token));
      assert.equal(expired.status, 401);
      assert.equal(expired.body.error, 'API key expired');
      assert.equal((await call(app.url, 'GET', '/sessions', undefined, auth(k.token))).status, 200);

      // Revoke through the CLI while the server runs: refused within its re-check second.
      const revoked = await keys(app, ['revoke', 'laptop']);
      assert.equal(revoked.code, 0, revoked.stderr);
      await until(
        'the revoked key to be refused',
        10_000,
        async () => (await call(app.url, 'GET', '/sessions', undefined, auth(k.token))).status === 401,
      );
      const after = await call(app.url, 'GET', '/sessions', undefined, auth(k.token));
      assert.equal(after.body.code, 'UNAUTHORIZED');
      assert.equal(after.body.error, 'API key revoked');
      const again = await keys(app, ['list']);
      assert.match(again.stdout, new RegExp(`${k.id}  laptop  sessions  revoked`));

      // The secret part of a token is in no response, no log line and no file of the realm.
      // wk_<id>_<secret>: the secret is base64url, which may itself hold '_'.
      const secret = k.token.slice(`wk_${k.id}_`.length);
      assert.ok(secret.length >= 40, 'the whole secret part');
      for (const body of seen) assert.ok(!body.includes(secret), 'a response carried the token');
      assert.ok(lines.length > 5, 'logs were captured');
      for (const line of lines) assert.ok(!line.includes(secret), `log line carries the token: ${line}`);
      await app.close();
      const realmDir = join(app.stateRoot, 'test-realm');
      const files = await filesUnder(realmDir);
      assert.ok(files.length > 2);
      for (const f of files) {
        if ((await stat(f)).size > 64 * 1024 * 1024) continue;
        const bytes = await readFile(f);
        assert.ok(!bytes.includes(Buffer.from(secret)), `${f} holds the token`);
        assert.ok(!bytes.includes(Buffer.from(k.token)), `${f} holds the token`);
      }
    },
  );

  it(
    'with keys on, mcp/add of an unlisted command and config writes by a sessions key are refused and change nothing',
    TIMEOUT,
    async (t) => {
      const app = await startAuthed(t, [], { mcp: { allowed_commands: ['/usr/local/bin/allowed-mcp'] } });
      const admin = await createKey(app, 'ops', 'admin');
      const worker = await createKey(app, 'ci', 'sessions');
      const created = await call(app.url, 'POST', '/sessions', { prompt: 'hi' }, auth(worker.token));
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      const evil = { name: 'evil', command: 'node', args: ['-e', 'require("fs").writeFileSync("/tmp/pwned","x")'] };
      for (const key of [admin, worker]) {
        const r = await call(
          app.url,
          'POST',
          `/sessions/${id}/mcp/add`,
          { session_id: id, server_config: evil, persisted: true },
          auth(key.token),
        );
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.code, 'FORBIDDEN');
      }
      const adminTry = await call(app.url, 'POST', `/sessions/${id}/mcp/add`, { session_id: id, server_config: evil }, auth(admin.token));
      assert.match(adminTry.body.error, /not allowed.*\[mcp\] allowed_commands/);
      const status = await call(app.url, 'GET', `/sessions/${id}/mcp`, undefined, auth(admin.token));
      assert.equal(status.status, 200);
      assert.ok(!JSON.stringify(status.body).includes('evil'), 'nothing staged');
      // An admin config write cannot plant a stdio command either.
      const planted = await call(app.url, 'PATCH', '/config', { tools: { mcp_servers: [evil] } }, auth(admin.token));
      assert.equal(planted.status, 403, JSON.stringify(planted.body));

      const before = await call(app.url, 'GET', '/config', undefined, auth(admin.token));
      for (const patch of [
        { rest: { host: '0.0.0.0' } },
        { providers: { openai: { base_url: 'http://attacker.example' } } },
        { providers: { openai: { api_key_env: 'HOME' } } },
      ]) {
        const r = await call(app.url, 'PATCH', '/config', patch, auth(worker.token));
        assert.equal(r.status, 403, JSON.stringify(r.body));
        assert.equal(r.body.details.required, 'admin');
      }
      const put = await call(app.url, 'PUT', '/config', { config: {} }, auth(worker.token));
      assert.equal(put.status, 403);
      const afterCfg = await call(app.url, 'GET', '/config', undefined, auth(admin.token));
      assert.deepEqual(afterCfg.body, before.body, 'config unchanged');
      const toml = await readFile(join(app.stateRoot, 'test-realm', 'config.toml'), 'utf8');
      assert.ok(!toml.includes('0.0.0.0') && !toml.includes('attacker'));
    },
  );

  it(
    'the key is the mob principal (self-declared ones dropped); WebSocket /rpc needs a key; unproven peers are refused',
    TIMEOUT,
    async (t) => {
      const app = await startAuthed(t);
      const worker = await createKey(app, 'ci', 'sessions');
      const admin = await createKey(app, 'ops', 'admin');
      const list = { jsonrpc: '2.0', method: 'mob/list', params: {} };
      const anon = await connectRpcSocket(app.url);
      t.after(() => anon.ws.close());
      anon.send({ ...list, id: 7 });
      const refused = await anon.next();
      assert.equal(refused.id, 7);
      assert.equal(refused.error.code, -32030);
      assert.equal(refused.error.data.code, 'UNAUTHORIZED');
      // A sessions key is the principal key:<id>, which holds no mob grant: sending no principal header (the
      // keyless owner) or naming another principal changes nothing.
      for (const extra of [{}, { 'x-warren-principal': 'someone-else' }] as Array<Record<string, string>>) {
        const ws = await connectRpcSocket(app.url, { ...auth(worker.token), ...extra });
        t.after(() => ws.ws.close());
        ws.send({ ...list, id: 8 });
        const reply = await ws.next();
        assert.equal(reply.error?.code, -32025, JSON.stringify(reply));
        assert.equal(reply.error?.data?.required ?? reply.error?.data?.details?.required ?? 'MobRead', 'MobRead');
      }
      const rest = await call(app.url, 'POST', '/rpc', { ...list, id: 9 }, auth(worker.token));
      assert.equal(rest.body.error?.code, -32025, JSON.stringify(rest.body));
      // An admin key is the mob owner.
      const owner = await connectRpcSocket(app.url, auth(admin.token));
      t.after(() => owner.ws.close());
      owner.send({ ...list, id: 10 });
      const ok = await owner.next();
      assert.equal(ok.error, undefined, JSON.stringify(ok));
      // A request claiming to come from a cluster peer without the realm secret's proof is refused, key or not.
      for (const headers of [{ 'x-warren-forwarded-by': 'node-x' }, { ...auth(admin.token), 'x-warren-forwarded-by': 'node-x' }]) {
        const r = await call(app.url, 'GET', '/sessions', undefined, headers);
        assert.equal(r.status, 401);
        assert.equal(r.body.error, 'cluster peer authentication failed');
      }
    },
  );

  it('a start on 0.0.0.0 without keys exits with its reason; loopback without auth config stays keyless', TIMEOUT, async (t) => {
    const dir = await tmpDir('warren-noauth-');
    t.after(() => dir.cleanup());
    const r = await run(['serve', '--host', '0.0.0.0', '--port', '0', '--state-root', dir.path, '--realm', 'open']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /refusing to listen on 0\.0\.0\.0 without API keys: create one with 'warren keys create'/);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    const keyless = await startApp(t);
    assert.equal((await call(keyless.url, 'GET', '/sessions')).status, 200);
  });
});
