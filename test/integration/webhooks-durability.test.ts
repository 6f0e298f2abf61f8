// test/integration/webhooks-durability.test.ts: the webhook outbox across kill -9 of a real `warren serve`
// process (a committed turn always produces its delivery; a delivery cut off mid-flight is re-sent after
// restart with the same webhook-id), and a many-turn run against a receiver failing a third of its
// requests: every delivery acknowledged, none lost. WARREN_WEBHOOK_TURNS sets the turn count (default 300).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call, startApp } from '../helpers/app.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { newSecret, settled, startReceiver } from '../helpers/webhook-receiver.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const TURNS = Number(process.env.WARREN_WEBHOOK_TURNS ?? 300);

describe('webhook outbox durability', () => {
  it('delivers after SIGKILL: committed turns while the receiver was down, and a delivery cut off mid-flight keeps its webhook-id', async (t) => {
    const secret = newSecret();
    let hang = true;
    const receiver = await startReceiver(secret, () => (hang ? 'hang' : 200));
    t.after(() => receiver.stop());
    const dir = await tmpDir('warren-wh-kill-');
    t.after(() => dir.cleanup());
    const realm = 'wh-kill';
    await writeRealmConfig(dir.path, realm, {
      providers: { scripted: { mode: 'echo' } },
      webhooks: [{ id: 'k', url: receiver.url, secret_env: 'HOOK_SECRET' }],
      extensions: { webhook_timeout_ms: 120_000, webhook_initial_backoff_ms: 5, webhook_max_backoff_ms: 50 },
    });
    const env = { ...process.env, HOOK_SECRET: secret };
    const first = await startServerProcess({ stateRoot: dir.path, realm, env, t });
    const created = await call(first.url, 'POST', '/sessions', { prompt: 'one', provider: 'scripted' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const sid = created.body.session_id as string;
    for (const p of ['two', 'three']) {
      const r = await call(first.url, 'POST', `/sessions/${sid}/messages`, { session_id: sid, prompt: p });
      assert.equal(r.status, 200);
    }
    // The first delivery is in flight (the receiver holds it); the other two wait behind it in the lane.
    await receiver.until((r) => r.length >= 1);
    const cutOff = receiver.received[0].id;
    await first.kill('SIGKILL');
    assert.equal(first.stderr().includes(secret), false);
    assert.equal(
      first.logs.some((l) => JSON.stringify(l).includes(secret)),
      false,
    );
    hang = false;
    const second = await startServerProcess({ stateRoot: dir.path, realm, env, t });
    await receiver.until((r) => r.filter((x) => x.answer === 200).length >= 3);
    assert.equal(receiver.acked[0], cutOff);
    assert.deepEqual(
      receiver.received.filter((x) => x.answer === 200).map((x) => x.body.data.payload.result),
      ['echo: one', 'echo: two', 'echo: three'],
    );
    assert.ok(receiver.received.every((x) => x.verified));
    const list = await settled(second.url, 'k', 3);
    assert.deepEqual(
      list.map((d) => d.status),
      ['delivered', 'delivered', 'delivered'],
    );
    await second.kill('SIGKILL');
  });

  it(
    `${TURNS} turns against a receiver failing a third of its requests: every delivery acknowledged exactly once by webhook-id`,
    { timeout: SLOW_TEST_MS },
    async (t) => {
      const app = await startApp(t);
      await call(app.url, 'PATCH', '/config', {
        extensions: { webhook_initial_backoff_ms: 1, webhook_max_backoff_ms: 20, webhook_max_attempts: 50 },
      });
      const secret = newSecret();
      const receiver = await startReceiver(secret, (_r, i) => (i % 3 === 0 ? 500 : 200));
      t.after(() => receiver.stop());
      const sub = await call(app.url, 'POST', '/webhooks', { url: receiver.url, secret });
      const SESSIONS = 10;
      const perSession = Math.ceil(TURNS / SESSIONS);
      await Promise.all(
        Array.from({ length: SESSIONS }, async (_, s) => {
          const c = await call(app.url, 'POST', '/sessions', { prompt: `s${s} t0` });
          assert.equal(c.status, 200);
          for (let i = 1; i < perSession; i++) {
            const r = await call(app.url, 'POST', `/sessions/${c.body.session_id}/messages`, {
              session_id: c.body.session_id,
              prompt: `s${s} t${i}`,
            });
            assert.equal(r.status, 200);
          }
        }),
      );
      const total = SESSIONS * perSession;
      const list = await settled(app.url, sub.body.id, total);
      assert.equal(list.length, total);
      assert.ok(list.every((d) => d.status === 'delivered'));
      const ids = new Set(list.map((d) => d.webhook_id as string));
      assert.equal(ids.size, total);
      const acked = new Set(receiver.acked);
      assert.deepEqual(
        [...ids].filter((id) => !acked.has(id)),
        [],
      );
      // No acknowledged id was sent again (duplicates would be allowed on the wire, but none is needed here).
      assert.equal(receiver.acked.length, total);
      assert.ok(receiver.received.every((r) => r.verified));
      // Per session, acknowledged in seq order.
      const bySession = new Map<string, number[]>();
      for (const r of receiver.received)
        if (r.answer === 200) bySession.set(r.body.data.session_id, [...(bySession.get(r.body.data.session_id) ?? []), r.body.data.seq]);
      for (const seqs of bySession.values())
        assert.deepEqual(
          seqs,
          [...seqs].sort((a, b) => a - b),
        );
    },
  );
});
