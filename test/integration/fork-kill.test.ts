// kill -9 of a real `warren serve` while a fork of a large session is in flight leaves no half session.
// A fork is one atomic store commit (its record, the history prefix and the kept turns' recordings), so
// after the restart each fork the server answered is there whole, and a fork cut off is absent or whole:
// its rows match its record and equal a prefix of the source, never part of one. The kill moments are
// fractions of a measured fork's duration (as durability-kill.test.ts plans its kills): there is no
// event inside a fork to wait for.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { call } from '../helpers/app.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';

async function rows(url: string, id: string): Promise<unknown[]> {
  const out: unknown[] = [];
  for (;;) {
    const r = await call(url, 'GET', `/sessions/${id}/history?offset=${out.length}&limit=1000`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    out.push(...(r.body.messages as unknown[]));
    if ((r.body.messages as unknown[]).length < 1000) return out;
  }
}

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex');

/** An exported session file grown to `turns` turns of `bytes` characters each (imported in one commit). */
function grownExport(exported: string, turns: number, bytes: number): string {
  const lines = exported
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);
  const seed = lines.filter((l) => l.type === 'row').map((l) => l.row);
  const at = seed[1].created_at as string;
  const grown = [seed[0]];
  for (let i = 0; i < turns; i++) {
    const text = `turn ${i} ${'x'.repeat(bytes)}`;
    grown.push({ role: 'user', content: text, created_at: at, transcript_role: 'conversational' });
    grown.push({ role: 'block_assistant', blocks: [{ block_type: 'text', data: { text } }], stop_reason: 'end_turn', created_at: at });
  }
  const record = lines.find((l) => l.type === 'session')!.record;
  return [
    lines[0],
    { type: 'session', record: { ...record, message_count: grown.length } },
    ...grown.map((row, index) => ({ type: 'row', index, row })),
  ]
    .map((l) => JSON.stringify(l))
    .join('\n');
}

describe('fork across kill -9', () => {
  it('forks of a large session killed in flight are absent or whole after a restart', { timeout: 180_000 }, async (t) => {
    const dir = await tmpDir('warren-fork-kill-');
    t.after(() => dir.cleanup());
    const realm = 'fork-kill';
    const TURNS = 300;
    await writeRealmConfig(dir.path, realm, { providers: { scripted: { replies: [] } }, limits: { max_body_bytes: 64 * 1024 * 1024 } });
    const first = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
    const seed = (await call(first.url, 'POST', '/sessions', { prompt: 'seed', provider: 'scripted', system_prompt: 'S' })).body.session_id;
    const file = grownExport(await (await fetch(`${first.url}/sessions/${seed}/export`)).text(), TURNS, 16_000);
    const imported = await call(first.url, 'POST', '/sessions/import?new_id=true', file);
    assert.equal(imported.status, 200, JSON.stringify(imported.body));
    const id = imported.body.session_id as string;
    const source = await rows(first.url, id);
    assert.equal(source.length, 1 + 2 * TURNS);

    // Two forks measure how long one takes (each reads ~10 MB and commits it again); then three rounds each
    // start a fork and kill the server at 30 %, 60 % and 90 % of that time, and restart.
    const answered: Array<{ session_id: string; message_count: number }> = [];
    const fork = async (url: string, atTurn: number) => {
      const r = await call(url, 'POST', `/sessions/${id}/fork`, { at_turn: atTurn });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      answered.push(r.body);
    };
    const t0 = performance.now();
    await fork(first.url, TURNS);
    await fork(first.url, TURNS - 1);
    const forkMs = (performance.now() - t0) / 2;
    let server = first;
    const outcomes: string[] = [];
    for (const [round, fraction] of [0.3, 0.6, 0.9].entries()) {
      const inFlight = fork(server.url, TURNS - 2 - round).then(
        () => 'answered',
        () => 'cut off',
      );
      await sleep(forkMs * fraction);
      await server.kill('SIGKILL');
      outcomes.push(await inFlight);
      server = await startServerProcess({ stateRoot: dir.path, realm, backend: 'lmdb', t });
      const forks = (await call(server.url, 'GET', `/sessions?label=warren.forked_from=${id}&limit=1000`)).body.sessions as Array<{
        session_id: string;
        message_count: number;
      }>;
      const present = new Set(forks.map((f) => f.session_id));
      for (const f of answered) assert.ok(present.has(f.session_id), `answered fork ${f.session_id} survived`);
      for (const f of forks) {
        const forked = await rows(server.url, f.session_id);
        assert.equal(forked.length, f.message_count, `round ${round}: fork ${f.session_id}: its rows match its record`);
        assert.equal((f.message_count - 1) % 2, 0, 'a whole number of turns');
        assert.equal(digest(forked), digest(source.slice(0, f.message_count)), 'and equal the source prefix');
      }
      outcomes[round] += `, ${forks.length - answered.length} more present`;
    }
    t.diagnostic(`one fork ${Math.round(forkMs)} ms; rounds: ${outcomes.join('; ')}`);
    // The source is untouched, and a fork after the restart works.
    assert.equal(digest(await rows(server.url, id)), digest(source));
    const after = await call(server.url, 'POST', `/sessions/${id}/fork`, { at_turn: 2 });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.equal(after.body.message_count, 5);
  });
});
