// test/integration/sqlite-realm.test.ts: two real `warren serve` processes on one sqlite realm (SPEC.md
// "Limits": SQLite realms are the standard multi-process mode). Both serve reads of each other's sessions and
// a session created by one takes its next turn in the other, on one contiguous ledger. (The store-level
// CONFLICT for a stale writer is proven in test/storage/sqlite-store.test.ts.)
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { call } from '../helpers/app.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REALM = 'shared-sqlite';

const texts = (messages: Array<{ role: string; content?: string; blocks?: Array<{ data: { text?: string } }> }>): string[] =>
  messages.map((m) => (m.role === 'user' ? `user:${m.content}` : `assistant:${m.blocks?.map((b) => b.data.text).join('')}`));

describe('two processes on one sqlite realm', () => {
  it('both serve reads, and a session created in one takes its next turn in the other', { timeout: 60_000 }, async (t) => {
    const dir = await tmpDir('warren-sqlite-realm-');
    t.after(() => dir.cleanup());
    // Lossless ledger mode: committed deltas stay, so the shared ledger's seqs are checked one by one.
    await writeRealmConfig(dir.path, REALM, {
      ledger: { keep_text_deltas: true },
      providers: { scripted: { replies: [{ text: 'r1' }, { text: 'r2' }, { text: 'r3' }, { text: 'r4' }] } },
    });
    const a = await startServerProcess({ stateRoot: dir.path, realm: REALM, backend: 'sqlite', args: ['--http-transport', 'node'], t });
    const b = await startServerProcess({ stateRoot: dir.path, realm: REALM, backend: 'lmdb', args: ['--http-transport', 'node'], t });
    for (const server of [a, b])
      assert.equal((await call(server.url, 'GET', '/config')).body.backend, 'sqlite', 'the manifest pins sqlite');

    const created = await call(a.url, 'POST', '/sessions', { prompt: 'one', provider: 'scripted' });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    const viaB = await call(b.url, 'GET', `/sessions/${id}/history`);
    assert.equal(viaB.status, 200, JSON.stringify(viaB.body));
    assert.deepEqual(texts(viaB.body.messages), ['user:one', 'assistant:r1']);

    // B continues the session A created.
    const second = await call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'two' });
    assert.equal(second.status, 200, JSON.stringify(second.body));

    // A serves the session B created, and lists both.
    const fromB = await call(b.url, 'POST', '/sessions', { prompt: 'from b', provider: 'scripted' });
    assert.equal(fromB.status, 200, JSON.stringify(fromB.body));
    const idB = fromB.body.session_id as string;
    assert.deepEqual(texts((await call(a.url, 'GET', `/sessions/${idB}/history`)).body.messages), ['user:from b', 'assistant:r2']);
    const listed = await call(a.url, 'GET', '/sessions');
    assert.deepEqual(new Set(listed.body.sessions.map((s: { session_id: string }) => s.session_id)), new Set([id, idB]));
    const ledger = await call(a.url, 'GET', `/sessions/${id}/ledger?limit=1000`);
    assert.equal(ledger.status, 200);
    const seqs = (ledger.body.events as Array<{ seq: number }>).map((e) => e.seq);
    assert.deepEqual(
      seqs,
      seqs.map((_, i) => i + 1),
      'both processes appended one contiguous ledger',
    );
    assert.ok(seqs.length > 0);
  });
});
