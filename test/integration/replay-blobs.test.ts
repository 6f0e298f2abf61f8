// Recording blobs (tool definition lists, hook lists) are content-addressed and stored once per realm:
// two sessions offered the same tools write one blob, each session's export still carries it, and a
// session whose blobs an older version kept in its own namespace still exports and replays from them.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { RECORDING_BLOB_NS, recordingBlobNs } from '../../contracts/replay.ts';
import { call, startApp } from '../helpers/app.ts';
import { withRealmStore } from '../helpers/realm-store.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const REALM = 'blob-realm';

/** The blob lines of a session's export, by hash. */
async function exportedBlobs(url: string, id: string): Promise<Map<string, unknown>> {
  const res = await call(url, 'GET', `/sessions/${id}/export`);
  assert.equal(res.status, 200, String(res.body));
  const lines = String(res.body)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { type: string; key?: string; value?: unknown });
  return new Map(lines.filter((l) => l.type === 'blob').map((l) => [l.key!, l.value]));
}

describe('recording blobs', () => {
  it('two sessions with the same tools share one stored blob; exports carry it; older per-session blobs are still read', async (t) => {
    const dir = await tmpDir('warren-blobs-');
    t.after(() => dir.cleanup());
    const script = [{ text: 'one' }, { text: 'two' }, { text: 'three' }];
    const first = await startApp(t, script, { stateRoot: dir.path, realm: REALM });
    const ids: string[] = [];
    for (const prompt of ['a', 'b']) {
      const r = await call(first.url, 'POST', '/sessions', { prompt, enable_builtins: true });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      ids.push(r.body.session_id as string);
    }
    const [a, b] = [await exportedBlobs(first.url, ids[0]), await exportedBlobs(first.url, ids[1])];
    assert.ok(a.size >= 1, 'the export carries the tool list blob');
    assert.deepEqual([...a.keys()], [...b.keys()], 'both sessions name the same blobs');
    await first.close();

    // One stored copy, realm-wide; none in the sessions' own namespaces. Then move the blobs of the
    // second session where an older version kept them.
    await withRealmStore(dir.path, REALM, async (store) => {
      const shared = await store.listRecords(RECORDING_BLOB_NS);
      assert.deepEqual(shared.map((r) => r.key).sort(), [...a.keys()].sort());
      for (const id of ids) assert.deepEqual(await store.listRecords(recordingBlobNs(id)), []);
      await store.commit([
        ...shared.map((r) => ({ op: 'deleteRecord' as const, ns: RECORDING_BLOB_NS, key: r.key })),
        ...shared.map((r) => ({ op: 'putRecord' as const, ns: recordingBlobNs(ids[1]), key: r.key, value: r.value })),
      ]);
    });

    const second = await startApp(t, [{ text: 'two' }], { stateRoot: dir.path, realm: REALM });
    assert.deepEqual(await exportedBlobs(second.url, ids[1]), b, 'the older per-session blobs are exported');
    const replay = await call(second.url, 'POST', `/sessions/${ids[1]}/replay`, {});
    assert.equal(replay.status, 200, JSON.stringify(replay.body));
    assert.equal(replay.body.status, 'identical', JSON.stringify(replay.body));
  });
});
