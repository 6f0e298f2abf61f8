// kill -9 of a real `warren serve` while its turns compact on every boundary (tiny threshold), then a
// restart on the same realm: the transcript is always either the old one or the new one, never a mix
// (system row, at most one compaction summary right after it, then whole turns in increasing order,
// and message_count equal to the rows). The kill moments are random; the invariant holds at every one.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

const KILLS = 4;

type Row = { role: string; content?: unknown; transcript_role?: string };

async function json(url: string, method = 'GET', body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: body ? { 'content-type': 'application/json' } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function checkWellFormed(rows: Row[], messageCount: number, where: string): { summaries: number } {
  assert.equal(messageCount, rows.length, `${where}: message_count matches the rows`);
  assert.equal(rows[0]?.role, 'system', `${where}: system row first`);
  let i = 1;
  let summaries = 0;
  if (rows[i]?.transcript_role === 'compaction_summary') {
    summaries++;
    i++;
  }
  let last = -1;
  for (; i < rows.length; i++) {
    const r = rows[i];
    assert.equal(r.role, 'user', `${where}: row ${i} starts a turn`);
    assert.notEqual(r.transcript_role, 'compaction_summary', `${where}: a summary only at the top`);
    const n = Number(String(r.content).slice(1));
    assert.ok(n > last, `${where}: turns in increasing order (${n} after ${last})`);
    last = n;
    i++;
    assert.equal(rows[i]?.role, 'block_assistant', `${where}: turn ${n} has its reply`);
  }
  return { summaries };
}

describe('compaction under kill -9', () => {
  it('leaves the old or the new transcript, never a mix', { timeout: 120_000 }, async (t) => {
    const dir = await tmpDir('warren-compaction-kill-');
    t.after(() => dir.cleanup());
    const realm = 'compaction-kill';
    const replies = Array.from({ length: 2000 }, (_, i) => ({ text: `r${i} ${'words '.repeat(10)}`, delay_ms: i % 4 }));
    await writeRealmConfig(dir.path, realm, {
      providers: { scripted: { replies } },
      compaction: { auto_compact_threshold: 60, min_turns_between_compactions: 0, recent_turn_budget: 2 },
    });
    let server: ServerProcess = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const created = await json(`${server.url}/sessions`, 'POST', {
      prompt: 't0',
      provider: 'scripted',
      model: 'kill-model',
      max_tokens: 16,
      system_prompt: 'SYS',
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const id = created.body.session_id as string;
    let n = 1;
    let summaries = 0;
    for (let k = 0; k < KILLS; k++) {
      // A few turns that each compact, then one more in flight when the kill lands.
      for (let i = 0; i < 3; i++) {
        const r = await json(`${server.url}/sessions/${id}/messages`, 'POST', { session_id: id, prompt: `t${n++}` });
        assert.equal(r.status, 200, JSON.stringify(r.body));
      }
      const inFlight = json(`${server.url}/sessions/${id}/messages`, 'POST', { session_id: id, prompt: `t${n++}` }).catch(() => undefined);
      await sleep(k * 3);
      await server.kill('SIGKILL');
      await inFlight;
      server = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
      const history = await json(`${server.url}/sessions/${id}/history`);
      assert.equal(history.status, 200);
      summaries += checkWellFormed(history.body.messages, history.body.message_count, `kill ${k}`).summaries;
      // The session keeps working after the restart (or is held for recovery: then nothing else to do).
      const next = await json(`${server.url}/sessions/${id}/messages`, 'POST', { session_id: id, prompt: `t${n++}` });
      assert.ok(next.status === 200 || next.status === 409, JSON.stringify(next.body));
    }
    assert.ok(summaries > 0, 'compaction ran');
    await server.kill('SIGKILL');
  });
});
