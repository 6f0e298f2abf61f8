// Replay of sessions recorded on every provider wire: the real adapters talk to a loopback fake of the
// vendor's streaming wire (Anthropic Messages, OpenAI Responses, Gemini, OpenAI-compatible chat); each
// session has a tool loop (the shell tool appends to ran.txt), a structured-output turn and a plain turn.
// The replay is identical, opens no connection to the vendor and runs no tool.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { call } from '../helpers/app.ts';
import { recordWireSession, startWireServer, WIRE_CALLS, WIRES } from '../helpers/replay-fixtures.ts';

async function ranCount(dir: string): Promise<number> {
  try {
    return (await readFile(join(dir, 'ran.txt'), 'utf8')).split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

async function history(base: string, id: string): Promise<unknown[]> {
  const r = await call(base, 'GET', `/sessions/${id}/history?limit=1000`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return (r.body.messages as object[]).map((m) => ({ ...m, created_at: undefined }));
}

describe('replay on every provider wire', () => {
  for (const wire of WIRES) {
    it(`${wire}: a tool loop and structured output replay identical with no connection to the vendor`, async (t) => {
      const server = await startWireServer(wire);
      t.after(() => server.close());
      const vendor = server.vendor!;
      const url = server.app.url;
      const id = await recordWireSession(url, wire);
      assert.equal(vendor.requests.length, WIRE_CALLS, 'the recording talked to the vendor');
      assert.equal(await ranCount(server.stateRoot), 1, 'the tool ran once while recording');
      const connections = vendor.connections;
      assert.ok(connections > 0);

      const res = await call(url, 'POST', `/sessions/${id}/replay`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body.status, 'identical', JSON.stringify(res.body));
      assert.equal(res.body.turns, 3);
      assert.equal(res.body.calls_checked, WIRE_CALLS, 'every call checked, the extraction call included');
      assert.equal(res.body.tools_answered, 1);
      assert.equal(vendor.connections, connections, 'the replay opened no connection to the vendor');
      assert.equal(vendor.requests.length, WIRE_CALLS, 'and sent it nothing');
      assert.equal(await ranCount(server.stateRoot), 1, 'the replay ran no tool');
      assert.deepEqual(await history(url, res.body.replay_session_id), await history(url, id), 'the same transcript');
    });
  }
});
