// test/integration/corrupt-records.test.ts: a stored record that no longer matches its schema, met by the
// real server. A strict read (a LangGraph thread) answers 503 SESSION_STORE_ERROR naming the namespace and
// key while the server goes on serving; a lookup that fails closed (an inbound API key) treats the corrupt
// record as no key (401) while the realm's other keys still work. The records are corrupted straight in
// the realm's store between two starts, as a bug, a hand edit or a foreign writer would.
import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import pino from 'pino';
import { createKey } from '../../actors/inbound-auth/key-store.ts';
import { INBOUND_KEYS_NS } from '../../contracts/inbound-auth.ts';
import { call, startApp, type TestApp } from '../helpers/app.ts';
import { withRealmStore } from '../helpers/realm-store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REALM = 'corrupt-realm';

/** A server on `root`'s realm (started again on the same root after the store was changed). */
function boot(t: TestContext, root: string, o: { config?: Record<string, unknown>; lines?: string[] } = {}): Promise<TestApp> {
  return startApp(t, [], {
    stateRoot: root,
    realm: REALM,
    ...(o.config ? { config: o.config } : {}),
    ...(o.lines ? { logger: capturingLogger(o.lines) } : {}),
  });
}

/** A pino logger writing every line into `lines`. */
function capturingLogger(lines: string[]): pino.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return pino({ level: 'info' }, sink);
}

describe('corrupt stored records', () => {
  it('a corrupt LangGraph thread is refused with 503 SESSION_STORE_ERROR naming it; the server goes on', async (t) => {
    const dir = await tmpDir('warren-corrupt-thread-');
    t.after(() => dir.cleanup());
    const first = await boot(t, dir.path);
    const made = await call(first.url, 'POST', '/threads', { metadata: { team: 'a' } });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const id = made.body.thread_id as string;
    assert.deepEqual((await call(first.url, 'GET', `/threads/${id}`)).body.metadata, { team: 'a' });
    await first.close();

    await withRealmStore(dir.path, REALM, (store) =>
      store.commit([{ op: 'putRecord', ns: 'langgraph_thread', key: id, value: { thread_id: id, metadata: 'team a' } }]),
    );

    const lines: string[] = [];
    const second = await boot(t, dir.path, { lines });
    const r = await call(second.url, 'GET', `/threads/${id}`);
    assert.equal(r.status, 503, JSON.stringify(r.body));
    assert.equal(r.body.code, 'SESSION_STORE_ERROR');
    assert.match(r.body.error, new RegExp(`LangGraph thread record langgraph_thread/${id} does not match its schema`));
    // The refusal is in the server's log, naming the record.
    const refusals = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'stored record refused');
    assert.deepEqual(
      refusals.map((l) => [l.ns, l.key, l.kind]),
      [['langgraph_thread', id, 'LangGraph thread']],
    );
    // Only that record is refused: the server serves the rest.
    assert.equal((await call(second.url, 'GET', '/health')).status, 200);
    const other = await call(second.url, 'POST', '/threads', { metadata: {} });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal((await call(second.url, 'GET', `/threads/${other.body.thread_id}`)).status, 200);
  });

  it('a corrupt API key fails closed: its token is unknown (401), the other keys still authenticate', async (t) => {
    const dir = await tmpDir('warren-corrupt-key-');
    t.after(() => dir.cleanup());
    const { good, bad } = await withRealmStore(dir.path, REALM, async (store) => {
      const good = await createKey(store, { name: 'good', scopes: ['admin'] }, Date.now(), 1024);
      const bad = await createKey(store, { name: 'bad', scopes: ['admin'] }, Date.now(), 1024);
      await store.commit([{ op: 'putRecord', ns: INBOUND_KEYS_NS, key: bad.record.id, value: { ...bad.record, scopes: ['root'] } }]);
      return { good, bad };
    });

    const app = await boot(t, dir.path, { config: { rest: { auth: 'required' } } });
    const ok = await call(app.url, 'GET', '/sessions', undefined, { authorization: `Bearer ${good.token}` });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const refused = await call(app.url, 'GET', '/sessions', undefined, { authorization: `Bearer ${bad.token}` });
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    assert.match(refused.body.error, /unknown API key/);
  });
});
