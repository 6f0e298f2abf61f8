// Outbound URL rules (actors/net/outbound-guard.ts) through the real server: webhook and MCP url servers on
// 169.254.169.254, on a name that resolves there (an injected resolver stands in for DNS) and, with
// `[network] deny_cidrs` naming loopback, on a name resolving to loopback are refused with a reason; a
// failed MCP connection reports the HTTP status, never the target's body; loopback works by default.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { call, createSession, startApp } from '../helpers/app.ts';
import { newSecret, settled, startReceiver } from '../helpers/webhook-receiver.ts';

/** A hosts mapping: the names the tests use, nothing else. */
const HOSTS: Record<string, LookupAddress> = {
  'metadata-alias.test': { address: '169.254.169.254', family: 4 },
  'receiver.test': { address: '127.0.0.1', family: 4 },
};
async function resolver(hostname: string): Promise<LookupAddress[]> {
  const hit = HOSTS[hostname];
  if (!hit) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return [hit];
}

const SECRET_BODY = 'TARGET-PRIVATE-BODY-7f3a';

describe('outbound URL rules', () => {
  it('refuses webhook urls on metadata addresses, literal or resolved, with the reason', async (t) => {
    const app = await startApp(t, [], { outboundResolver: resolver });
    const literal = await call(app.url, 'POST', '/webhooks', { url: 'http://169.254.169.254/latest/meta-data', secret: newSecret() });
    assert.equal(literal.status, 400, JSON.stringify(literal.body));
    assert.match(literal.body.error, /address 169\.254\.169\.254 is in 169\.254\.0\.0\/16/);
    const named = await call(app.url, 'POST', '/webhooks', { url: 'http://metadata-alias.test/x', secret: newSecret() });
    assert.equal(named.status, 400, JSON.stringify(named.body));
    assert.match(named.body.error, /metadata-alias\.test resolves to a refused address: address 169\.254\.169\.254/);
    const gcp = await call(app.url, 'POST', '/webhooks', { url: 'http://metadata.google.internal/x', secret: newSecret() });
    assert.equal(gcp.status, 400);
    assert.equal((await call(app.url, 'GET', '/webhooks')).body.webhooks.length, 0, 'nothing was stored');
  });

  it('checks the resolved address at connect time: a name re-pointed at a denied range stops delivering', async (t) => {
    const app = await startApp(t, [], { outboundResolver: resolver });
    const secret = newSecret();
    const receiver = await startReceiver(secret);
    t.after(() => receiver.stop());
    const port = new URL(receiver.url).port;
    assert.equal(
      (
        await call(app.url, 'PATCH', '/config', {
          extensions: { webhook_initial_backoff_ms: 5, webhook_max_backoff_ms: 20, webhook_max_attempts: 2 },
        })
      ).status,
      200,
    );
    const created = await call(app.url, 'POST', '/webhooks', { url: `http://receiver.test:${port}/hook`, secret });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await createSession(app.url, { prompt: 'one' });
    await receiver.until((r) => r.length >= 1);
    assert.equal((await settled(app.url, created.body.id, 1))[0].status, 'delivered');

    // The operator now denies loopback: the same name (resolving to 127.0.0.1) is refused when connecting.
    assert.equal((await call(app.url, 'PATCH', '/config', { network: { deny_cidrs: ['127.0.0.0/8'] } })).status, 200);
    await createSession(app.url, { prompt: 'two' });
    const list = await settled(app.url, created.body.id, 2);
    const failed = list.find((d) => d.status !== 'delivered');
    assert.ok(failed, JSON.stringify(list));
    assert.equal(failed.status, 'dead');
    assert.match(String(failed.last_error), /address 127\.0\.0\.1 is in 127\.0\.0\.0\/8 of \[network\] deny_cidrs/);
    assert.equal(receiver.received.length, 1, 'the receiver saw only the delivery made before the deny');
  });

  it('refuses MCP url servers on metadata addresses and never reflects a failed target body', async (t) => {
    const target = createServer((_req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(SECRET_BODY);
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => target.close(() => r())));
    const targetUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}/mcp`;
    const app = await startApp(t, [{ text: 'created' }], {
      outboundResolver: resolver,
      config: {
        tools: {
          mcp_servers: [
            { name: 'meta', url: 'http://169.254.169.254/mcp', connect_timeout_secs: 5 },
            { name: 'alias', url: 'http://metadata-alias.test/mcp', connect_timeout_secs: 5 },
            { name: 'leaky', url: targetUrl, connect_timeout_secs: 5 },
          ],
        },
      },
    });
    const id = await createSession(app.url);
    const r = await call(app.url, 'GET', `/sessions/${id}/mcp?wait=settled`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    const byName = Object.fromEntries(
      (r.body.servers as Array<{ name: string; state: string; error?: { message: string } }>).map((s) => [s.name, s]),
    );
    assert.equal(byName.meta.state, 'failed');
    assert.match(byName.meta.error!.message, /address 169\.254\.169\.254 is in 169\.254\.0\.0\/16/);
    assert.equal(byName.alias.state, 'failed');
    assert.match(byName.alias.error!.message, /metadata-alias\.test refused: address 169\.254\.169\.254/);
    assert.equal(byName.leaky.state, 'failed');
    assert.match(byName.leaky.error!.message, /HTTP 500/);
    assert.equal(JSON.stringify(r.body).includes(SECRET_BODY), false, 'the target body is not reflected');
  });

  it('refuses a provider base_url on a metadata address with the reason', async (t) => {
    const app = await startApp(t, [], {
      outboundResolver: resolver,
      config: {
        retry: { max_retries: 0 },
        providers: { self_hosted: { base_url: 'http://metadata-alias.test/v1', default_model: 'local-model' } },
      },
    });
    const r = await call(app.url, 'POST', '/sessions', { prompt: 'hi', provider: 'self_hosted', model: 'local-model' });
    assert.notEqual(r.status, 200);
    assert.match(JSON.stringify(r.body), /metadata-alias\.test refused: address 169\.254\.169\.254 is in 169\.254\.0\.0\/16/);
  });
});
