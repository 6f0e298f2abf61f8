// Nothing secret can land in an export (docs/replay.md "What an export leaves out"). One server holds a
// secret in every place Warren keeps one, and each is in use while the session runs on the real Anthropic
// adapter against a loopback vendor: the provider key (environment), a stored auth profile (a turn bound to
// it), the inbound API key every request carries (`[rest] auth = "required"`), `[tools] mcp_servers` with a
// header (HTTP) and an env value (stdio), a session's persisted MCP server with a header, a webhook
// subscription's signing secret, a `[hooks]` entry's header, and `[record] raw_streams` on. The session's
// export, and its fork's, hold none of their bytes (nor the webhook secret's base64 body, nor the hook
// header's unkeyed hash), and every hook hash in the file is keyed under the file's own salt.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { hookSummary } from '../../actors/replay/hook-summary.ts';
import { startHookServer } from '../helpers/hook-fixtures.ts';
import { createKey } from '../helpers/keys-cli.ts';
import { startHttpMcpServer, stdioServer } from '../helpers/mcp-servers.ts';
import { startFakeVendor } from '../providers/fake-vendor.ts';
import { textResponder, toolCallResponder } from '../helpers/vendor-replies.ts';
import { newSecret } from '../helpers/webhook-receiver.ts';
import type { HookEntryConfig } from '../../contracts/turn-features.ts';

const R = 'test-realm';
const S = {
  providerKey: 'sk-ant-ENVKEY-3b9f0e71',
  profile: 'sk-ant-PROFILE-c41d7a58',
  mcpHeader: 'MCPHEADER-9d0e6f21',
  mcpEnv: 'MCPENV-52a8c3d0',
  addedHeader: 'ADDEDHEADER-e7b14c93',
  hookHeader: 'HOOKHEADER-0af3d6b2',
};

describe('an export carries no secret from any place Warren keeps one', () => {
  it('provider key, auth profile, inbound key, MCP headers and env, webhook secret and hook header stay out of the file', async (t) => {
    const vendor = await startFakeVendor([
      textResponder('anthropic', 'Zero.'),
      toolCallResponder('anthropic', { id: 'c1', name: 'mcp__remote__echo', args: { text: 'one' } }),
      textResponder('anthropic', 'One.'),
      toolCallResponder('anthropic', { id: 'c2', name: 'mcp__local__echo', args: { text: 'two' } }),
      textResponder('anthropic', 'Two.'),
      toolCallResponder('anthropic', { id: 'c3', name: 'mcp__added__echo', args: { text: 'three' } }),
      textResponder('anthropic', 'Three.'),
    ]);
    t.after(() => vendor.close());
    const remote = await startHttpMcpServer('remote');
    t.after(() => remote.close());
    const added = await startHttpMcpServer('added');
    t.after(() => added.close());
    const hookServer = await startHookServer();
    t.after(() => hookServer.close());
    const hookEntry = {
      id: 'audit',
      point: 'pre_llm_request',
      runtime: { type: 'http', url: hookServer.url, headers: { authorization: `Bearer ${S.hookHeader}` } },
    };
    const app = await startApp(t, [], {
      providerOverrides: {},
      env: { PATH: process.env.PATH, ANTHROPIC_API_KEY: S.providerKey, ANTHROPIC_BASE_URL: vendor.url },
      config: {
        rest: { auth: 'required' },
        record: { raw_streams: true },
        hooks: { entries: [hookEntry] },
        tools: {
          mcp_servers: [
            { name: 'remote', url: remote.url, headers: { authorization: `Bearer ${S.mcpHeader}` } },
            stdioServer('local', 'serve', { env: { SERVICE_TOKEN: S.mcpEnv } }),
          ],
        },
        realm: {
          [R]: {
            backend: { fake: { provider: 'anthropic', base_url: vendor.url } },
            binding: { claude: { backend_profile: 'fake' } },
          },
        },
      },
    });
    const inbound = await createKey(app, 'exporter', 'admin');
    const auth = { authorization: `Bearer ${inbound}` };
    const api = async (method: string, path: string, body?: unknown, status = 200) => {
      const r = await call(app.url, method, path, body, auth);
      assert.equal(r.status, status, `${method} ${path}: ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const webhookSecret = newSecret();
    await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/hook', secret: webhookSecret }, 201);
    await api(
      'POST',
      '/auth/profiles',
      { realm_id: R, binding_id: 'claude', provider: 'anthropic', auth_method: 'api_key', secret: S.profile },
      201,
    );

    // Turn 1 on the environment key with the config MCP HTTP server (connected after the create turn);
    // turn 2 bound to the stored profile, with the stdio server; turn 3 with a persisted session MCP server
    // carrying its own header.
    const id = (await api('POST', '/sessions', { prompt: 'zero', provider: 'anthropic', enable_builtins: true })).session_id as string;
    await api('GET', `/sessions/${id}/mcp?wait=settled`);
    await api('POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'one' });
    await api('POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two', auth_binding: { realm: R, binding: 'claude' } });
    await api('POST', `/sessions/${id}/mcp/add`, {
      session_id: id,
      persisted: true,
      server_config: { name: 'added', url: added.url, headers: { 'x-api-key': S.addedHeader } },
    });
    await api('GET', `/sessions/${id}/mcp?wait=settled`);
    await api('POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'three' });

    // Every secret was in use: sent to the vendor, the MCP servers and the hook.
    const keys = vendor.requests.map((r) => r.headers['x-api-key']);
    assert.ok(keys.includes(S.providerKey) && keys.includes(S.profile), `the vendor saw both keys: ${keys.join()}`);
    assert.ok(JSON.stringify(remote.seenHeaders).includes(S.mcpHeader), 'the config MCP server got its header');
    assert.ok(JSON.stringify(added.seenHeaders).includes(S.addedHeader), 'the session MCP server got its header');
    assert.ok(JSON.stringify(hookServer.payloads.map((p) => p._headers)).includes(S.hookHeader), 'the hook got its header');
    const history = JSON.stringify(await api('GET', `/sessions/${id}/history?limit=100`));
    for (const label of ['remote: one', 'local: two', 'added: three']) assert.ok(history.includes(label), `the ${label} tool ran`);

    // A fork's own recordings are exported too (the same keying, a fresh salt).
    const fork = (await api('POST', `/sessions/${id}/fork`, {})).session_id as string;
    const connections = vendor.requests.length;

    const planted: Record<string, string> = {
      ...S,
      inbound,
      webhook: webhookSecret,
      'webhook (base64 body)': webhookSecret.replace(/^whsec_/, ''),
      // The hook header's unkeyed hash, as the realm's own store keeps it: an export keys it.
      'hook header (unkeyed hash)': (hookSummary([hookEntry as HookEntryConfig])[0] as any).runtime.headers.authorization,
    };
    const exports: string[] = [];
    for (const session of [id, fork]) {
      const res = await fetch(`${app.url}/sessions/${session}/export`, { headers: auth });
      assert.equal(res.status, 200);
      const file = await res.text();
      exports.push(file);
      for (const [what, secret] of Object.entries(planted))
        assert.ok(!file.includes(secret), `the ${what} is not in the export of ${session}`);
      assert.ok(!/Bearer /i.test(file), 'no authorization value at all');
      const salt = (JSON.parse(file.split('\n')[0]) as { hook_digest: { salt: string } }).hook_digest.salt;
      assert.match(salt, /^[0-9a-f]{32}$/);
      assert.ok(file.includes(`"hook_salt":"${salt}"`), "the hooked recordings carry the header's salt");
    }
    const keyedOf = (file: string) => file.match(/"authorization":"(hmac:[0-9a-f]{16})"/)?.[1];
    assert.notEqual(keyedOf(exports[0]), keyedOf(exports[1]), 'the same header hashes differently in each export');
    assert.match(exports[0], /"raw":\[/, 'raw stream frames are exported');
    assert.ok(!/"sha256:[0-9a-f]{16}"/.test(exports[0]), 'no unkeyed hook hash is left');
    assert.match(exports[0], /"authorization":"hmac:[0-9a-f]{16}"/, 'the hook header is there as a keyed hash');
    assert.equal(vendor.requests.length, connections, 'the exports called no model');
  });
});
