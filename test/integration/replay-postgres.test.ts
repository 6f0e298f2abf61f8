// Export and import round-trip on the postgres backend (a postgres realm is a cluster realm; one node
// here): a session recorded on lmdb imports into postgres with a byte-identical transcript, re-exports the
// same rows, recordings and ledger, replays identical and forks there; exported again from postgres it
// imports back into lmdb identical. A committed wire fixture replays identical on postgres too.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { missingPart } from '../helpers/absent.ts';
import { call, startApp, startClusterNode, type TestApp } from '../helpers/app.ts';
import { testPostgres } from '../helpers/postgres.ts';
import { readFixture, RECORD_CONFIG } from '../helpers/replay-fixtures.ts';

const pgServer = await testPostgres();

const script = [{ tool_calls: [{ name: 'datetime', args: {}, id: 'dt_1' }] }, { text: 'one' }, { text: 'two' }, { text: 'three' }];

async function exported(app: TestApp, id: string): Promise<string> {
  const res = await fetch(`${app.url}/sessions/${id}/export`);
  assert.equal(res.status, 200);
  return res.text();
}

/** The lines after the header and session record (rows, recordings, blobs, ledger). */
const body = (text: string) =>
  text
    .split('\n')
    .slice(1)
    .filter((l) => !l.startsWith('{"type":"session"'));

async function history(app: TestApp, id: string): Promise<string> {
  const r = await call(app.url, 'GET', `/sessions/${id}/history?limit=1000`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return JSON.stringify(r.body.messages);
}

if (!pgServer.ok) {
  describe('replay on postgres', () => {
    it('needs a PostgreSQL server', ...missingPart('postgres', pgServer.reason));
  });
} else {
  const server = pgServer.server;

  describe('replay on postgres', () => {
    it('export from lmdb, import into postgres and back: byte-identical transcripts; replay and fork there', async (t) => {
      const source = await startApp(t, script);
      const created = await call(source.url, 'POST', '/sessions', { prompt: 'time?', system_prompt: 'S', enable_builtins: true });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      for (const prompt of ['second', 'third'])
        assert.equal((await call(source.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt })).status, 200);
      const file = await exported(source, id);
      const original = await history(source, id);

      const pg = await startClusterNode(t, await server.createDatabase());
      const imported = await call(pg.url, 'POST', '/sessions/import', file, { 'content-type': 'application/x-ndjson' });
      assert.equal(imported.status, 200, JSON.stringify(imported.body));
      assert.equal(imported.body.session_id, id);
      assert.equal(imported.body.recordings, 3);
      assert.equal(await history(pg, id), original, 'byte-identical transcript on postgres');
      const again = await exported(pg, id);
      assert.deepEqual(body(again), body(file), 'rows, recordings, blobs and ledger re-export identically');
      assert.equal(JSON.parse(again.split('\n')[0]).backend, 'postgres');
      assert.equal((await call(pg.url, 'POST', '/sessions/import', file)).status, 409, 'a second import of the id is a conflict');

      const replay = await call(pg.url, 'POST', `/sessions/${id}/replay`);
      assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
      assert.equal(replay.body.calls_checked, 4);
      assert.equal(pg.provider.requests.length, 0, 'no model call on postgres');
      const fork = await call(pg.url, 'POST', `/sessions/${id}/fork`, { at_turn: 2 });
      assert.equal(fork.status, 200, JSON.stringify(fork.body));
      const forkReplay = await call(pg.url, 'POST', `/sessions/${fork.body.session_id}/replay`);
      assert.equal(forkReplay.body.status, 'identical', JSON.stringify(forkReplay.body));
      assert.equal(forkReplay.body.turns, 2);

      // Back from postgres into a fresh lmdb realm.
      const back = await startApp(t, []);
      const res = await call(back.url, 'POST', '/sessions/import', again, { 'content-type': 'application/x-ndjson' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(await history(back, id), original, 'byte-identical transcript back on lmdb');
      assert.deepEqual(body(await exported(back, id)), body(file));
    });

    it('a committed wire fixture imports and replays identical on postgres', async (t) => {
      const pg = await startClusterNode(t, await server.createDatabase(), { config: RECORD_CONFIG });
      const res = await call(pg.url, 'POST', '/sessions/import?new_id=true', await readFixture('anthropic-tools-structured.jsonl'));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const replay = await call(pg.url, 'POST', `/sessions/${res.body.session_id}/replay`);
      assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
      assert.equal(replay.body.calls_checked, 5);
      assert.equal(pg.provider.requests.length, 0);
    });
  });
}
