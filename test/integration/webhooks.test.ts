// test/integration/webhooks.test.ts: signed outbound webhooks (Warren extension) through the real server:
// subscriptions over REST, signatures verified by a loopback receiver with the standardwebhooks package,
// retries after 500s and hangs, a receiver restart, dead-lettering, ordering per session, and secrets
// never shown. Kill -9 and the many-turn run are in webhooks-durability.test.ts.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { call, createSession, startApp, type TestApp } from '../helpers/app.ts';
import { newSecret, settled, startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { poll } from '../helpers/wait.ts';

// The delivery timeout only has to end the "hang" case; a loaded machine must never turn a real answer into one.
const FAST = { webhook_initial_backoff_ms: 5, webhook_max_backoff_ms: 40, webhook_timeout_ms: 3_000 };

async function tune(app: TestApp, extensions: Record<string, number>): Promise<void> {
  const res = await call(app.url, 'PATCH', '/config', { extensions });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

async function subscribe(app: TestApp, receiver: Receiver, secret: string, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await call(app.url, 'POST', '/webhooks', { url: receiver.url, secret, ...extra });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.id;
}

async function receiverFor(t: TestContext, decide?: Receiver['decide']) {
  const secret = newSecret();
  const receiver = await startReceiver(secret, decide);
  t.after(() => receiver.stop());
  return { secret, receiver };
}

for (const transport of ['node', 'uws'] as const) {
  describe(`webhooks over ${transport}`, () => {
    it('delivers run_completed signed per Standard Webhooks, in order, and never shows the secret', async (t) => {
      const app = await startApp(t, [], { httpTransport: transport });
      const { secret, receiver } = await receiverFor(t);
      const id = await subscribe(app, receiver, secret);
      const list = await call(app.url, 'GET', '/webhooks');
      assert.equal(list.status, 200);
      assert.equal(JSON.stringify(list.body).includes(secret), false);
      assert.deepEqual(list.body.webhooks[0], {
        id,
        url: receiver.url,
        events: ['run_completed', 'run_failed'],
        source: 'api',
        secret_source: 'stored',
        created_at: list.body.webhooks[0].created_at,
      });
      const sid = await createSession(app.url, { prompt: 'one' });
      await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'two' });
      await receiver.until((r) => r.length >= 2);
      assert.deepEqual(
        receiver.received.map((r) => [r.verified, r.body.type, r.body.data.session_id]),
        [
          [true, 'run_completed', sid],
          [true, 'run_completed', sid],
        ],
      );
      assert.ok(receiver.received[0].body.data.seq < receiver.received[1].body.data.seq);
      assert.equal(receiver.received[1].body.data.payload.result, 'echo: two');
      const deliveries = await settled(app.url, id, 2);
      assert.deepEqual(
        deliveries.map((d) => [d.status, d.attempts, d.event, d.webhook_id]),
        receiver.received.map((r) => ['delivered', 1, 'run_completed', r.id]),
      );
      assert.equal(JSON.stringify(deliveries).includes(secret), false);
    });
  });
}

describe('webhook delivery', () => {
  it('retries after 500 and after a hang (bounded by the delivery timeout), keeping one webhook-id', async (t) => {
    const app = await startApp(t);
    await tune(app, FAST);
    const { secret, receiver } = await receiverFor(t, (_r, i) => (i === 0 ? 500 : i === 1 ? 'hang' : 200));
    const id = await subscribe(app, receiver, secret);
    await createSession(app.url);
    await receiver.until((r) => r.length >= 3);
    assert.equal(new Set(receiver.received.map((r) => r.id)).size, 1);
    assert.ok(receiver.received.every((r) => r.verified));
    const [d] = await settled(app.url, id, 1);
    assert.equal(d.status, 'delivered');
    assert.equal(d.attempts, 3);
  });

  it("keeps a session's deliveries in order while its head is retried, and dead-letters after max attempts", async (t) => {
    const app = await startApp(t);
    await tune(app, { ...FAST, webhook_max_attempts: 2 });
    // The first event fails twice (dead); the second arrives only after that.
    const { secret, receiver } = await receiverFor(t, (r) => (r.body.data.payload.result === 'echo: one' ? 500 : 200));
    const id = await subscribe(app, receiver, secret);
    const sid = await createSession(app.url, { prompt: 'one' });
    await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'two' });
    await receiver.until((r) => r.some((x) => x.answer === 200));
    assert.deepEqual(
      receiver.received.map((r) => [r.body.data.payload.result, r.answer]),
      [
        ['echo: one', 500],
        ['echo: one', 500],
        ['echo: two', 200],
      ],
    );
    const list = await settled(app.url, id, 2);
    assert.deepEqual(
      list.map((d) => [d.status, d.attempts]),
      [
        ['dead', 2],
        ['delivered', 1],
      ],
    );
    assert.equal(list[0].last_status_code, 500);
    const dead = await call(app.url, 'GET', `/webhooks/${id}/deliveries?status=dead`);
    assert.equal(dead.body.deliveries.length, 1);
  });

  it('delivers once the receiver comes back after a restart', async (t) => {
    const app = await startApp(t);
    await tune(app, FAST);
    const { secret, receiver } = await receiverFor(t);
    const id = await subscribe(app, receiver, secret);
    await receiver.stop();
    await createSession(app.url);
    await poll('the first delivery to be attempted twice while the receiver is down', async () => {
      const res = await call(app.url, 'GET', `/webhooks/${id}/deliveries`);
      return res.body.deliveries[0]?.attempts >= 2;
    });
    await receiver.restart();
    await receiver.until((r) => r.length >= 1);
    const [d] = await settled(app.url, id, 1);
    assert.equal(d.status, 'delivered');
    assert.ok((d.attempts as number) >= 3);
  });

  it('filters by event kind and session labels; run_failed is delivered', async (t) => {
    const app = await startApp(t, [{ text: 'ok' }, { error: { code: 'PROVIDER_ERROR', message: 'boom' } }]);
    const { secret, receiver } = await receiverFor(t);
    await subscribe(app, receiver, secret, { events: ['run_failed'], session_labels: { team: 'a' } });
    const sid = await createSession(app.url, { prompt: 'x', labels: { team: 'a' } });
    await call(app.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: 'y' });
    await createSession(app.url, { prompt: 'z', labels: { team: 'b' } });
    await receiver.until((r) => r.length >= 1);
    assert.equal(receiver.received[0].body.type, 'run_failed');
    assert.equal(receiver.received[0].body.data.session_id, sid);
  });

  it('answers bad input and unknown ids with the error envelope; config subscriptions cannot be deleted over REST', async (t) => {
    const app = await startApp(t);
    const bad = await call(app.url, 'POST', '/webhooks', { url: 'ftp://x', secret: 'nope' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'BAD_REQUEST');
    const both = await call(app.url, 'POST', '/webhooks', { url: 'http://127.0.0.1:1/x', secret: newSecret(), secret_env: 'X' });
    assert.equal(both.status, 400);
    assert.equal((await call(app.url, 'DELETE', '/webhooks/nope')).body.code, 'NOT_FOUND');
    assert.equal((await call(app.url, 'GET', '/webhooks/nope/deliveries')).status, 404);
    await call(app.url, 'PATCH', '/config', { webhooks: [{ id: 'cfg', url: 'http://127.0.0.1:1/x', secret_env: 'HOOK_SECRET' }] });
    const del = await call(app.url, 'DELETE', '/webhooks/cfg');
    assert.equal(del.status, 409);
    const ext = await call(app.url, 'GET', '/warren/extensions');
    assert.equal(ext.status, 200);
    assert.ok(ext.body.extensions.some((e: { name: string }) => e.name === 'webhooks'));
    const spec = await call(app.url, 'GET', '/openapi.json');
    assert.ok(spec.body.paths['/webhooks/{id}/deliveries']);
    assert.ok(spec.body.paths['/warren/extensions']);
  });

  it('works on a memory realm too', async (t) => {
    const app = await startApp(t, [], { realmBackend: 'memory', realm: 'mem-realm' });
    const { secret, receiver } = await receiverFor(t);
    const id = await subscribe(app, receiver, secret);
    await createSession(app.url);
    await receiver.until((r) => r.length >= 1);
    assert.equal((await settled(app.url, id, 1))[0].status, 'delivered');
  });
});
