// A full disk degrades the server, never kills it, on both transports and every backend. The real server
// runs as a child process (`main.ts serve`) with its state root on a small tmpfs the test mounts (root
// only; otherwise skipped with the reason). Under a steady load of turns the disk is filled: writes then
// answer 503 SESSION_STORE_ERROR naming the cause, /runtime/health is degraded with the reason, reads and
// SSE keep working and a create leaves no orphan. Space is freed: turns succeed again without a restart.
// After a restart every acknowledged turn is in its session's history, and no refused one is.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { call } from '../helpers/app.ts';
import { mountTmpfs, mountUnavailableReason } from '../helpers/mount.ts';
import { startServerProcess, writeRealmConfig, type ServerProcess } from '../helpers/server-process.ts';
import { openEvents } from '../helpers/sse-client.ts';
import { maySkip, skipUnlessRequired, uwsSkip } from '../helpers/absent.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const REALM = 'full-disk';
const DISK_BYTES = 8 * 1024 * 1024;
const SESSIONS = 3;
/** Ample text per turn, so the store needs fresh space every few turns. */
const PAD = 'p'.repeat(2_000);

/** Fills the file system holding `dir` until it refuses more (ENOSPC); returns the filler's path. */
async function fill(dir: string): Promise<string> {
  const file = join(dir, 'filler');
  const handle = await open(file, 'w');
  const block = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) await handle.write(block);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'ENOSPC');
  } finally {
    await handle.close().catch(() => undefined);
  }
  // The last partial page: fill it byte by byte is not needed, a 64 KiB refusal is full enough for 1 KiB writes.
  const small = await open(file, 'a');
  try {
    for (;;) await small.write(Buffer.alloc(1024, 2));
  } catch {
    // full
  } finally {
    await small.close().catch(() => undefined);
  }
  return file;
}

interface Ledger {
  acked: Map<string, string[]>;
  refused: string[];
  other: string[];
}

/** Every backend on the node transport, and lmdb on uWS; WARREN_LONG_CAMPAIGNS=1 runs every backend on both. */
const LONG = process.env.WARREN_LONG_CAMPAIGNS === '1';
for (const transport of ['node', 'uws'] as const) {
  for (const backend of ['lmdb', 'jsonl', 'sqlite', 'memory'] as const) {
    if (transport === 'uws' && backend !== 'lmdb' && !LONG) continue;
    const skip = skipUnlessRequired('full-disk', mountUnavailableReason()) || (transport === 'uws' ? uwsSkip() : false);
    describe(`full disk (${transport}, ${backend})`, { skip: skip ?? false }, () => {
      it(
        'degrades, keeps serving reads and SSE, recovers without a restart, and loses no acknowledged turn',
        { timeout: SLOW_TEST_MS },
        async (t) => {
          const disk = await mountTmpfs(t, DISK_BYTES);
          if ('skip' in disk) {
            if (!maySkip('full-disk'))
              assert.fail(
                `full-disk could not mount its tmpfs in CI: ${disk.skip} (set WARREN_TEST_ABSENT=full-disk if absent on purpose)`,
              );
            t.skip(disk.skip);
            return;
          }
          await writeRealmConfig(disk.path, REALM, { providers: { scripted: { mode: 'echo' } } });
          const serve = (): Promise<ServerProcess> =>
            startServerProcess({
              stateRoot: disk.path,
              realm: REALM,
              backend,
              args: ['--http-transport', transport],
              t,
            });
          const server = await serve();
          const url = server.url;
          const ids: string[] = [];
          const book: Ledger = { acked: new Map(), refused: [], other: [] };
          for (let i = 0; i < SESSIONS; i++) {
            const r = await call(url, 'POST', '/sessions', { prompt: `open ${i}`, provider: 'scripted' });
            assert.equal(r.status, 200, JSON.stringify(r.body));
            ids.push(r.body.session_id);
            book.acked.set(r.body.session_id, [`open ${i}`]);
          }
          const watcher = await openEvents(url, ids[0]);
          t.after(() => watcher.close());

          let turn = 0;
          /** One round: a continue on every session at once; every answer is booked. */
          const round = async (): Promise<{ ok: number; refused: number }> => {
            let ok = 0;
            let refused = 0;
            await Promise.all(
              ids.map(async (id) => {
                const prompt = `t${turn++} ${PAD}`;
                const r = await call(url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt });
                if (r.status === 200) {
                  assert.equal(r.body.text, `echo: ${prompt}`);
                  book.acked.get(id)!.push(prompt);
                  ok++;
                } else if (r.status === 503 && r.body.code === 'SESSION_STORE_ERROR') {
                  assert.match(r.body.error, /no space left on device|input\/output error/, r.body.error);
                  book.refused.push(prompt);
                  refused++;
                } else {
                  book.other.push(`${r.status} ${JSON.stringify(r.body)}`);
                }
              }),
            );
            return { ok, refused };
          };

          for (let i = 0; i < 3; i++) assert.equal((await round()).ok, SESSIONS);
          const filler = await fill(disk.path);
          // The load goes on until the full disk shows (lmdb first reuses free pages inside its file).
          let refusedRounds = 0;
          for (let i = 0; i < (backend === 'memory' ? 3 : 400) && refusedRounds < 2; i++) {
            if ((await round()).refused > 0) refusedRounds++;
          }
          if (backend === 'memory') {
            // The memory backend writes nothing to disk: a full disk changes nothing.
            assert.equal(book.refused.length, 0);
          } else {
            assert.ok(book.refused.length > 0, 'the full disk refused writes');
            // Health reflects the latest commit (lmdb may still fit a small one into a freed page): read it
            // right after a refused one, with no other write in between.
            let refusedNow = false;
            for (let i = 0; i < 50 && !refusedNow; i++) {
              const prompt = `single ${i} ${PAD}`;
              const r = await call(url, 'POST', `/sessions/${ids[0]}/messages`, { session_id: ids[0], prompt });
              if (r.status === 200) book.acked.get(ids[0])!.push(prompt);
              else refusedNow = r.status === 503;
            }
            assert.ok(refusedNow, 'a single turn is refused while the disk is full');
            const health = await call(url, 'GET', '/runtime/health');
            assert.equal(health.body.status, 'degraded');
            assert.equal(health.body.checks.session_durability, 'degraded');
            assert.match(health.body.reasons.session_durability, /store writes failing: .*(no space left on device|input\/output error)/);
            const before = (await call(url, 'GET', '/sessions')).body.sessions.length;
            const created = await call(url, 'POST', '/sessions', { prompt: `doomed ${PAD}`, provider: 'scripted' });
            const after = (await call(url, 'GET', '/sessions')).body.sessions.length;
            if (created.status === 200) {
              // It fit into a freed page after all: then it is a real session.
              assert.equal(after, before + 1);
              ids.push(created.body.session_id);
              book.acked.set(created.body.session_id, [`doomed ${PAD}`]);
            } else {
              assert.equal(created.status, 503, JSON.stringify(created.body));
              assert.equal(after, before, 'a refused create leaves no orphan session');
            }
          }
          assert.equal(server.hasExited(), false, 'the server is still running');
          // Reads keep working, and the stream stays open and live.
          for (const id of ids) {
            const h = await call(url, 'GET', `/sessions/${id}/history`);
            assert.equal(h.status, 200);
            assert.equal(h.body.message_count, 2 * book.acked.get(id)!.length);
          }
          assert.equal(watcher.ended, false);
          const seen = watcher.envelopes().length;

          await rm(filler);
          const resumed = await round();
          assert.equal(resumed.ok, SESSIONS, `writes succeed again once space returns: ${JSON.stringify(book.other)}`);
          for (let i = 0; i < 2; i++) assert.equal((await round()).ok, SESSIONS);
          await watcher.until(
            (w) => w.envelopes().length > seen && w.envelopes().some((e) => e.payload.type === 'run_completed'),
            'live events after recovery',
          );
          assert.equal((await call(url, 'GET', '/runtime/health')).body.checks.session_durability, 'ok');
          assert.deepEqual(book.other, [], 'every answer was a 200 or a store refusal');

          if (backend === 'memory') return;
          assert.equal((await server.kill('SIGTERM')).code, 0);
          const again = await serve();
          let total = 0;
          for (const id of ids) {
            const h = await call(again.url, 'GET', `/sessions/${id}/history`);
            assert.equal(h.status, 200);
            const users = (h.body.messages as Array<{ role: string; content: unknown }>)
              .filter((m) => m.role === 'user')
              .map((m) => m.content);
            assert.deepEqual(users, book.acked.get(id), `session ${id}: exactly the acknowledged turns, in order`);
            total += users.length;
          }
          t.diagnostic(`${transport}/${backend}: ${total} acknowledged turns kept, ${book.refused.length} refused while full`);
          const after = await call(again.url, 'POST', `/sessions/${ids[0]}/messages`, { session_id: ids[0], prompt: 'after restart' });
          assert.equal(after.status, 200, JSON.stringify(after.body));
        },
      );
    });
  }
}
