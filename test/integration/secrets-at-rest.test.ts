// Secrets at rest and in the open, through the real server: planted secrets (a webhook signing secret, an
// MCP server's header and env values, config and persisted) appear in no response, no log line and no
// byte of the realm directory; GET /config masks MCP headers/env and a config written back with `***`
// keeps them; `api_key_env = "HOME"` is refused with nothing written; realm directories are 0700 and
// config and store files 0600.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createLogger } from '../../config/logger.ts';
import { call, createSession, startApp } from '../helpers/app.ts';
import { newSecret } from '../helpers/webhook-receiver.ts';
import { filesUnder } from '../helpers/files-under.ts';

const HEADER_SECRET = 'hdr-PLANTED-8c1e2b';
const ENV_SECRET = 'env-PLANTED-51d0aa';
const ADDED_HEADER_SECRET = 'added-hdr-PLANTED-93fe';

async function dirsUnder(dir: string): Promise<string[]> {
  const out: string[] = [dir];
  for (const e of await readdir(dir, { withFileTypes: true })) if (e.isDirectory()) out.push(...(await dirsUnder(join(dir, e.name))));
  return out;
}

describe('secrets at rest', () => {
  it('keeps planted secrets out of responses, logs and store files; masks /config; narrows modes', async (t) => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const logger = createLogger({ level: 'debug', destination: sink });
    const webhookSecret = newSecret();
    const app = await startApp(t, [{ text: 'created' }], {
      logger,
      config: {
        tools: {
          mcp_servers: [
            {
              name: 'remote',
              url: 'http://127.0.0.1:9/mcp',
              headers: { authorization: `Bearer ${HEADER_SECRET}` },
              connect_timeout_secs: 2,
            },
            { name: 'local', command: 'definitely-not-a-command-x', env: { SERVICE_TOKEN: ENV_SECRET }, connect_timeout_secs: 2 },
          ],
        },
      },
    });
    const replies: string[] = [];
    const api = async (method: string, path: string, body?: unknown) => {
      const r = await call(app.url, method, path, body);
      replies.push(JSON.stringify(r.body));
      return r;
    };

    // api_key_env must name a provider key: HOME is refused, nothing written.
    const before = await api('GET', '/config');
    const configPath = join(app.stateRoot, 'test-realm', 'config.toml');
    const fileBefore = await readFile(configPath, 'utf8');
    for (const name of ['HOME', 'AWS_SECRET_ACCESS_KEY', 'PATH']) {
      const bad = await api('PATCH', '/config', { providers: { openai: { api_key_env: name } } });
      assert.equal(bad.status, 400, `${name}: ${JSON.stringify(bad.body)}`);
    }
    assert.equal(await readFile(configPath, 'utf8'), fileBefore, 'nothing written');
    assert.equal((await api('GET', '/config')).body.generation, before.body.generation);
    assert.equal((await api('PATCH', '/config', { providers: { openai: { api_key_env: 'MY_OPENAI_API_KEY' } } })).status, 200);

    // GET /config masks MCP headers and env; written back, the stored values stay.
    const shown = (await api('GET', '/config')).body;
    const servers = shown.config.tools.mcp_servers as Array<{
      name: string;
      headers?: Record<string, string>;
      env?: Record<string, string>;
    }>;
    assert.deepEqual(servers.find((s) => s.name === 'remote')?.headers, { authorization: '***' });
    assert.deepEqual(servers.find((s) => s.name === 'local')?.env, { SERVICE_TOKEN: '***' });
    const put = await api('PUT', '/config', { config: shown.config });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    const written = await readFile(configPath, 'utf8');
    assert.ok(written.includes(HEADER_SECRET) && written.includes(ENV_SECRET), 'config.toml keeps the stored values');

    // A webhook secret and a persisted MCP server's header: sealed in the store.
    const hook = await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', secret: webhookSecret });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const id = await createSession(app.url);
    const added = await api('POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      persisted: true,
      server_config: {
        name: 'added',
        url: 'http://127.0.0.1:9/mcp',
        headers: { 'x-api-key': ADDED_HEADER_SECRET },
        connect_timeout_secs: 2,
      },
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    await api('GET', `/sessions/${id}/mcp?wait=settled`);
    await api('GET', '/webhooks');
    await app.close();

    const planted = [webhookSecret, webhookSecret.replace(/^whsec_/, ''), HEADER_SECRET, ENV_SECRET, ADDED_HEADER_SECRET];
    for (const s of planted) {
      assert.equal(
        replies.some((r) => r.includes(s)),
        false,
        `no response carries ${s}`,
      );
      assert.equal(
        lines.some((l) => l.includes(s)),
        false,
        `no log line carries ${s}`,
      );
    }
    const realmDir = join(app.stateRoot, 'test-realm');
    for (const file of await filesUnder(realmDir)) {
      const bytes = await readFile(file);
      const isConfig = file === configPath;
      for (const s of [webhookSecret, ADDED_HEADER_SECRET, ...(isConfig ? [] : [HEADER_SECRET, ENV_SECRET])]) {
        assert.equal(bytes.includes(Buffer.from(s)), false, `${file} does not hold ${s}`);
      }
      assert.equal((await stat(file)).mode & 0o777, 0o600, `${file} is 0600`);
    }
    for (const dir of await dirsUnder(realmDir)) assert.equal((await stat(dir)).mode & 0o777, 0o700, `${dir} is 0700`);
  });
});
