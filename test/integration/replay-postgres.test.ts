// Export and import round-trip on the postgres backend (a postgres realm is a cluster realm; one node
// here): a session recorded on lmdb imports into postgres with a byte-identical transcript, re-exports the
// same rows, recordings and ledger, replays identical and forks there; exported again from postgres it
// imports back into lmdb identical. A committed wire fixture replays identical on postgres too. In a cluster
// of two nodes, a fork, a replay and an export asked of the node that does not own the session work
// (forwarded to the owner), and the fork and its source continue independently.
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

    it('a cluster of two nodes: fork, replay and export through the node that does not own the session', async (t) => {
      const url = await server.createDatabase();
      const a = await startClusterNode(t, url);
      const b = await startClusterNode(t, url);
      const created = await call(a.url, 'POST', '/sessions', { prompt: 'first' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      for (const prompt of ['second', 'third'])
        assert.equal((await call(a.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt })).status, 200);
      const forwarded = async () => (await call(b.url, 'GET', '/runtime/host_info')).body.cluster.forwarded_requests as number;
      const before = await forwarded();

      // B does not own the session: the fork is forwarded to A and holds the prefix through turn 2.
      const fork = await call(b.url, 'POST', `/sessions/${id}/fork`, { at_turn: 2 });
      assert.equal(fork.status, 200, JSON.stringify(fork.body));
      const forkId = fork.body.session_id as string;
      const source = JSON.parse(await history(b, id)) as Array<{ content: unknown }>;
      assert.equal(source.length, 6);
      assert.equal(await history(a, forkId), JSON.stringify(source.slice(0, 4)), 'the fork holds the prefix, read on A');
      assert.equal(await history(b, forkId), JSON.stringify(source.slice(0, 4)), 'and on B');
      // Both continue independently, each through the other node.
      const onFork = await call(a.url, 'POST', `/sessions/${forkId}/messages`, { session_id: forkId, prompt: 'fork path' });
      assert.equal(onFork.body.text, 'echo: fork path', JSON.stringify(onFork.body));
      const onSource = await call(b.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'source path' });
      assert.equal(onSource.body.text, 'echo: source path', JSON.stringify(onSource.body));
      const forkRows = JSON.parse(await history(b, forkId)) as unknown[];
      const sourceRows = JSON.parse(await history(a, id)) as unknown[];
      assert.equal(forkRows.length, 6);
      assert.equal(sourceRows.length, 8);
      assert.deepEqual(forkRows.slice(0, 4), sourceRows.slice(0, 4));
      assert.ok(JSON.stringify(forkRows.slice(4)).includes('fork path') && !JSON.stringify(forkRows).includes('source path'));

      // Replays through B are identical and call no model on either node.
      const calls = a.provider.requests.length + b.provider.requests.length;
      for (const [sid, turns] of [
        [id, 4],
        [forkId, 3],
      ] as const) {
        const replay = await call(b.url, 'POST', `/sessions/${sid}/replay`);
        assert.equal(replay.status, 200, JSON.stringify(replay.body));
        assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
        assert.equal(replay.body.turns, turns);
      }
      assert.equal(a.provider.requests.length + b.provider.requests.length, calls, 'no model call');
      // The export is the same from either node.
      assert.deepEqual(body(await exported(b, forkId)), body(await exported(a, forkId)));
      assert.ok((await forwarded()) > before, 'B forwarded to the owner');
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
