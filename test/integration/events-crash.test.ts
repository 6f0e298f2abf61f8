// Kill -9 on both transports (lmdb) and on the sqlite backend: the real server runs as a child process
// (`main.ts serve`, scripted provider from the realm's config.toml) while a client records the seqs it saw; after SIGKILL and a
// restart on the same realm, a reconnect with Last-Event-ID replays exactly the missing events and the
// ledger route shows one contiguous sequence that holds everything the client saw.
// The flood comes from a loopback Anthropic-wire fake that the test drives delta by delta, so every
// step is gated on what a client observed, never on how fast the server happens to stream.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { call } from '../helpers/app.ts';
import { deferred } from '../helpers/gates.ts';
import { startServerProcess, writeRealmConfig } from '../helpers/server-process.ts';
import { openEvents, range, seqsOf, type Envelope } from '../helpers/sse-client.ts';
import { tmpDir } from '../helpers/tmp-dir.ts';
import { frame, sseHead, startFakeVendor, type FakeVendor } from '../providers/fake-vendor.ts';
import { SLOW_TEST_MS } from '../helpers/wait.ts';

const REALM = 'crash-realm';
const MODEL = 'claude-sonnet-4-6';

const ev = (data: { type: string } & Record<string, unknown>): string => frame(data, data.type);
const HEAD = [
  ev({
    type: 'message_start',
    message: {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: MODEL,
      content: [],
      stop_reason: null,
      usage: { input_tokens: 1, output_tokens: 0 },
    },
  }),
  ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
].join('');
const delta = (text: string): string => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } });
const TAIL = [
  ev({ type: 'content_block_stop', index: 0 }),
  ev({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } }),
  ev({ type: 'message_stop' }),
].join('');

/**
 * An Anthropic-wire fake: the second call (the flood) streams only the deltas the test sends and never
 * ends (the server dies under it); every other call answers one short complete reply.
 */
async function floodVendor(): Promise<{ vendor: FakeVendor; flooding: Promise<void>; send(n: number): void }> {
  const started = deferred();
  let stream: ServerResponse | undefined;
  let sent = 0;
  const vendor = await startFakeVendor([
    (req, res) => {
      sseHead(res);
      if (vendor.requests.length === 2) {
        stream = res;
        res.write(HEAD);
        started.resolve();
        return;
      }
      res.end(HEAD + delta(`reply ${vendor.requests.length}`) + TAIL);
    },
  ]);
  return {
    vendor,
    flooding: started.promise,
    send(n) {
      let chunk = '';
      for (let i = 0; i < n; i++) chunk += delta(`k${sent++} `);
      stream!.write(chunk);
    },
  };
}

/** The whole ledger through the route, page by page. */
async function ledger(base: string, id: string): Promise<Envelope[]> {
  const all: Envelope[] = [];
  for (;;) {
    const page = await call(base, 'GET', `/sessions/${id}/ledger?after_seq=${all.at(-1)?.seq ?? 0}&limit=1000`);
    assert.equal(page.status, 200, JSON.stringify(page.body));
    all.push(...(page.body.events as Envelope[]));
    if (!page.body.has_more) return all;
  }
}

/** Both transports on the default lmdb realm; sqlite on one transport (the store, not the transport, is under test). */
const CASES = [
  ['uws', 'lmdb'],
  ['node', 'lmdb'],
  ['node', 'sqlite'],
] as const;

for (const [transport, backend] of CASES) {
  describe(`kill -9 and reconnect (${transport}, ${backend})`, () => {
    it('replays exactly the missing events after a restart, and the ledger stays contiguous', { timeout: SLOW_TEST_MS }, async (t) => {
      const dir = await tmpDir('warren-crash-');
      t.after(() => dir.cleanup());
      const flood = await floodVendor();
      t.after(() => flood.vendor.close());
      // Lossless ledger mode: the turns' deltas stay in the ledger after their commit.
      await writeRealmConfig(dir.path, REALM, { ledger: { keep_text_deltas: true } });
      const env = { ...process.env, ANTHROPIC_API_KEY: 'test-key', ANTHROPIC_BASE_URL: flood.vendor.url };
      const serve = () => startServerProcess({ stateRoot: dir.path, realm: REALM, backend, args: ['--http-transport', transport], env, t });

      const first = await serve();
      const created = await call(first.url, 'POST', '/sessions', { prompt: 'hi', model: MODEL });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const id = created.body.session_id as string;
      const before = await openEvents(first.url, id, {}, '?after_seq=0');
      const early = await openEvents(first.url, id, {}, '?after_seq=0');
      t.after(() => before.close());
      // The flood turn never answers: the server dies under it.
      call(first.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'flood' }).catch(() => {});
      await flood.flooding;
      flood.send(150);
      // `early` leaves while the flood is still going, so its reconnect must be served across the restart.
      await early.until((x) => x.envelopes().length >= 100, 'the flood is streaming');
      early.close();
      const earlyCount = early.envelopes().length;
      flood.send(600);
      await before.until((x) => x.envelopes().length >= earlyCount + 300, 'the flood is well past the early client');
      assert.deepEqual(await first.kill('SIGKILL'), { code: null, signal: 'SIGKILL' });
      await before.until((x) => x.ended, 'the stream died with the server');
      const seen = before.envelopes();
      const lastSeen = seen.at(-1)!.seq;
      assert.deepEqual(seqsOf(seen), range(1, lastSeen), 'the client saw a contiguous prefix');

      const second = await serve();
      assert.ok(second.logs.some((l) => l.msg === 'listening' && l.transport === transport));
      const all = await ledger(second.url, id);
      const last = all.at(-1)!.seq;
      assert.deepEqual(seqsOf(all), range(1, last), 'the ledger is contiguous after the crash');
      assert.ok(last >= lastSeen, 'everything the client saw live was durable');
      assert.deepEqual(all.slice(0, lastSeen), seen, 'the ledger holds exactly what the client saw');

      const after = await openEvents(second.url, id, { 'Last-Event-ID': String(lastSeen) });
      t.after(() => after.close());
      assert.equal(JSON.parse(after.frames[0].data).last_seq, last);
      await after.until((x) => x.envelopes().length === last - lastSeen, 'the replay');
      assert.deepEqual(after.envelopes(), all.slice(lastSeen), 'replayed: none missing, none duplicated');
      assert.equal(after.frames.filter((f) => f.event === 'stream_truncated').length, 0);
      t.diagnostic(`${transport} ${backend}: client saw ${lastSeen}, ledger had ${last}, replayed ${last - lastSeen}`);

      const earlySeen = seqsOf(early.envelopes());
      assert.deepEqual(early.envelopes(), all.slice(0, earlySeen.length));
      const rejoin = await openEvents(second.url, id, { 'Last-Event-ID': String(earlySeen.at(-1)) });
      await rejoin.until((x) => x.envelopes().length === last - earlySeen.length, "the early client's replay");
      rejoin.close();
      assert.ok(last - earlySeen.length > 0);
      assert.deepEqual(rejoin.envelopes(), all.slice(earlySeen.length), 'the early client gets exactly what it missed');

      // The restarted session keeps its sequence: a new turn continues right after the ledger's tail.
      const next = await call(second.url, 'POST', `/sessions/${id}/messages`, { session_id: id, prompt: 'after' });
      if (next.status === 200) {
        const runs = (envs: Envelope[]) => envs.filter((e) => e.payload.type === 'run_completed').length;
        await after.until((x) => runs(x.envelopes()) === runs(all.slice(lastSeen)) + 1, 'the new turn');
        assert.deepEqual(seqsOf(after.envelopes()), range(lastSeen + 1, after.envelopes().at(-1)!.seq));
        assert.deepEqual(await ledger(second.url, id), [...seen, ...after.envelopes()]);
      } else {
        t.diagnostic(`after restart the session answered ${next.status}: ${JSON.stringify(next.body)}`);
      }
      assert.equal((await second.kill('SIGTERM')).code, 0, 'a clean shutdown after the restart');
    });
  });
}
