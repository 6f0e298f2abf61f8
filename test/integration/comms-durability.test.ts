// test/integration/comms-durability.test.ts: admission is durable (SPEC.md "Webhook admissions";
// "Limits": durability). 1,000 external events posted concurrently to a real `warren serve` process,
// killed with SIGKILL in the middle of the flood and again in the middle of the turn consuming them;
// after each restart every acknowledged event is delivered exactly once (as injected context of the
// turn that commits it), an event whose request died with the process at most once, and none again.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/app.ts';
import { historyOf } from '../helpers/comms.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { openEvents } from '../helpers/sse-client.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const EVENTS = 1000;
const CONCURRENCY = 32;
const KILL_AFTER = 400;

async function postEvent(url: string, id: string, n: number): Promise<number> {
  const res = await fetch(`${url}/sessions/${id}/external-events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ kind: 'generic_json', event_type: 'flood', payload: { n } }),
  });
  await res.arrayBuffer();
  return res.status;
}

/** Event numbers in the injected-context rows of the history, in order. */
async function delivered(url: string, id: string): Promise<number[]> {
  return (await historyOf(url, id))
    .filter((r) => r.transcript_role === 'injected_context')
    .map((r) => (JSON.parse(String(r.content).replace(/^\[external event flood\] /, '')) as { n: number }).n);
}

describe('durable admission across kill -9', () => {
  it('1,000 concurrent external events: none lost, none duplicated', { timeout: 120_000 }, async (t) => {
    const dir = await tmpDir('warren-comms-kill-');
    t.after(() => dir.cleanup());
    const realm = 'flood';
    await writeRealmConfig(dir.path, realm, { providers: { scripted: { mode: 'echo' } } });
    let server = await startServerProcess({ stateRoot: dir.path, realm, t });
    const created = await call(server.url, 'POST', '/sessions', { prompt: 'collect', provider: 'scripted' });
    assert.equal(created.status, 200);
    const id: string = created.body.session_id;

    // Phase 1: the flood, killed once KILL_AFTER events are acknowledged.
    const acked = new Set<number>();
    const uncertain = new Set<number>();
    let next = 0;
    let killing: Promise<unknown> | null = null;
    const first = server;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (!killing && next < EVENTS) {
          const n = next++;
          try {
            const status = await postEvent(first.url, id, n);
            assert.equal(status, 202);
            acked.add(n);
            if (acked.size >= KILL_AFTER) killing ??= first.kill('SIGKILL');
          } catch {
            uncertain.add(n);
          }
        }
      }),
    );
    await killing;
    assert.ok(acked.size >= KILL_AFTER);

    // Phase 2: restart, admit the events never sent, then kill in the middle of the consuming turn.
    await writeRealmConfig(dir.path, realm, { providers: { scripted: { replies: [{ text: 'never finishes', delay_ms: 600_000 }] } } });
    server = await startServerProcess({ stateRoot: dir.path, realm, t });
    const rest = Array.from({ length: EVENTS - next }, (_, i) => next + i);
    const second = server;
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let n = rest.shift(); n !== undefined; n = rest.shift()) {
          assert.equal(await postEvent(second.url, id, n), 202);
          acked.add(n);
        }
      }),
    );
    const sse = await openEvents(second.url, id);
    const turn = call(second.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'consume' }).catch(() => undefined);
    await sse.untilEvent('run_started');
    sse.close();
    await second.kill('SIGKILL');
    await turn;

    // Phase 3: restart; one turn delivers everything once, the next delivers nothing.
    await writeRealmConfig(dir.path, realm, { providers: { scripted: { mode: 'echo' } } });
    server = await startServerProcess({ stateRoot: dir.path, realm, t });
    assert.deepEqual(await delivered(server.url, id), [], 'the killed turn committed nothing');
    const done = await call(server.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'consume' });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const got = await delivered(server.url, id);
    const counts = new Map<number, number>();
    for (const n of got) counts.set(n, (counts.get(n) ?? 0) + 1);
    for (const [n, c] of counts) assert.equal(c, 1, `event ${n} delivered ${c} times`);
    for (const n of acked) assert.ok(counts.has(n), `acknowledged event ${n} lost`);
    for (const n of counts.keys()) assert.ok(acked.has(n) || uncertain.has(n), `event ${n} was never sent`);
    assert.equal(acked.size + uncertain.size, EVENTS);
    assert.ok(got.length >= acked.size && got.length <= EVENTS);
    const again = await call(server.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'anything new?' });
    assert.equal(again.status, 200);
    assert.equal((await delivered(server.url, id)).length, got.length, 'nothing is delivered twice');
    t.diagnostic(`acked ${acked.size}, uncertain ${uncertain.size}, delivered ${got.length}`);
    await server.kill('SIGKILL');
  });
});
